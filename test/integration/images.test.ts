// The images of `npm run images`, each run as a real container with runc (as
// root): its own network namespace, the image's user, a read-only root file
// system and no capabilities, as config/'s Deployments ask. Builds the images
// first, which takes a few seconds when the cache has them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RUNTIME_FOLDERS } from '../../scripts/images/layout.js';
import { buildImages, ImageRunner, type BuiltImage } from '../support/images.js';
import { repoRoot } from '../support/paths.js';

const NAME = 'kuard.gateway.cluster-a.dev-team.clusters.xcc.test';

/** A host command in a container's network namespace, retried until it succeeds (the server is starting). */
async function eventually(attempt: () => Promise<string>, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** The UID and GID the kernel reports for a process: what a container really runs as. */
function idsOf(pid: number): { uid: string; gid: string } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return { uid: /^Uid:\s+(\d+)/m.exec(status)![1]!, gid: /^Gid:\s+(\d+)/m.exec(status)![1]! };
}

describe('images (npm run images) run with runc', () => {
  let images: Map<string, BuiltImage>;
  let runner: ImageRunner;
  let dir: string;

  beforeAll(async () => {
    images = await buildImages();
    runner = new ImageRunner(images);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capi-dns-images-test-'));
    fs.chmodSync(dir, 0o755);
  }, 600_000);
  afterAll(() => {
    runner?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lists every image with a versioned, content-derived tag', () => {
    const version = (JSON.parse(fs.readFileSync('package.json', 'utf8')) as { version: string }).version;
    expect([...images.keys()].sort()).toEqual([
      'capi-dns-controller',
      'coredns',
      'curl',
      'dns-server',
      'kuard',
      'mcs-netshoot',
      'mcs-socat',
      'pause',
    ]);
    // The stand-ins of the MCS conformance suite's images keep the names its manifests use.
    expect(images.get('mcs-socat')!.ref).toBe('docker.io/alpine/socat:1.7.4.4');
    expect(images.get('mcs-netshoot')!.ref).toBe('docker.io/nicolaka/netshoot:v0.15');
    for (const image of images.values()) {
      if (image.name.startsWith('mcs-')) continue;
      expect(fs.existsSync(image.archive)).toBe(true);
      const hex = image.digest.replace('sha256:', '');
      expect(image.ref).toMatch(new RegExp(`:[0-9.]+-${hex.slice(0, 12)}$`));
    }
    // The repositories config/ names, so that a kustomize images: entry only changes the tag.
    expect(images.get('capi-dns-controller')!.ref).toMatch(
      new RegExp(`^ghcr\\.io/capi-dns/capi-dns-controller:${version.replace(/\./g, '\\.')}-`),
    );
    expect(images.get('dns-server')!.ref).toMatch(/^ghcr\.io\/capi-dns\/dns-server:/);
    const deployment = fs.readFileSync('config/dns-server/deployment.yaml', 'utf8');
    expect(deployment).toContain(`image: ghcr.io/capi-dns/dns-server:${version}`);
  });

  it('the runtime images carry no shell, package manager, npm or corepack', async () => {
    const forbidden = [
      'bin/sh',
      'bin/bash',
      'bin/dash',
      'usr/bin/sh',
      'usr/bin/bash',
      'usr/bin/dash',
      'usr/bin/apt',
      'usr/bin/apt-get',
      'usr/bin/dpkg',
      'usr/local/bin/npm',
      'usr/local/bin/npx',
      'usr/local/bin/corepack',
      'usr/local/lib/node_modules/npm',
      'usr/local/lib/node_modules/corepack',
      'app/node_modules/npm',
      'app/node_modules/corepack',
    ];
    for (const name of ['capi-dns-controller', 'dns-server'] as const) {
      const rootfs = await runner.rootfs(name);
      expect(fs.existsSync(path.join(rootfs, 'usr/local/bin/node'))).toBe(true);
      expect(forbidden.filter((f) => fs.existsSync(path.join(rootfs, f)))).toEqual([]);
      // No executable anywhere on PATH but node.
      const onPath = ['bin', 'usr/bin', 'usr/local/bin', 'sbin', 'usr/sbin']
        .flatMap((d) =>
          fs.existsSync(path.join(rootfs, d))
            ? fs.readdirSync(path.join(rootfs, d)).map((f) => `${d}/${f}`)
            : [],
        )
        .filter((f) => {
          const st = fs.statSync(path.join(rootfs, f), { throwIfNoEntry: false });
          return st?.isFile() && (st.mode & 0o111) !== 0;
        });
      expect(onPath).toEqual(['usr/local/bin/node']);
    }
  });

  it('writes an SPDX SBOM beside each image listing its Debian, npm and other components', () => {
    for (const image of images.values()) {
      expect(image.sbom).toBe(image.archive.replace(/\.tar$/, '.spdx.json'));
      const doc = JSON.parse(fs.readFileSync(image.sbom, 'utf8')) as {
        spdxVersion: string;
        packages: { name: string; versionInfo: string; externalRefs: { referenceLocator: string }[] }[];
      };
      expect(doc.spdxVersion).toBe('SPDX-2.3');
      expect(doc.packages[0]?.versionInfo).toBe(image.digest);
    }
    const purls = (name: string) =>
      (
        JSON.parse(fs.readFileSync(images.get(name)!.sbom, 'utf8')) as {
          packages: { externalRefs: { referenceLocator: string }[] }[];
        }
      ).packages.map((p) => p.externalRefs[0]!.referenceLocator);
    const dns = purls('dns-server');
    expect(dns.some((p) => p.startsWith('pkg:deb/debian/libc6@'))).toBe(true);
    expect(dns.some((p) => p.startsWith('pkg:npm/%40kubernetes/client-node@'))).toBe(true);
    expect(dns.some((p) => p.startsWith('pkg:generic/node@v24'))).toBe(true);
    expect(dns.some((p) => p.startsWith('pkg:generic/capi-dns@'))).toBe(true);
    expect(dns.some((p) => p.startsWith('pkg:npm/jest@'))).toBe(false);
    expect(purls('coredns').some((p) => p.startsWith('pkg:golang/github.com/coredns/coredns@v'))).toBe(true);
    // The Node binary shipped is the pinned one (images/node-binary.sha256), and the SBOM says which.
    const pinned = fs
      .readFileSync(path.join(repoRoot(), 'images', 'node-binary.sha256'), 'utf8')
      .split(' ')[0];
    const node = (
      JSON.parse(fs.readFileSync(images.get('dns-server')!.sbom, 'utf8')) as {
        packages: { name: string; checksums?: { algorithm: string; checksumValue: string }[] }[];
      }
    ).packages.find((p) => p.name === 'node');
    expect(node?.checksums).toEqual([{ algorithm: 'SHA256', checksumValue: pinned }]);
  });

  it('images/*.Dockerfile copy the same dist/ folders into /app as the images', () => {
    for (const [component, folders] of Object.entries(RUNTIME_FOLDERS)) {
      const dockerfile = fs.readFileSync(`images/${component}.Dockerfile`, 'utf8');
      const copied = [...dockerfile.matchAll(/^COPY --from=build \/src\/dist\/(\S+) \.\/dist\/(\S+)$/gm)];
      expect(copied.map((m) => m[1])).toEqual(copied.map((m) => m[2]));
      expect(copied.map((m) => m[1]).sort()).toEqual([...folders].sort());
      for (const folder of folders) expect(dockerfile).toContain(`COPY ${folder} ./${folder}\n`);
      expect(dockerfile).toMatch(/^WORKDIR \/app$/m);
      expect(dockerfile).toMatch(/^USER 65532:65532$/m);
      // Node flags between (both from scripts/images/components.ts; dockerfile.test.ts checks them).
      expect(dockerfile).toMatch(
        new RegExp(`^ENTRYPOINT \\["node", .*"dist/${component}/main\\.js"\\]$`, 'm'),
      );
    }
  });

  it('the controller image starts its program: --help, and a clear error for a bad flag', async () => {
    const help = await runner.run('capi-dns-controller', { args: ['--help'] });
    expect(help).toMatchObject({ code: 0 });
    expect(help.stdout).toContain('--domain-suffix');
    const bad = await runner.run('capi-dns-controller', { args: ['--no-such-flag'] });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--no-such-flag');
  });

  it('the dns-server image serves a records file as the non-root user, on a read-only root', async () => {
    fs.writeFileSync(
      path.join(dir, 'records.yaml'),
      `apiVersion: connectivity.tanzu.vmware.com/v1alpha1
kind: DNSRecordSet
metadata: {name: gateway}
spec:
  records:
  - {name: "*.gateway.cluster-a.dev-team.clusters.xcc.test", type: A, values: ["10.0.0.5"]}
`,
    );
    // The Deployment's arguments, with the records file instead of the API server.
    const server = await runner.start('dns-server', {
      args: [
        '--listen=:5353',
        '--zone=xcc.test',
        '--health-listen=:8080',
        '--records-file=/records/records.yaml',
      ],
      mounts: { [dir]: '/records' },
    });
    expect(idsOf(server.pid)).toEqual({ uid: '65532', gid: '65532' });
    const answer = await eventually(async () => {
      const out = await runner.inNetwork(server, 'dig', [
        '@127.0.0.1',
        '-p',
        '5353',
        '+short',
        '+tries=1',
        '+time=1',
        NAME,
        'A',
      ]);
      if (!out.trim()) throw new Error('no answer yet');
      return out;
    });
    expect(answer.trim()).toBe('10.0.0.5');
    const ready = await runner.inNetwork(server, 'curl', [
      '-sS',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      'http://127.0.0.1:8080/readyz',
    ]);
    expect(ready).toBe('200');
    runner.kill(server, 'TERM');
    expect(await runner.stopped(server, 10_000)).toBe(true);
    expect(server.logs()).toContain('"msg":"serving"');
    // The image carries the batched UDP module and answered through it (ADR 0105).
    expect(server.logs()).not.toContain('batched native module is not usable');
  });

  it('the CoreDNS image binds port 53 as non-root with only NET_BIND_SERVICE, as its Deployment runs it', async () => {
    fs.writeFileSync(path.join(dir, 'Corefile'), '.:53 {\n  hosts {\n    192.0.2.53 probe.test\n  }\n}\n');
    const coredns = await runner.start('coredns', {
      args: ['-conf', '/etc/coredns/Corefile'],
      mounts: { [path.join(dir, 'Corefile')]: '/etc/coredns/Corefile' },
      capabilities: ['CAP_NET_BIND_SERVICE'],
    });
    expect(idsOf(coredns.pid).uid).toBe('65532');
    const answer = await eventually(() =>
      runner
        .inNetwork(coredns, 'dig', ['@127.0.0.1', '+short', '+tries=1', '+time=1', 'probe.test', 'A'])
        .then((out) => {
          if (!out.trim()) throw new Error(`no answer yet; CoreDNS said: ${coredns.logs()}`);
          return out;
        }),
    );
    expect(answer.trim()).toBe('192.0.2.53');
  });

  it('the curl image fetches from the kuard image in the same network namespace, as two containers of a pod', async () => {
    const kuard = await runner.start('kuard', { env: ['KUARD_CLUSTER=cluster-a'] });
    expect(idsOf(kuard.pid).uid).toBe('65532');
    await eventually(() => runner.inNetwork(kuard, 'curl', ['-sSf', 'http://127.0.0.1:8080/']));
    // What `kubectl run … --image=<curl> -- curl URL` runs: the args replace the image's Cmd.
    const result = await runner.run('curl', {
      args: ['curl', '-sS', `http://127.0.0.1:8080/ready`],
      networkOf: kuard,
    });
    expect(result).toMatchObject({ code: 0, stdout: 'kuard: hello from cluster-a (127.0.0.1:8080/ready)\n' });
    runner.kill(kuard, 'TERM');
    expect(await runner.stopped(kuard, 5_000)).toBe(true);
  });

  it('the pause image holds as PID 1 and exits at once on SIGTERM and on SIGINT', async () => {
    for (const signal of ['TERM', 'INT']) {
      const pause = await runner.start('pause');
      expect(idsOf(pause.pid)).toEqual({ uid: '65535', gid: '65535' });
      expect(await runner.stopped(pause, 300)).toBe(false);
      runner.kill(pause, signal);
      expect(await runner.stopped(pause, 2_000)).toBe(true);
    }
  });
});
