// npm run images: the container images of capi-dns and of its test
// environment, built without a container engine, as OCI archives in
// .cache/images/NAME.tar (importable with `ctr -n k8s.io images import`,
// copyable with `skopeo copy oci-archive:…`), listed in .cache/images/images.json.
//
//   node dist/scripts/images/main.js [--out DIR] [--only NAME,NAME]
//
// Reproducible: every time in the images is SOURCE_DATE_EPOCH (default 0),
// every file owned by root, layers packed in a fixed order, so the same inputs
// give the same digests; the tag is the project's version plus the start of
// the manifest digest. Runs as root (mmdebstrap extracts as root, and the
// CoreDNS binary gets its file capability with setcap).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BlobStore, hexOf, type Layer } from './layer.js';
import { debianLayer, nodeBinary, productionDependencies, run, sourceDir, stage } from './inputs.js';
import { APP_DIR } from './layout.js';
import { storeImage, writeArchive, type RuntimeSettings } from './oci.js';
import { debianComponents, npmComponents, spdxDocument, type SbomComponent } from './sbom.js';
import { COMPONENT_IMAGES, NONROOT as COMPONENT_NONROOT, type ComponentImage } from './components.js';

/** The repository of config/'s images: a build here is tagged so that a kustomize `images:` entry can point at it. */
export const REGISTRY = 'ghcr.io/capi-dns';
/** Images only the test environment uses: "localhost/" says they were built here and are never pulled. */
export const LOCAL = 'localhost/capi-dns';

/** One line of images.json. */
export interface BuiltImage {
  name: string;
  /** The reference it is imported under: REPOSITORY:VERSION-DIGESTPREFIX. */
  ref: string;
  /** Absolute path of the OCI archive. */
  archive: string;
  /** The manifest digest (what a registry reports after a push). */
  digest: string;
  /** Compressed size of its layers and config, in bytes. */
  size: number;
  /** Absolute path of its SPDX 2.3 SBOM (NAME.spdx.json beside the archive). */
  sbom: string;
}

interface ImagePlan {
  name: string;
  repository: string;
  version: string;
  /**
   * The exact reference, for a stand-in of someone else's image that a manifest we do not own
   * names (the MCS conformance suite's): REPOSITORY:VERSION-DIGESTPREFIX otherwise.
   */
  ref?: string;
  layers: () => Promise<Layer[]>;
  settings: RuntimeSettings;
}

const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const NONROOT = COMPONENT_NONROOT;

function parseArgs(argv: string[], root: string): { out: string; only?: Set<string> } {
  let out = path.join(root, '.cache', 'images');
  let only: Set<string> | undefined;
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split(/=(.*)/s, 2);
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (!v) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === '--out') out = path.resolve(value());
    else if (flag === '--only') only = new Set(value().split(','));
    else throw new Error(`unknown argument ${argv[i]}; usage: main.js [--out DIR] [--only NAME,NAME]`);
  }
  return { out, only };
}

