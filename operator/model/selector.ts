// Kubernetes label selector semantics (metav1.LabelSelector): matchLabels and
// matchExpressions are ANDed; an empty selector selects everything.
import type { LabelSelector } from '../../api/index.js';

export function matchesSelector(
  selector: LabelSelector,
  labels: Record<string, string> | undefined,
): boolean {
  const have = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (have[key] !== value) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    const present = Object.prototype.hasOwnProperty.call(have, req.key);
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (!present || !values.includes(have[req.key]!)) return false;
        break;
      case 'NotIn':
        if (present && values.includes(have[req.key]!)) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
      default:
        // Unknown operators select nothing, as the API server's own selector parser would refuse them.
        return false;
    }
  }
  return true;
}

export class SelectorSyntaxError extends Error {}

/** A label key (an optional DNS-subdomain prefix and a name) or value, as the API server checks them. */
const KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/**
 * A label selector in the syntax of `kubectl -l` and the API's labelSelector parameter
 * (`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x,y)`, `a`, `!a`, ANDed by commas) as a
 * metav1.LabelSelector; throws SelectorSyntaxError naming what is wrong. '' selects everything.
 */
export function parseSelector(text: string): LabelSelector {
  const matchExpressions: NonNullable<LabelSelector['matchExpressions']> = [];
  const matchLabels: Record<string, string> = {};
  // Commas inside parentheses belong to a set: split on the others only.
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (depth < 0) throw new SelectorSyntaxError(`unbalanced ")" in ${JSON.stringify(text)}`);
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  if (depth !== 0) throw new SelectorSyntaxError(`unbalanced "(" in ${JSON.stringify(text)}`);
  parts.push(current);
  if (parts.length === 1 && parts[0]!.trim() === '') return {};
  const key = (k: string) => {
    if (!KEY.test(k)) throw new SelectorSyntaxError(`${JSON.stringify(k)} is not a label key`);
    return k;
  };
  const value = (v: string) => {
    if (!VALUE.test(v)) throw new SelectorSyntaxError(`${JSON.stringify(v)} is not a label value`);
    return v;
  };
  for (const raw of parts) {
    const part = raw.trim();
    let m: RegExpExecArray | null;
    if ((m = /^(\S+?)\s+(in|notin)\s*\(([^)]*)\)$/.exec(part))) {
      const values = m[3]!.split(',').map((v) => value(v.trim()));
      matchExpressions.push({ key: key(m[1]!), operator: m[2] === 'in' ? 'In' : 'NotIn', values });
    } else if ((m = /^([^!=\s]+)\s*!=\s*(\S*)$/.exec(part))) {
      matchExpressions.push({ key: key(m[1]!), operator: 'NotIn', values: [value(m[2]!)] });
    } else if ((m = /^([^!=\s]+)\s*==?\s*(\S*)$/.exec(part))) {
      const k = key(m[1]!);
      if (k in matchLabels && matchLabels[k] !== m[2])
        throw new SelectorSyntaxError(`${k} asked to equal two values`);
      matchLabels[k] = value(m[2]!);
    } else if ((m = /^!\s*(\S+)$/.exec(part))) {
      matchExpressions.push({ key: key(m[1]!), operator: 'DoesNotExist' });
    } else if (/^\S+$/.test(part)) {
      matchExpressions.push({ key: key(part), operator: 'Exists' });
    } else throw new SelectorSyntaxError(`${JSON.stringify(part)} is not a requirement`);
  }
  return {
    ...(Object.keys(matchLabels).length ? { matchLabels } : {}),
    ...(matchExpressions.length ? { matchExpressions } : {}),
  };
}
