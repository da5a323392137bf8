// A kustomize overlay with `images:` entries, as config/README.md tells users
// to write one: the manifests unchanged, the images pointed at local builds.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Writes DIR/NAME/kustomization.yaml: BASE (a directory, or a file placed in
 * the overlay folder beforehand) with IMAGES as [name in the manifests, ref].
 * Kustomize takes a base outside the overlay only as a relative directory path.
 */
export function writeOverlay(
  dir: string,
  name: string,
  base: string,
  images: [string, string][],
  patches: string[] = [],
): string {
  const folder = path.join(dir, name);
  const entries = images
    .map(([image, ref]) => {
      const colon = ref.lastIndexOf(':');
      return `  - name: ${image}\n    newName: ${ref.slice(0, colon)}\n    newTag: "${ref.slice(colon + 1)}"\n`;
    })
    .join('');
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  const resource = path.isAbsolute(base) ? path.relative(folder, base) : base;
  writeFileSync(
    path.join(folder, 'kustomization.yaml'),
    `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ${resource}\nimages:\n${entries}` +
      (patches.length
        ? `patches:\n${patches.map((p) => `  - patch: |-\n${p.replace(/^/gm, '      ')}\n`).join('')}`
        : ''),
  );
  return folder;
}
