# dns-server, the authoritative server of each workload cluster.
#   docker build -f build/dns-server.Dockerfile -t ghcr.io/capi-dns/dns-server:0.1.0 .
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
# What dist/dns-server/main.js loads at run time: its own folder, the shared
# contracts (api/) and the shared runtime (runtime/). npm run images builds the
# same /app layout (scripts/images/main.ts); keep the two in step.
COPY --from=build /src/dist/api ./dist/api
COPY --from=build /src/dist/runtime ./dist/runtime
COPY --from=build /src/dist/dns-server ./dist/dns-server
# The batched UDP module (ADR 0105), where dist/dns-server/serve/native-udp.js looks first.
COPY --from=build /src/dns-server/serve/native/build/Release/udp_batch.node ./dist/dns-server/serve/native/udp_batch.node
# The UID the manifests run as (runAsNonRoot needs a numeric user). It cannot
# bind port 53: the dns-server listens on 5353 and its Service maps 53 to it.
USER 65532:65532
EXPOSE 5353/udp 5353/tcp 8080/tcp
ENTRYPOINT ["node", "dist/dns-server/main.js"]
