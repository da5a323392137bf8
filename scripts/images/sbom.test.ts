import { debianComponents, npmComponents, spdxDocument } from './sbom.js';

describe('SBOM', () => {
  it('turns Debian packages into purls', () => {
    expect(debianComponents(['libc6 2.36-9+deb12u13'])).toEqual([
      {
        name: 'libc6',
        version: '2.36-9+deb12u13',
        purl: 'pkg:deb/debian/libc6@2.36-9%2Bdeb12u13?arch=amd64&distro=debian-12',
      },
    ]);
  });

  it('keeps the production packages of a lock file, scoped names encoded', () => {
    const lock = {
      packages: {
        '': { version: '0.1.0' },
        'node_modules/yaml': { version: '2.9.1' },
        'node_modules/@kubernetes/client-node': { version: '2.0.1' },
        'node_modules/jest': { version: '29.7.0', dev: true },
        'node_modules/a/node_modules/b': { version: '1.0.0' },
      },
    };
    expect(npmComponents(lock).map((c) => c.purl)).toEqual([
      'pkg:npm/%40kubernetes/client-node@2.0.1',
      'pkg:npm/b@1.0.0',
      'pkg:npm/yaml@2.9.1',
    ]);
  });

  it('writes an SPDX 2.3 document: the image CONTAINS each component once', () => {
    const doc = spdxDocument(
      { name: 'dns-server', ref: 'ghcr.io/capi-dns/dns-server:0.1.0-abc', digest: 'sha256:abc' },
      [
        { name: 'node', version: 'v24.21.0', purl: 'pkg:generic/node@v24.21.0' },
        { name: 'node', version: 'v24.21.0', purl: 'pkg:generic/node@v24.21.0' },
      ],
      new Date(0),
    ) as {
      spdxVersion: string;
      packages: unknown[];
      relationships: { relationshipType: string }[];
      creationInfo: { created: string };
    };
    expect(doc.spdxVersion).toBe('SPDX-2.3');
    expect(doc.packages).toHaveLength(2);
    expect(doc.relationships.map((r) => r.relationshipType)).toEqual(['DESCRIBES', 'CONTAINS']);
    expect(doc.creationInfo.created).toBe('1970-01-01T00:00:00Z');
  });
});
