// The images of `npm run images` for tests: build them (or reuse what the
// cache has), read .cache/images/images.json, and run one as a real container
// with runc, the way a kubelet's runtime would (its own network namespace, the
// image's user, a read-only root file system, capabilities dropped).
import { execFile, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './paths.js';
import type { BuiltImage } from '../../scripts/images/main.js';

/** One entry of .cache/images/images.json: the type scripts/images/main.ts writes it with. */
export type { BuiltImage };

const execFileAsync = promisify(execFile);

export type ImageName =
  | 'capi-dns-controller'
  | 'dns-server'
  | 'coredns'
  | 'kuard'
  | 'curl'
  | 'pause'
  /** Stand-ins of the MCS conformance suite's alpine/socat and nicolaka/netshoot. */
  | 'mcs-socat'
  | 'mcs-netshoot';

export function imagesFile(): string {
  return path.join(repoRoot(), '.cache', 'images', 'images.json');
}

/** The images by name, from images.json. */
export function readImages(file = imagesFile()): Map<string, BuiltImage> {
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: run "npm run images" first`);
  const list = JSON.parse(fs.readFileSync(file, 'utf8')) as BuiltImage[];
  return new Map(list.map((image) => [image.name, image]));
}

/**
 * Builds the images (dist/ and .cache/bin/coredns must exist: `npm test` and
 * `npm run images` make them) and returns images.json's entries. With nothing
 * changed this takes a couple of seconds.
 */
export async function buildImages(): Promise<Map<string, BuiltImage>> {
  const main = path.join(repoRoot(), 'dist', 'scripts', 'images', 'main.js');
  if (!fs.existsSync(main)) throw new Error(`${main} is missing: run "npm run build" first`);
  try {
    await execFileAsync(process.execPath, [main], { maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`building the images failed: ${e.stderr || e.message}`);
  }
  return readImages();
}

export interface ContainerOptions {
  /** Replaces the image's Cmd (appended to its Entrypoint), as a pod's `args` do. */
  args?: string[];
  /** Replaces Entrypoint and Cmd, as a pod's `command` does. */
  command?: string[];
  env?: string[];
  /** Host file or directory → path in the container, mounted read-only. */
  mounts?: Record<string, string>;
  /** Join the network namespace of this running container (a pod's containers share one). */
  networkOf?: Container;
  /** Capabilities left after dropping all, e.g. CAP_NET_BIND_SERVICE (CoreDNS's Deployment adds it). */
  capabilities?: string[];
}

export interface Container {
  id: string;
  /** PID of its first process, as the host sees it. */
  pid: number;
  /** Its output so far. */
  logs(): string;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs images with runc from bundles under one scratch directory; stop()
 * deletes every container it started and the directory, whatever failed.
 */
export class ImageRunner {
  private readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capi-dns-images-'));
  private readonly runcRoot = path.join(this.dir, 'runc');
  private readonly started = new Set<string>();
  private readonly unpacked = new Map<string, Promise<{ bundle: string; entrypoint: string[] }>>();
  private count = 0;

  constructor(private readonly images: Map<string, BuiltImage>) {
    if (process.getuid?.() !== 0) throw new Error('running images with runc needs root');
  }

  /**
   * A bundle for one container of IMAGE: its own config.json (umoci's, made
   * from the image config, then adjusted), on the image's root file system,
   * unpacked once and shared: every container's root is read-only.
   */
  async bundle(name: ImageName, options: ContainerOptions): Promise<{ id: string; bundle: string }> {
    const unpacked = await this.unpack(name);
    const id = `capi-dns-test-${process.pid}-${++this.count}-${name}`;
    const bundle = path.join(this.dir, id);
    fs.mkdirSync(bundle);
    const configFile = path.join(bundle, 'config.json');
    const spec = JSON.parse(
      fs.readFileSync(path.join(unpacked.bundle, 'config.json'), 'utf8'),
    ) as RuntimeSpec;
    spec.process.terminal = false;
    if (options.command) spec.process.args = [...options.command, ...(options.args ?? [])];
    else if (options.args) spec.process.args = [...unpacked.entrypoint, ...options.args];
    spec.process.env = [...spec.process.env.filter((e) => !e.startsWith('TERM=')), ...(options.env ?? [])];
    const caps = options.capabilities ?? [];
    spec.process.capabilities = {
      bounding: caps,
      effective: caps,
      permitted: caps,
      inheritable: [],
      ambient: [],
    };
    spec.process.noNewPrivileges = true;
    spec.root = { path: path.join(unpacked.bundle, 'rootfs'), readonly: true };
    for (const [source, destination] of Object.entries(options.mounts ?? {})) {
      spec.mounts.push({ destination, type: 'bind', source, options: ['rbind', 'ro'] });
    }
    if (options.networkOf) {
      spec.linux.namespaces = spec.linux.namespaces.map((ns) =>
        ns.type === 'network' ? { type: 'network', path: `/proc/${options.networkOf!.pid}/ns/net` } : ns,
      );
    }
    fs.writeFileSync(configFile, JSON.stringify(spec, null, 2));
    return { id, bundle };
  }

  /**
   * IMAGE's archive unpacked into a bundle: its layers extracted in order into
   * rootfs/ (GNU tar keeps owners and the file capabilities; our layers have no
   * whiteouts), and config.json from the image config by umoci's
   * runtime-config, which reads USER, ENTRYPOINT, CMD, ENV and WORKDIR as
   * runtimes do. (umoci unpack would do both but syncs every file: 20 s here.)
   */
  /** The image's root file system, unpacked (read it, never write it: containers share it). */
  async rootfs(name: ImageName): Promise<string> {
    return path.join((await this.unpack(name)).bundle, 'rootfs');
  }

  private unpack(name: ImageName): Promise<{ bundle: string; entrypoint: string[] }> {
    let unpacking = this.unpacked.get(name);
    if (!unpacking) {
      unpacking = (async () => {
        const image = this.images.get(name);
        if (!image) throw new Error(`no image ${name} in ${imagesFile()}`);
        const bundle = path.join(this.dir, `image-${name}`);
        const layout = `${bundle}-layout`;
        const rootfs = path.join(bundle, 'rootfs');
        fs.mkdirSync(layout, { recursive: true });
        fs.mkdirSync(rootfs, { recursive: true, mode: 0o755 });
        await execFileAsync('tar', ['-xf', image.archive, '-C', layout]);
        const { manifest, config } = imageOf(layout);
        for (const layer of manifest.layers) {
          const blob = path.join(layout, 'blobs', 'sha256', layer.digest.replace(/^sha256:/, ''));
          await execFileAsync('tar', [
            '-xzf',
            blob,
            '-C',
            rootfs,
            '--numeric-owner',
            '--same-permissions',
            '--xattrs',
            '--xattrs-include=security.capability',
          ]);
        }
        const tag = image.ref.slice(image.ref.lastIndexOf(':') + 1);
        await execFileAsync('umoci', [
          'raw',
          'runtime-config',
          '--image',
          `${layout}:${tag}`,
          '--rootfs',
          rootfs,
          path.join(bundle, 'config.json'),
        ]);
        fs.rmSync(layout, { recursive: true, force: true });
        return { bundle, entrypoint: config.config.Entrypoint ?? [] };
      })();
      this.unpacked.set(name, unpacking);
    }
    return unpacking;
  }

  /** Runs a container to its end; its exit code and output. */
  async run(name: ImageName, options: ContainerOptions = {}, timeoutMs = 30_000): Promise<RunResult> {
    const { id, bundle } = await this.bundle(name, options);
    this.started.add(id);
    try {
      return await new Promise<RunResult>((resolve, reject) => {
        const child = spawn('runc', ['--root', this.runcRoot, 'run', '--bundle', bundle, id], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
        child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
        const timer = setTimeout(() => {
          this.runc(['kill', id, 'KILL']);
          reject(new Error(`${name} (${id}) still running after ${timeoutMs} ms:\n${stdout}${stderr}`));
        }, timeoutMs);
        child.on('error', (err) => reject(new Error(`cannot run runc: ${err.message}`)));
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code: code ?? -1, stdout, stderr });
        });
      });
    } finally {
      this.delete(id);
    }
  }

  /** Starts a container in the background (runc run --detach); its output goes to a file. */
  async start(name: ImageName, options: ContainerOptions = {}): Promise<Container> {
    const { id, bundle } = await this.bundle(name, options);
    const log = path.join(this.dir, `${id}.log`);
    const out = fs.openSync(log, 'w');
    this.started.add(id);
    try {
      const result = spawnSync('runc', ['--root', this.runcRoot, 'run', '--detach', '--bundle', bundle, id], {
        stdio: ['ignore', out, out],
      });
      if (result.status !== 0) {
        throw new Error(`runc run ${name} failed (${result.status}): ${fs.readFileSync(log, 'utf8')}`);
      }
    } finally {
      fs.closeSync(out);
    }
    const state = this.state(id);
    if (!state || state.status !== 'running')
      throw new Error(`${name} is not running: ${fs.readFileSync(log, 'utf8')}`);
    return { id, pid: state.pid, logs: () => fs.readFileSync(log, 'utf8') };
  }

  /** runc's view of a container, undefined once it is gone. */
  state(id: string): { status: string; pid: number } | undefined {
    const result = this.runc(['state', id]);
    if (result.status !== 0) return undefined;
    return JSON.parse(result.stdout) as { status: string; pid: number };
  }

  /** Sends a signal to the container's first process. */
  kill(container: Container, signal: string): void {
    const result = this.runc(['kill', container.id, signal]);
    if (result.status !== 0) throw new Error(`runc kill ${container.id} ${signal}: ${result.stderr}`);
  }

  /** Waits until the container's process has ended; false if it has not within timeoutMs. */
  async stopped(container: Container, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.state(container.id)?.status !== 'running') return true;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return false;
  }

  /** Runs a host command inside a container's network namespace (dig, curl against it). */
  async inNetwork(container: Container, command: string, args: string[]): Promise<string> {
    const { stdout } = await execFileAsync('nsenter', [
      `--net=/proc/${container.pid}/ns/net`,
      command,
      ...args,
    ]);
    return stdout;
  }

  /** Deletes every container started (killing those still running), then the scratch directory. */
  stop(): void {
    for (const id of this.started) this.delete(id);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private delete(id: string): void {
    this.runc(['delete', '--force', id]);
    this.started.delete(id);
  }

  private runc(args: string[]): { status: number | null; stdout: string; stderr: string } {
    return spawnSync('runc', ['--root', this.runcRoot, ...args], { encoding: 'utf8' });
  }
}

interface RuntimeSpec {
  process: {
    terminal: boolean;
    args: string[];
    env: string[];
    capabilities: Record<string, string[]>;
    noNewPrivileges: boolean;
  };
  root: { path: string; readonly: boolean };
  mounts: { destination: string; type: string; source: string; options: string[] }[];
  linux: { namespaces: { type: string; path?: string }[] };
}

interface ImageConfig {
  config: { Entrypoint?: string[]; Cmd?: string[]; User?: string };
}

/** The manifest and config of the one image in an OCI layout directory. */
export function imageOf(layout: string): { manifest: { layers: { digest: string }[] }; config: ImageConfig } {
  const blob = (digest: string): unknown =>
    JSON.parse(fs.readFileSync(path.join(layout, 'blobs', 'sha256', digest.replace(/^sha256:/, '')), 'utf8'));
  const index = JSON.parse(fs.readFileSync(path.join(layout, 'index.json'), 'utf8')) as {
    manifests: { digest: string }[];
  };
  const manifest = blob(index.manifests[0]!.digest) as {
    config: { digest: string };
    layers: { digest: string }[];
  };
  return { manifest, config: blob(manifest.config.digest) as ImageConfig };
}
