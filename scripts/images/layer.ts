// Image layers: a directory packed into a reproducible tar (GNU tar, fixed
// order, times and owners), gzipped into a content-addressed blob store. The
// tar is hashed first (its digest is the layer's diff_id); only a diff_id the
// store has not seen is compressed, so an unchanged layer costs one tar and one
// hash, not a gzip.
import type { SbomComponent } from './sbom.js';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';

/** A layer as the image manifest and config name it. */
export interface Layer {
  /** sha256 of the gzipped tar: the blob's name. */
  digest: string;
  /** sha256 of the uncompressed tar: the config's rootfs.diff_ids entry. */
  diffId: string;
  /** Size of the gzipped blob in bytes. */
  size: number;
  /** The history entry's created_by: what the layer holds. */
  createdBy: string;
  /** The software in it, for the image's SBOM (sbom.ts). */
  components?: SbomComponent[];
}

export interface PackOptions {
  createdBy: string;
  /** Keep the security.capability extended attribute (file capabilities). */
  capabilities?: boolean;
}

/** Blobs under DIR/blobs/sha256/HEX, as in an OCI layout, plus the diff_id → blob index. */
export class BlobStore {
  constructor(readonly dir: string) {
    fs.mkdirSync(path.join(dir, 'blobs', 'sha256'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'diff-ids'), { recursive: true });
    fs.mkdirSync(this.tmpDir(), { recursive: true });
  }

  blobPath(digest: string): string {
    return path.join(this.dir, 'blobs', 'sha256', hexOf(digest));
  }

  tmpDir(): string {
    return path.join(this.dir, 'tmp');
  }

  has(digest: string): boolean {
    return fs.existsSync(this.blobPath(digest));
  }

  /** Stores bytes (a config, a manifest) under their digest; returns the digest. */
  putBytes(bytes: Buffer): string {
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    if (!this.has(digest)) this.atomicWrite(this.blobPath(digest), bytes);
    return digest;
  }

  /** The gzipped layer already stored for an uncompressed tar's digest, if any. */
  layerFor(diffId: string, createdBy: string): Layer | undefined {
    const indexFile = path.join(this.dir, 'diff-ids', hexOf(diffId));
    if (!fs.existsSync(indexFile)) return undefined;
    const digest = fs.readFileSync(indexFile, 'utf8').trim();
    if (!this.has(digest)) return undefined;
    return { digest, diffId, size: fs.statSync(this.blobPath(digest)).size, createdBy };
  }

  rememberLayer(layer: Layer): void {
    this.atomicWrite(path.join(this.dir, 'diff-ids', hexOf(layer.diffId)), `${layer.digest}\n`);
  }

  /** Write to a temporary name, then rename: builds in other worktrees share this store. */
  atomicWrite(file: string, data: Buffer | string): void {
    const tmp = path.join(this.tmpDir(), `${path.basename(file)}.${process.pid}.${Date.now()}`);
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, file);
  }

  /** Packs DIR (its entries, not DIR itself) into a layer. */
  async packDirectory(dir: string, epoch: number, options: PackOptions): Promise<Layer> {
    const diffId = await digestOfTar(tarDirectory(dir, epoch, options));
    const known = this.layerFor(diffId, options.createdBy);
    if (known) return known;
    const tmp = path.join(this.tmpDir(), `layer.${process.pid}.${Date.now()}.tar.gz`);
    const hash = createHash('sha256');
    const again = createHash('sha256');
    let size = 0;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    const recheck = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        again.update(chunk);
        done(null, chunk);
      },
    });
    // zlib's gzip header has no time and no file name: the same tar always
    // compresses to the same bytes with the same zlib (the pinned Node's).
    const tar = tarDirectory(dir, epoch, options);
    await Promise.all([
      pipeline(tar.stream, recheck, zlib.createGzip({ level: 6 }), count, fs.createWriteStream(tmp)),
      tar.exited,
    ]).catch((err: unknown) => {
      fs.rmSync(tmp, { force: true });
      throw err;
    });
    // The tar was run twice (hashed, then compressed): different bytes mean
    // something in DIR is not reproducible, or changed under us.
    if (`sha256:${again.digest('hex')}` !== diffId) {
      fs.rmSync(tmp, { force: true });
      throw new Error(`packing ${dir}: two runs of tar gave different bytes; did the directory change?`);
    }
    const layer: Layer = {
      digest: `sha256:${hash.digest('hex')}`,
      diffId,
      size,
      createdBy: options.createdBy,
    };
    fs.renameSync(tmp, this.blobPath(layer.digest));
    this.rememberLayer(layer);
    return layer;
  }
}

export function hexOf(digest: string): string {
  const match = /^sha256:([0-9a-f]{64})$/.exec(digest);
  if (!match) throw new Error(`not a sha256 digest: ${digest}`);
  return match[1]!;
}

/**
 * The GNU tar arguments that make a layer depend on the files' contents,
 * names, modes and link targets only: entries sorted by name, every time set to
 * the epoch (no atime/ctime, no PID in PAX header names), owner root, no group
 * or other write bit whatever the umask of whoever built the files.
 */
export function reproducibleTarArgs(epoch: number, capabilities = false): string[] {
  return [
    '--sort=name',
    '--format=posix',
    '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
    `--mtime=@${epoch}`,
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '--mode=go-w',
    '--no-acls',
    '--no-selinux',
    ...(capabilities ? ['--xattrs', '--xattrs-include=security.capability'] : ['--no-xattrs']),
  ];
}

/** A running tar: its output, and its exit (rejects with tar's message if it fails). */
export interface TarRun {
  stream: Readable;
  exited: Promise<void>;
}

/** A tar of DIR's entries (sorted; DIR itself is not an entry, so its mode cannot leak into "/"). */
export function tarDirectory(dir: string, epoch: number, options: { capabilities?: boolean }): TarRun {
  const entries = fs.readdirSync(dir).sort();
  if (entries.length === 0) throw new Error(`layer directory ${dir} is empty`);
  const args = ['--create', '--file=-', ...reproducibleTarArgs(epoch, options.capabilities)];
  return runTar([...args, '--directory', dir, '--', ...entries], `packing ${dir}`);
}

/** Runs GNU tar with ARGS, its stdout piped. */
export function runTar(args: string[], what: string): TarRun {
  const child = spawn('tar', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = new Promise<void>((resolve, reject) => {
    child.on('error', (err) => reject(new Error(`${what}: cannot run tar: ${err.message}`)));
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${what}: tar exited ${code}: ${stderr.trim()}`)),
    );
  });
  return { stream: child.stdout, exited };
}

/** sha256 of a tar's output, as "sha256:HEX", once tar has succeeded. */
export async function digestOfTar(tar: TarRun): Promise<string> {
  const hash = createHash('sha256');
  const hashing = pipeline(
    tar.stream,
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        done();
      },
    }),
  );
  await Promise.all([hashing, tar.exited]);
  return `sha256:${hash.digest('hex')}`;
}
