// Pure: a Kubernetes object in which some fields stand for Helm template
// expressions ("holes"), written out as the text of a Helm template. The
// object is edited as data (a field set to a hole's token), stringified as
// YAML 1.1 (what Helm and the API server read), and each token then replaced
// by its expression at the indentation YAML gave it. Literal text that looks
// like a template action ({{ … }}, as in alert annotations or dashboards) is
// escaped, so that Helm writes it out as it is.
import { stringify } from 'yaml';

/**
 * scalar: the token's place (a map value or a list item) takes `{{ expr }}`.
 * block: `key: TOKEN` becomes `key:` and the expression's YAML (toYaml) below it.
 * lines: the token as a map key or a whole list item is replaced by template lines at its
 * indentation (optional entries, ranges); `render` gets the indentation as spaces.
 */
type Hole =
  | { kind: 'scalar'; expr: string }
  | { kind: 'block'; expr: string }
  | { kind: 'lines'; render: (pad: string) => string[] };

const TOKEN = /__HELM_HOLE_(\d+)__/g;

/** Escapes what Helm would take for a template action in literal text. */
export function escapeActions(text: string): string {
  return text.replace(/\{\{|\}\}/g, (m) => (m === '{{' ? '{{ "{{" }}' : '{{ "}}" }}'));
}

export class Holes {
  private readonly holes: Hole[] = [];

  private add(hole: Hole): string {
    this.holes.push(hole);
    return `__HELM_HOLE_${this.holes.length - 1}__`;
  }

  /** A value written as `{{ expr }}`. */
  scalar(expr: string): string {
    return this.add({ kind: 'scalar', expr });
  }

  /** A map value written as the YAML of `expr` (toYaml), indented under its key. */
  block(expr: string): string {
    return this.add({ kind: 'block', expr });
  }

  /** A map key or a list item replaced by lines of template text at its indentation. */
  lines(render: (pad: string) => string[]): string {
    return this.add({ kind: 'lines', render });
  }

  /** `key:` and its YAML only when `expr` is not empty: use as a map key (its value is ignored). */
  optionalBlock(key: string, expr: string): string {
    return this.lines((pad) => [
      `${pad}{{- with ${expr} }}`,
      `${pad}${key}:`,
      `${pad}  {{- toYaml . | nindent ${pad.length + 2} }}`,
      `${pad}{{- end }}`,
    ]);
  }

  /** `key: value` only when `expr` is not empty: use as a map key (its value is ignored). */
  optionalScalar(key: string, expr: string): string {
    return this.lines((pad) => [`${pad}{{- with ${expr} }}`, `${pad}${key}: {{ . }}`, `${pad}{{- end }}`]);
  }

  /** One list item per element of `expr` (a list of strings), quoted: use as a list item. */
  rangeItems(expr: string): string {
    return this.lines((pad) => [`${pad}{{- range ${expr} }}`, `${pad}- {{ . | quote }}`, `${pad}{{- end }}`]);
  }

  /** The elements of `expr` (a list of objects), as YAML list items: use as a list item. */
  listItems(expr: string): string {
    return this.lines((pad) => [
      `${pad}{{- with ${expr} }}`,
      `${pad}{{- toYaml . | nindent ${pad.length} }}`,
      `${pad}{{- end }}`,
    ]);
  }

  /** The object as template text; every hole it holds is filled, and each exactly once. */
  render(object: unknown): string {
    const text = escapeActions(stringify(object, { version: '1.1', lineWidth: 0 }));
    const used = new Set<number>();
    const take = (n: number): Hole => {
      const hole = this.holes[n];
      if (!hole) throw new Error(`unknown hole ${n}`);
      if (used.has(n)) throw new Error(`hole ${n} appears twice`);
      used.add(n);
      return hole;
    };
    const out: string[] = [];
    for (const line of text.replace(/\n$/, '').split('\n')) {
      // A hole standing for lines: a map key (`TOKEN: …`) or a whole list item (`- TOKEN`).
      const asKey = /^(\s*)__HELM_HOLE_(\d+)__:/.exec(line) ?? /^(\s*)- __HELM_HOLE_(\d+)__$/.exec(line);
      if (asKey && this.holes[Number(asKey[2])]?.kind === 'lines') {
        const hole = take(Number(asKey[2])) as Extract<Hole, { kind: 'lines' }>;
        out.push(...hole.render(asKey[1] ?? ''));
        continue;
      }
      // A block: `key: TOKEN`, the key starting at column `col` (after any `- ` of a list item).
      const asBlock = /^(\s*(?:- )*)(\S[^:]*): __HELM_HOLE_(\d+)__$/.exec(line);
      if (asBlock && this.holes[Number(asBlock[3])]?.kind === 'block') {
        const hole = take(Number(asBlock[3])) as Extract<Hole, { kind: 'block' }>;
        const col = asBlock[1]!.length;
        out.push(`${asBlock[1]}${asBlock[2]}:`);
        out.push(`${' '.repeat(col + 2)}{{- toYaml ${hole.expr} | nindent ${col + 2} }}`);
        continue;
      }
      out.push(
        line.replace(TOKEN, (_m, n: string) => {
          const hole = take(Number(n));
          if (hole.kind !== 'scalar')
            throw new Error(`hole ${n} (${hole.kind}) is not where one can stand: ${line}`);
          return `{{ ${hole.expr} }}`;
        }),
      );
    }
    return out.join('\n') + '\n';
  }
}
