// The pure Corefile transform: no I/O, so the reconciler that reads and
// writes kube-system/coredns stays small and this stays exhaustively tested.
export { CorefileError, type CorefileErrorReason } from './errors.js';
export { ensureForwardBlock, removeForwardBlock, MARKER, type PatchResult } from './forward-block.js';
export { parseCorefile, type ParsedCorefile, type ServerBlock, type Directive } from './parser.js';
export { parseAddress, normalizeZone, type Address } from './address.js';
