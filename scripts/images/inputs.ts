// The slow inputs of the images, each cached under a key of what it is made
// from: a Debian root file system (keyed on its package list), the production
// node_modules (keyed on package.json and package-lock.json). A warm build
// finds both and only packs layers.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type BlobStore, type Layer } from './layer.js';

/** scripts/images/ in the source tree (this file runs from dist/scripts/images/). */
export function sourceDir(root: string): string {
  return path.join(root, 'scripts', 'images');
}

export function sha256(...parts: (string | Buffer)[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex');
}

/** Runs a command, its output passed through to stderr; throws with context when it fails. */
export function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): void {
  const result = spawnSync(command, args, { ...options, stdio: ['ignore', 2, 2] });
  if (result.error) throw new Error(`${command}: cannot run: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
  }
}

export interface DebianLayer extends Layer {
  /** "name version" of every package in it, for the build's summary. */
  packages: string[];
}

/**
 * A Debian bookworm root file system of PACKAGES (and their dependencies) as a
 * layer. Cached under the package list, the mirrors and the script that makes
 * it: the download and extraction are the slow part of a cold build. To pick
 * up Debian's newer package versions, delete .cache/images/debian/.
 */
export async function debianLayer(
  store: BlobStore,
  root: string,
  name: string,
  packages: string[],
  epoch: number,
): Promise<DebianLayer> {
  const script = path.join(sourceDir(root), 'debian-rootfs.sh');
  const key = sha256(
    [...packages].sort().join(','),
    fs.readFileSync(script),
    process.env.CAPI_DNS_DEBIAN_MIRROR ?? '',
    process.env.CAPI_DNS_DEBIAN_SECURITY_MIRROR ?? '',
    String(epoch),
  ).slice(0, 16);
  const cacheDir = path.join(store.dir, 'debian');
  const record = path.join(cacheDir, `${name}-${key}.json`);
  if (fs.existsSync(record)) {
    const cached = JSON.parse(fs.readFileSync(record, 'utf8')) as DebianLayer;
    if (store.has(cached.digest)) return cached;
  }
  fs.mkdirSync(cacheDir, { recursive: true });
  const work = fs.mkdtempSync(path.join(store.tmpDir(), `debian-${name}-`));
  try {
    const rootfs = path.join(work, 'rootfs');
    process.stderr.write(`images: Debian bookworm root file system "${name}" (${packages.join(', ')})\n`);
    run('bash', [script, rootfs, ...packages], { env: { ...process.env, SOURCE_DATE_EPOCH: String(epoch) } });
    const statusDir = path.join(rootfs, 'var', 'lib', 'dpkg', 'status.d');
    const installed = fs
      .readdirSync(statusDir)
      .sort()
      .map((file) => {
        const control = fs.readFileSync(path.join(statusDir, file), 'utf8');
        return `${file} ${/^Version: (.*)$/m.exec(control)?.[1] ?? '?'}`;
      });
    const layer = await store.packDirectory(rootfs, epoch, {
      createdBy: `Debian bookworm (mmdebstrap --variant=extract): ${packages.join(' ')}`,
    });
    const result: DebianLayer = { ...layer, packages: installed };
    store.atomicWrite(record, `${JSON.stringify(result, null, 2)}\n`);
    return result;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * node_modules with the production dependencies only, installed by `npm ci
 * --omit=dev --ignore-scripts` from the project's package.json and lock file
 * (the same command as the Dockerfiles). Returns a directory holding
 * app/node_modules, ready to pack as a layer.
 */
export function productionDependencies(store: BlobStore, root: string): string {
  const manifest = fs.readFileSync(path.join(root, 'package.json'));
  const lock = fs.readFileSync(path.join(root, 'package-lock.json'));
  const key = sha256(manifest, lock).slice(0, 16);
  const dir = path.join(store.dir, 'npm', key);
  if (fs.existsSync(path.join(dir, 'app', 'node_modules'))) return dir;
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const work = fs.mkdtempSync(path.join(store.tmpDir(), 'npm-'));
  try {
    const app = path.join(work, 'app');
    fs.mkdirSync(app, { mode: 0o755 });
    fs.chmodSync(work, 0o755);
    fs.writeFileSync(path.join(app, 'package.json'), manifest);
    fs.writeFileSync(path.join(app, 'package-lock.json'), lock);
    process.stderr.write('images: npm ci --omit=dev (production dependencies)\n');
    run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: app,
    });
    fs.rmSync(path.join(app, 'package.json'));
    fs.rmSync(path.join(app, 'package-lock.json'));
    try {
      fs.renameSync(work, dir);
    } catch (err) {
      // Another build (another worktree sharing .cache) got there first.
      if (!fs.existsSync(path.join(dir, 'app', 'node_modules'))) throw err;
    }
    return dir;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The Node binary the project runs on: the `node` devDependency's, pinned in package-lock.json. */
export function nodeBinary(root: string): { file: string; version: string; sha256: string } {
  const file = fs.realpathSync(path.join(root, 'node_modules', 'node', 'bin', 'node'));
  // Installed by a preinstall script, outside the lock file's hashes: it must be the pinned one.
  const pin = fs.readFileSync(path.join(root, 'images', 'node-binary.sha256'), 'utf8').split(/\s+/);
  const sha256 = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  if (sha256 !== pin[0])
    throw new Error(
      `${file} (sha256 ${sha256}) is not the Node binary images/node-binary.sha256 pins (${pin[0]}); see images/node-binary.md`,
    );
  const version = execFileSync(file, ['--version'], { encoding: 'utf8' }).trim();
  return { file, version, sha256 };
}

/** Copies FROM into DIR/TO, making the directories between with mode 755. */
export function stage(dir: string, to: string, from: string, mode?: number): void {
  const target = path.join(dir, to);
  fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
  fs.cpSync(from, target, { recursive: true, dereference: true });
  if (mode !== undefined) fs.chmodSync(target, mode);
}
