// The operator logs through the shared logger (runtime/log.ts), and reads
// Kubernetes API errors with the shared helper (runtime/kube-errors.ts).
export { createLogger, errorText, type Fields, type Level, type Logger } from '../../../runtime/log.js';
export { httpStatus } from '../../../runtime/kube-errors.js';
