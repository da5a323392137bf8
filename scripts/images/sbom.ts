// Pure: an image's software bill of materials as an SPDX 2.3 JSON document,
// written beside each OCI archive by `npm run images`. The build knows
// exactly what it put into each layer (the Debian packages mmdebstrap
// extracted, the Node binary, the production npm packages of the lock file,
// capi-dns's own dist/, CoreDNS), so the document is made from that, not by
// scanning the result afterwards: a small, well-defined format for which a
// generator would have to rediscover what the build already has in hand.

export interface SbomComponent {
  name: string;
  version: string;
  /** Package URL (purl), the identifier scanners match vulnerabilities on. */
  purl: string;
  /** SHA-256 of what was installed, where one file is the component (the Node binary). */
  sha256?: string;
}

/** "name version" lines of a Debian layer → components (bookworm, amd64 or what the host builds). */
export function debianComponents(packages: readonly string[], arch = 'amd64'): SbomComponent[] {
  return packages.map((line) => {
    const [name = '', version = ''] = line.split(' ');
    return {
      name,
      version,
      purl: `pkg:deb/debian/${name}@${encodeURIComponent(version)}?arch=${arch}&distro=debian-12`,
    };
  });
}

interface LockFile {
  packages?: Record<string, { version?: string; dev?: boolean; devOptional?: boolean; optional?: boolean }>;
}

/** The production packages of a package-lock.json (v2/v3): what `npm ci --omit=dev` installs. */
export function npmComponents(lock: LockFile): SbomComponent[] {
  const out: SbomComponent[] = [];
  for (const [where, entry] of Object.entries(lock.packages ?? {})) {
    if (!where || entry.dev || entry.devOptional || !entry.version) continue;
    const name = where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const purlName = name.startsWith('@') ? `%40${name.slice(1)}` : name;
    out.push({ name, version: entry.version, purl: `pkg:npm/${purlName}@${entry.version}` });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
}

export interface SbomImage {
  name: string;
  ref: string;
  /** The manifest digest. */
  digest: string;
}

function spdxId(prefix: string, i: number, name: string): string {
  return `SPDXRef-${prefix}-${i}-${name.replace(/[^A-Za-z0-9.-]/g, '-')}`;
}

/** The SPDX 2.3 document of one image: the image as a package that CONTAINS each component. */
export function spdxDocument(image: SbomImage, components: readonly SbomComponent[], created: Date): object {
  const unique = [...new Map(components.map((c) => [c.purl, c])).values()];
  const imageId = 'SPDXRef-Image';
  const packages = unique.map((c, i) => ({
    SPDXID: spdxId('Package', i, c.name),
    name: c.name,
    versionInfo: c.version,
    downloadLocation: 'NOASSERTION',
    filesAnalyzed: false,
    ...(c.sha256 ? { checksums: [{ algorithm: 'SHA256', checksumValue: c.sha256 }] } : {}),
    externalRefs: [{ referenceCategory: 'PACKAGE-MANAGER', referenceType: 'purl', referenceLocator: c.purl }],
  }));
  const [repository = image.ref] = image.ref.split(':');
  return {
    spdxVersion: 'SPDX-2.3',
    dataLicense: 'CC0-1.0',
    SPDXID: 'SPDXRef-DOCUMENT',
    name: image.ref,
    documentNamespace: `https://capi-dns.invalid/spdx/${image.name}/${image.digest.replace('sha256:', '')}`,
    creationInfo: {
      created: created.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      creators: ['Tool: capi-dns npm run images'],
    },
    packages: [
      {
        SPDXID: imageId,
        name: image.name,
        versionInfo: image.digest,
        downloadLocation: 'NOASSERTION',
        filesAnalyzed: false,
        primaryPackagePurpose: 'CONTAINER',
        externalRefs: [
          {
            referenceCategory: 'PACKAGE-MANAGER',
            referenceType: 'purl',
            referenceLocator: `pkg:oci/${image.name}@${encodeURIComponent(image.digest)}?repository_url=${encodeURIComponent(repository.slice(0, repository.lastIndexOf('/')))}`,
          },
        ],
      },
      ...packages,
    ],
    relationships: [
      { spdxElementId: 'SPDXRef-DOCUMENT', relationshipType: 'DESCRIBES', relatedSpdxElement: imageId },
      ...packages.map((p) => ({
        spdxElementId: imageId,
        relationshipType: 'CONTAINS',
        relatedSpdxElement: p.SPDXID,
      })),
    ],
  };
}
