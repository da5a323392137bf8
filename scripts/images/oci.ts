// OCI image config, manifest and index (image-spec v1.1), and the OCI archive:
// a tar of an image layout (oci-layout, index.json, blobs/sha256/*) holding one
// image, which `ctr images import`, `skopeo copy oci-archive:…` and
// `umoci unpack` all read. Everything here is a pure function of its inputs,
// so the same layers and settings always give the same digests.
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { type BlobStore, type Layer, reproducibleTarArgs, runTar } from './layer.js';

export const MEDIA_TYPES = {
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar+gzip',
  index: 'application/vnd.oci.image.index.v1+json',
} as const;

/** What `docker run` would take from a Dockerfile's USER, ENTRYPOINT, CMD, WORKDIR, ENV, EXPOSE, LABEL. */
export interface RuntimeSettings {
  /** Numeric "UID:GID": Kubernetes' runAsNonRoot can only check a number. */
  user: string;
  entrypoint?: string[];
  cmd?: string[];
  workingDir: string;
  env: string[];
  /** "5353/udp", "8080/tcp". */
  exposedPorts?: string[];
  labels?: Record<string, string>;
}

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}

/** Go's GOARCH names, which the image config uses. */
export function ociArchitecture(nodeArch: string = process.arch): string {
  const names: Record<string, string> = {
    x64: 'amd64',
    arm64: 'arm64',
    arm: 'arm',
    ppc64: 'ppc64le',
    s390x: 's390x',
  };
  const name = names[nodeArch];
  if (!name) throw new Error(`no OCI architecture for Node's ${nodeArch}`);
  return name;
}

/** RFC 3339 without fractions, as Docker and containerd write it. */
export function createdAt(epoch: number): string {
  return new Date(epoch * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function imageConfig(settings: RuntimeSettings, layers: Layer[], epoch: number, arch: string): object {
  const created = createdAt(epoch);
  const config: Record<string, unknown> = { User: settings.user };
  if (settings.exposedPorts?.length) {
    config.ExposedPorts = Object.fromEntries(settings.exposedPorts.map((port) => [port, {}]));
  }
  config.Env = settings.env;
  if (settings.entrypoint) config.Entrypoint = settings.entrypoint;
  if (settings.cmd) config.Cmd = settings.cmd;
  config.WorkingDir = settings.workingDir;
  if (settings.labels && Object.keys(settings.labels).length) config.Labels = settings.labels;
  return {
    created,
    architecture: arch,
    os: 'linux',
    config,
    rootfs: { type: 'layers', diff_ids: layers.map((layer) => layer.diffId) },
    history: layers.map((layer) => ({ created, created_by: layer.createdBy })),
  };
}

export function imageManifest(
  config: Descriptor,
  layers: Layer[],
  annotations: Record<string, string>,
): object {
  return {
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.manifest,
    config,
    layers: layers.map((layer) => ({ mediaType: MEDIA_TYPES.layer, digest: layer.digest, size: layer.size })),
    ...(Object.keys(annotations).length ? { annotations } : {}),
  };
}

/**
 * The layout's index.json. containerd's import names the image after
 * io.containerd.image.name (the full reference); umoci and skopeo look the
 * image up by org.opencontainers.image.ref.name, which containerd's own export
 * sets to the tag alone, as here.
 */
export function imageIndex(manifest: Descriptor, ref: string): object {
  return {
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.index,
    manifests: [
      {
        ...manifest,
        annotations: {
          'io.containerd.image.name': ref,
          'org.opencontainers.image.ref.name': tagOf(ref),
        },
      },
    ],
  };
}

export function tagOf(ref: string): string {
  const slash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  if (colon <= slash) throw new Error(`image reference ${ref} has no tag`);
  return ref.slice(colon + 1);
}

/** JSON as stored in a blob: compact, key order as built, so the digest is stable. */
export function jsonBytes(value: object): Buffer {
  return Buffer.from(JSON.stringify(value));
}

/** The config and manifest blobs of an image, stored; returns the manifest's descriptor. */
export function storeImage(
  store: BlobStore,
  settings: RuntimeSettings,
  layers: Layer[],
  epoch: number,
  annotations: Record<string, string>,
): { manifest: Descriptor; config: Descriptor } {
  for (const layer of layers) {
    if (!store.has(layer.digest))
      throw new Error(`layer ${layer.digest} (${layer.createdBy}) is not in the store`);
  }
  const configBytes = jsonBytes(imageConfig(settings, layers, epoch, ociArchitecture()));
  const config = {
    mediaType: MEDIA_TYPES.config,
    digest: store.putBytes(configBytes),
    size: configBytes.length,
  };
  const manifestBytes = jsonBytes(imageManifest(config, layers, annotations));
  const manifest = {
    mediaType: MEDIA_TYPES.manifest,
    digest: store.putBytes(manifestBytes),
    size: manifestBytes.length,
  };
  return { manifest, config };
}

/**
 * Writes the OCI archive of one image to FILE (atomically): a layout in a
 * scratch directory of hard links into the store, packed with the same
 * reproducible tar settings as the layers.
 */
export async function writeArchive(
  store: BlobStore,
  manifest: Descriptor,
  blobs: string[],
  ref: string,
  file: string,
  epoch: number,
): Promise<void> {
  const layout = fs.mkdtempSync(path.join(store.tmpDir(), 'layout-'));
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.chmodSync(layout, 0o755);
    fs.writeFileSync(path.join(layout, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
    fs.writeFileSync(path.join(layout, 'index.json'), jsonBytes(imageIndex(manifest, ref)));
    const blobDir = path.join(layout, 'blobs', 'sha256');
    fs.mkdirSync(blobDir, { recursive: true });
    for (const digest of new Set([manifest.digest, ...blobs])) {
      const target = path.join(blobDir, path.basename(store.blobPath(digest)));
      try {
        fs.linkSync(store.blobPath(digest), target);
      } catch {
        fs.copyFileSync(store.blobPath(digest), target);
      }
    }
    const tar = runTar(
      [
        '--create',
        '--file=-',
        ...reproducibleTarArgs(epoch),
        '--directory',
        layout,
        '--',
        'blobs',
        'index.json',
        'oci-layout',
      ],
      `packing the OCI archive of ${ref}`,
    );
    await Promise.all([pipeline(tar.stream, fs.createWriteStream(tmp)), tar.exited]);
    fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
    fs.rmSync(layout, { recursive: true, force: true });
  }
}
