# capi-dns-controller, the management-cluster operator.
#   docker build -f build/operator.Dockerfile -t ghcr.io/capi-dns/capi-dns-controller:0.1.0 .
# (from the repository root; the registry is a placeholder, see config/README.md)

# Compile the TypeScript with every dependency, dev ones included.
FROM node:24.21.0-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
# npm ci builds the dns-server's batched UDP module (package.json's install script; the
# image has python3, make and gcc for node-gyp).
COPY scripts/build-native.sh ./scripts/
COPY dns-server/serve/native ./dns-server/serve/native
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY api ./api
COPY runtime ./runtime
COPY operator ./operator
COPY dns-server ./dns-server
RUN npx tsc -p tsconfig.build.json

# Production dependencies only, resolved from the same lock file.
FROM node:24.21.0-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

FROM node:24.21.0-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
# package.json carries "type": "module", which Node needs to load dist/ as ESM.
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
# What dist/operator/main.js loads at run time: its own folder, the shared
# contracts (api/) and the shared runtime (runtime/). npm run images builds the
# same /app layout (scripts/images/main.ts); keep the two in step.
COPY --from=build /src/dist/api ./dist/api
COPY --from=build /src/dist/runtime ./dist/runtime
COPY --from=build /src/dist/operator ./dist/operator
# The UID the manifests run as (runAsNonRoot needs a numeric user).
USER 65532:65532
EXPOSE 8081
ENTRYPOINT ["node", "dist/operator/main.js"]
