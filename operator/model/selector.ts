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
