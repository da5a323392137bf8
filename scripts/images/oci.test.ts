import {
  createdAt,
  imageConfig,
  imageIndex,
  imageManifest,
  jsonBytes,
  ociArchitecture,
  tagOf,
} from './oci.js';
import { reproducibleTarArgs, type Layer } from './layer.js';

const layer: Layer = {
  digest: `sha256:${'a'.repeat(64)}`,
  diffId: `sha256:${'b'.repeat(64)}`,
  size: 42,
  createdBy: 'a layer',
};
const settings = {
  user: '65532:65532',
  entrypoint: ['node', 'dist/dns-server/main.js'],
  workingDir: '/app',
  env: ['PATH=/usr/bin'],
  exposedPorts: ['5353/udp'],
};

describe('OCI image documents', () => {
  it('dates everything at the epoch, without fractions', () => {
    expect(createdAt(0)).toBe('1970-01-01T00:00:00Z');
    expect(createdAt(1_700_000_000)).toBe('2023-11-14T22:13:20Z');
  });

  it('names the image for containerd by its full reference and for umoci/skopeo by its tag', () => {
    const manifest = {
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      digest: layer.digest,
      size: 1,
    };
    expect(imageIndex(manifest, 'ghcr.io/capi-dns/dns-server:0.1.0-abc')).toMatchObject({
      manifests: [
        {
          digest: layer.digest,
          annotations: {
            'io.containerd.image.name': 'ghcr.io/capi-dns/dns-server:0.1.0-abc',
            'org.opencontainers.image.ref.name': '0.1.0-abc',
          },
        },
      ],
    });
  });

  it('finds the tag after the last path component, and refuses a reference without one', () => {
    expect(tagOf('localhost:5000/capi-dns/curl:0.1.0-1')).toBe('0.1.0-1');
    expect(() => tagOf('localhost:5000/capi-dns/curl')).toThrow(/has no tag/);
  });

  it('writes the runtime settings and one history entry per layer, the same bytes every time', () => {
    const config = imageConfig(settings, [layer], 0, 'amd64');
    expect(config).toMatchObject({
      architecture: 'amd64',
      os: 'linux',
      config: { User: '65532:65532', ExposedPorts: { '5353/udp': {} }, WorkingDir: '/app' },
      rootfs: { type: 'layers', diff_ids: [layer.diffId] },
      history: [{ created: '1970-01-01T00:00:00Z', created_by: 'a layer' }],
    });
    expect(jsonBytes(imageConfig(settings, [layer], 0, 'amd64'))).toEqual(jsonBytes(config));
  });

  it('lists the compressed layers in the manifest, without an empty annotations field', () => {
    const config = { mediaType: 'application/vnd.oci.image.config.v1+json', digest: layer.diffId, size: 2 };
    const manifest = imageManifest(config, [layer], {});
    expect(manifest).toEqual({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config,
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: layer.digest, size: 42 }],
    });
  });

  it("maps Node's architecture names to the OCI ones", () => {
    expect(ociArchitecture('x64')).toBe('amd64');
    expect(ociArchitecture('arm64')).toBe('arm64');
    expect(() => ociArchitecture('mips')).toThrow(/no OCI architecture/);
  });

  it('packs layers without anything of the machine or the moment in the tar', () => {
    const args = reproducibleTarArgs(7);
    expect(args).toEqual(
      expect.arrayContaining(['--sort=name', '--mtime=@7', '--owner=0', '--group=0', '--no-xattrs']),
    );
    // GNU tar's default PAX header name holds the PID (%p).
    expect(args.find((arg) => arg.startsWith('--pax-option'))).not.toContain('%p');
    expect(reproducibleTarArgs(0, true)).toContain('--xattrs-include=security.capability');
  });
});
