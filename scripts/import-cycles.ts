// npm run lint's check that no import goes in a circle, neither between files
// (madge's own check) nor between sibling folders: operator/gatewaydns/ and
// operator/gatewaydns/apply/mirror/ importing each other through different files is a circle
// too, that no file-level check sees. A folder's own files count as one more
// sibling of its subfolders (dns-server/*.ts and dns-server/sources/).
// Type-only imports count: they tie the modules' meaning together all the same.
//
// Run by Node directly (it strips the types), so that lint needs no build:
//   node scripts/import-cycles.ts
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';

/** What the check reads: every TypeScript file of these folders. */
const SOURCES = ['api', 'runtime', 'operator', 'dns-server', 'demo', 'test', 'bench', 'scripts'];

/**
 * Circles left on purpose, each as its sorted units. demo/ starts the test environment through
 * test/support/, and test/e2e/ drives the demo: breaking it means moving test/support/ out of
 * test/ (every test, bench and demo file imports it), a layout change of its own.
 */
const ALLOWED = [['demo/', 'test/']];

/** File → the files it imports, paths relative to the repository (madge's obj()). */
export type ImportGraph = Record<string, string[]>;

export interface FolderCircle {
  /** The folder whose children import each other ('' for the repository). */
  parent: string;
  /** Subfolders as "dir/", a folder's own files as "dir/*.ts"; sorted. */
  units: string[];
  /** One import for each step between units of the circle: [importer, imported]. */
  examples: [string, string][];
}

/** Circles between sibling folders (each with everything below it), at every level of the tree. */
export function siblingFolderCircles(graph: ImportGraph): FolderCircle[] {
  const folders = new Set<string>(['']);
  for (const file of Object.keys(graph))
    for (let dir = path.posix.dirname(file); dir !== '.'; dir = path.posix.dirname(dir)) folders.add(dir);
  const circles: FolderCircle[] = [];
  for (const parent of [...folders].sort()) {
    const edges = new Map<string, Map<string, [string, string]>>();
    for (const [from, imports] of Object.entries(graph))
      for (const to of imports) {
        const a = unitOf(parent, from);
        const b = unitOf(parent, to);
        if (a === undefined || b === undefined || a === b) continue;
        if (!edges.has(a)) edges.set(a, new Map());
        if (!edges.get(a)!.has(b)) edges.get(a)!.set(b, [from, to]);
      }
    for (const component of stronglyConnected(edges)) {
      const inside = new Set(component);
      const examples = component.flatMap((a) =>
        [...(edges.get(a) ?? new Map<string, [string, string]>())]
          .filter(([b]) => inside.has(b))
          .map(([, example]) => example),
      );
      circles.push({ parent, units: [...component].sort(), examples });
    }
  }
  return circles;
}

/** The child of `parent` that `file` lies in, or undefined if it lies outside `parent`. */
function unitOf(parent: string, file: string): string | undefined {
  const rel = parent === '' ? file : path.posix.relative(parent, file);
  if (rel.startsWith('..')) return undefined;
  const slash = rel.indexOf('/');
  if (slash < 0) return parent === '' ? '*.ts' : `${parent}/*.ts`;
  return `${parent === '' ? '' : `${parent}/`}${rel.slice(0, slash)}/`;
}

/** Tarjan's algorithm: the groups of more than one node that reach each other. */
function stronglyConnected(edges: Map<string, Map<string, unknown>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) out.push(component);
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return out;
}

function allowed(circle: FolderCircle): boolean {
  return ALLOWED.some((units) => units.join(' ') === circle.units.join(' '));
}

async function main(): Promise<number> {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  process.chdir(root);
  const result = await madge(SOURCES, { baseDir: root, fileExtensions: ['ts'], tsConfig: 'tsconfig.json' });
  const graph = result.obj();
  const files = result.circular();
  const folders = siblingFolderCircles(graph).filter((c) => !allowed(c));
  for (const circle of files)
    process.stderr.write(`import circle between files: ${[...circle, circle[0]].join(' → ')}\n`);
  for (const c of folders) {
    process.stderr.write(
      `import circle between sibling folders of ${c.parent || '.'}: ${c.units.join(', ')}\n`,
    );
    for (const [from, to] of c.examples) process.stderr.write(`    ${from} imports ${to}\n`);
  }
  const count = files.length + folders.length;
  if (count === 0)
    process.stdout.write(`no import circle among ${Object.keys(graph).length} TypeScript files\n`);
  return count === 0 ? 0 : 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await main();