function requireFile(file: string, hint: string): string {
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: ${hint}`);
  return file;
}

async function main(): Promise<void> {
  const started = Date.now();
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const args = parseArgs(process.argv.slice(2), root);
  if (process.getuid?.() !== 0) {
    throw new Error('building the images needs root (mmdebstrap extracts Debian packages as root; setcap)');
  }
  // Whatever the caller's umask, the directories made here are 755.
  process.umask(0o022);
  const epoch = Number(process.env.SOURCE_DATE_EPOCH ?? '0');
  if (!Number.isInteger(epoch) || epoch < 0)
    throw new Error(`SOURCE_DATE_EPOCH=${process.env.SOURCE_DATE_EPOCH}: want seconds since 1970`);

  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  const dist = path.join(root, 'dist');
  const built = 'run `npm run build` first';
  const coredns = requireFile(
    path.join(root, '.cache', 'bin', 'coredns'),
    'run `npm run testenv:build` first',
  );
  const store = new BlobStore(path.join(args.out, 'store'));
  fs.mkdirSync(args.out, { recursive: true });

  // A layer from a scratch directory that FILL populates.
  const staged = async (
    what: string,
    fill: (dir: string) => void,
    options: { capabilities?: boolean } = {},
  ): Promise<Layer> => {
    const dir = fs.mkdtempSync(path.join(store.tmpDir(), 'stage-'));
    try {
      fs.chmodSync(dir, 0o755);
      fill(dir);
      return await store.packDirectory(dir, epoch, { createdBy: what, ...options });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  // Layers shared by several images are made once per run.
  const once = <T>(make: () => Promise<T>): (() => Promise<T>) => {
    let made: Promise<T> | undefined;
    return () => (made ??= make());
  };

  const withComponents = async (layer: Promise<Layer>, components: SbomComponent[]): Promise<Layer> => ({
    ...(await layer),
    components,
  });
  const debian = async (name: string, packages: string[]) => {
    const layer = await debianLayer(store, root, name, packages, epoch);
    return { ...layer, components: debianComponents(layer.packages) };
  };
  // The extract variant runs no maintainer scripts, so update-alternatives' links (awk, nc) are made here.
  const alternatives = (links: [string, string][]) =>
    staged(`alternatives: ${links.map(([from, to]) => `${from} -> ${to}`).join(', ')}`, (dir) => {
      for (const [from, to] of links) {
        fs.mkdirSync(path.join(dir, path.dirname(from)), { recursive: true, mode: 0o755 });
        fs.symlinkSync(to, path.join(dir, from));
      }
    });
  const runtimeBase = once(() => debian('runtime', ['libc6', 'libstdc++6', 'libgcc-s1']));
  const curlBase = once(() => debian('curl', ['curl', 'ca-certificates']));
  const node = nodeBinary(root);
  const nodeLayer = once(() =>
    withComponents(
      staged(`Node.js ${node.version} (the node devDependency's binary)`, (dir) =>
        stage(dir, 'usr/local/bin/node', node.file, 0o755),
      ),
      [
        {
          name: 'node',
          version: node.version,
          purl: `pkg:generic/node@${node.version}`,
          sha256: node.sha256,
        },
      ],
    ),
  );
  const dependencies = once(async () => {
    const dir = productionDependencies(store, root);
    const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as Parameters<
      typeof npmComponents
    >[0];
    return withComponents(
      store.packDirectory(dir, epoch, { createdBy: 'npm ci --omit=dev --ignore-scripts' }),
      npmComponents(lock),
    );
  });
  // package.json carries "type": "module", which Node needs to load dist/ as ESM.
  const app = (component: string, files: readonly string[]): (() => Promise<Layer>) =>
    once(() =>
      withComponents(
        staged(`capi-dns ${component}: package.json, dist/{${files.join(',')}}`, (dir) => {
          stage(dir, `${APP_DIR.slice(1)}/package.json`, path.join(root, 'package.json'), 0o644);
          for (const file of files)
            stage(dir, `${APP_DIR.slice(1)}/dist/${file}`, requireFile(path.join(dist, file), built));
        }),
        [{ name: 'capi-dns', version: pkg.version, purl: `pkg:generic/capi-dns@${pkg.version}` }],
      ),
    );
  // A component's compiled modules (the dns-server's batched UDP module, ADR 0105), built by
  // `npm ci` on this machine: their architecture is the images'. Without it the dns-server would
  // answer through dgram, slower.
  const nativeLayer = (c: ComponentImage): (() => Promise<Layer>) =>
    once(() =>
      staged(`${c.component}: compiled modules (${c.nativeModules.map((m) => m.from).join(', ')})`, (dir) => {
        for (const m of c.nativeModules)
          stage(
            dir,
            `${APP_DIR.slice(1)}/${m.to}`,
            requireFile(path.join(root, m.from), 'run `npm ci` (it builds dns-server/serve/native)'),
            0o755,
          );
      }),
    );
  const nodeSettings = (
    entrypoint: string,
    ports: string[],
    title: string,
    nodeFlags: readonly string[] = [],
  ): RuntimeSettings => ({
    user: NONROOT,
    entrypoint: ['node', ...nodeFlags, entrypoint],
    workingDir: APP_DIR,
    env: [PATH_ENV, 'NODE_ENV=production'],
    exposedPorts: ports,
    labels: { 'org.opencontainers.image.title': title, 'org.opencontainers.image.version': pkg.version },
  });
  const corednsVersion = /CoreDNS-([0-9.]+)/.exec(
    execFileSync(coredns, ['-version'], { encoding: 'utf8' }),
  )?.[1];
  if (!corednsVersion) throw new Error(`${coredns} -version does not name a CoreDNS version`);

  // capi-dns's own images, as components.ts defines them (images/*.Dockerfile are generated from the same).
  const component = (c: ComponentImage): ImagePlan => ({
    name: c.name,
    repository: `${REGISTRY}/${c.name}`,
    version: pkg.version,
    layers: async () => [
      await runtimeBase(),
      await nodeLayer(),
      await dependencies(),
      await app(c.component, c.folders)(),
      ...(c.nativeModules.length ? [await nativeLayer(c)()] : []),
    ],
    settings: nodeSettings(c.main, c.ports, c.name, c.nodeFlags),
  });
  const plans: ImagePlan[] = [
    ...COMPONENT_IMAGES.map(component),
    {
      name: 'coredns',
      repository: `${LOCAL}/coredns`,
      version: corednsVersion,
      layers: async () => [
        await runtimeBase(),
        // Like CoreDNS's own image: a non-root user, and the binary allowed to
        // bind port 53 by its file capability (the kubeadm Deployment adds
        // NET_BIND_SERVICE to the bounding set; a non-root exec only gets it
        // through the file).
        await withComponents(
          staged(
            `CoreDNS ${corednsVersion} (test/testenv/build.sh), cap_net_bind_service=+ep`,
            (dir) => {
              stage(dir, 'coredns', coredns, 0o755);
              run('setcap', ['cap_net_bind_service=+ep', path.join(dir, 'coredns')]);
            },
            { capabilities: true },
          ),
          [
            {
              name: 'github.com/coredns/coredns',
              version: `v${corednsVersion}`,
              purl: `pkg:golang/github.com/coredns/coredns@v${corednsVersion}`,
            },
          ],
        ),
      ],
      settings: {
        user: NONROOT,
        entrypoint: ['/coredns'],
        workingDir: '/',
        env: [PATH_ENV],
        exposedPorts: ['53/tcp', '53/udp'],
        labels: {
          'org.opencontainers.image.title': 'coredns',
          'org.opencontainers.image.version': corednsVersion,
        },
      },
    },
    {
      name: 'kuard',
      repository: `${LOCAL}/kuard`,
      version: pkg.version,
      layers: async () => [
        await runtimeBase(),
        await nodeLayer(),
        await app('kuard stand-in', ['demo/kuard.js', 'demo/kuard-main.js'])(),
      ],
      settings: nodeSettings('dist/demo/kuard-main.js', ['8080/tcp'], 'kuard stand-in'),
    },
    {
      name: 'curl',
      repository: `${LOCAL}/curl`,
      version: pkg.version,
      // No entrypoint: `kubectl run … -- curl URL` sets the container's args,
      // which replace Cmd and run as given.
      layers: async () => [await curlBase()],
      settings: {
        user: NONROOT,
        cmd: ['curl', '--version'],
        workingDir: '/',
        env: [PATH_ENV],
        labels: { 'org.opencontainers.image.title': 'curl' },
      },
    },
    // Stand-ins for the two images the Multi-Cluster Services conformance suite names (no registry
    // serves them here): Debian packages with the tools its pods run, under the suite's exact names
    // so that its IfNotPresent pods find them on the nodes. Root, as the originals run (socat
    // listens on port 42).
    {
      name: 'mcs-socat',
      repository: 'docker.io/alpine/socat',
      version: '1.7.4.4',
      ref: 'docker.io/alpine/socat:1.7.4.4',
      layers: async () => [
        await debian('mcs-socat', ['dash', 'grep', 'mawk', 'coreutils', 'socat']),
        await alternatives([['usr/bin/awk', 'mawk']]),
      ],
      settings: {
        user: '0:0',
        entrypoint: ['socat'],
        workingDir: '/',
        env: [PATH_ENV],
        labels: { 'org.opencontainers.image.title': 'alpine/socat stand-in (Debian socat)' },
      },
    },
    {
      name: 'mcs-netshoot',
      repository: 'docker.io/nicolaka/netshoot',
      version: 'v0.15',
      ref: 'docker.io/nicolaka/netshoot:v0.15',
      layers: async () => [
        await debian('mcs-netshoot', [
          'dash',
          'grep',
          'mawk',
          'coreutils',
          'bind9-dnsutils',
          'netcat-openbsd',
        ]),
        await alternatives([
          ['usr/bin/awk', 'mawk'],
          ['bin/nc', 'nc.openbsd'],
        ]),
      ],
      settings: {
        user: '0:0',
        cmd: ['sh'],
        workingDir: '/',
        env: [PATH_ENV],
        labels: { 'org.opencontainers.image.title': 'nicolaka/netshoot stand-in (Debian dnsutils, netcat)' },
      },
    },
    {
      name: 'pause',
      repository: `${LOCAL}/pause`,
      version: pkg.version,
      layers: async () => [
        await staged('pause (scripts/images/pause.c, gcc -static)', (dir) => {
          const out = path.join(dir, 'pause');
          // No debug info and no paths of this machine: the same compiler gives the same binary.
          run('gcc', [
            '-static',
            '-Os',
            '-s',
            '-Wall',
            '-Wextra',
            '-o',
            out,
            path.join(sourceDir(root), 'pause.c'),
          ]);
          fs.chmodSync(out, 0o755);
        }),
      ],
      // Kubernetes' own pause image runs as 65535.
      settings: { user: '65535:65535', entrypoint: ['/pause'], workingDir: '/', env: [PATH_ENV] },
    },
  ];

  const unknown = [...(args.only ?? [])].filter((name) => !plans.some((plan) => plan.name === name));
  if (unknown.length)
    throw new Error(`--only ${unknown.join(',')}: no such image (${plans.map((p) => p.name).join(', ')})`);

  const listFile = path.join(args.out, 'images.json');
  const previous = readImagesFile(listFile);
  const results: BuiltImage[] = [];
  for (const plan of plans) {
    if (args.only && !args.only.has(plan.name)) continue;
    const layers = await plan.layers();
    const { manifest, config } = storeImage(store, plan.settings, layers, epoch, {});
    const ref = plan.ref ?? `${plan.repository}:${plan.version}-${hexOf(manifest.digest).slice(0, 12)}`;
    const archive = path.join(args.out, `${plan.name}.tar`);
    const size = config.size + layers.reduce((sum, layer) => sum + layer.size, 0);
    const before = previous.find((image) => image.name === plan.name);
    // The archive is a function of the manifest digest: the same digest means the same bytes.
    if (!(before?.digest === manifest.digest && before.archive === archive && fs.existsSync(archive))) {
      await writeArchive(
        store,
        manifest,
        [config.digest, ...layers.map((l) => l.digest)],
        ref,
        archive,
        epoch,
      );
    }
    // Beside the archive, from what each layer says it holds; dated like the image (reproducible).
    const sbom = path.join(args.out, `${plan.name}.spdx.json`);
    store.atomicWrite(
      sbom,
      `${JSON.stringify(
        spdxDocument(
          { name: plan.name, ref, digest: manifest.digest },
          layers.flatMap((l) => l.components ?? []),
          new Date(epoch * 1000),
        ),
        null,
        2,
      )}\n`,
    );
    results.push({ name: plan.name, ref, archive, digest: manifest.digest, size, sbom });
  }
  const kept = previous.filter((image) => !results.some((r) => r.name === image.name));
  const all = [...results, ...kept].sort(
    (a, b) => plans.findIndex((p) => p.name === a.name) - plans.findIndex((p) => p.name === b.name),
  );
  store.atomicWrite(listFile, `${JSON.stringify(all, null, 2)}\n`);

  for (const image of results) {
    process.stderr.write(
      `images: ${image.name.padEnd(20)} ${(image.size / 1e6).toFixed(1).padStart(6)} MB  ${image.ref}\n`,
    );
  }
  process.stderr.write(`images: ${listFile} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
}

function readImagesFile(file: string): BuiltImage[] {
  if (!fs.existsSync(file)) return [];
  try {
    const list = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
    return Array.isArray(list) ? (list as BuiltImage[]) : [];
  } catch {
    return [];
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`images: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
