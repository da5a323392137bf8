// The operator logs through the shared logger (process/log.ts), and reads
// Kubernetes API errors with the shared helper (process/kube-errors.ts).
export { createLogger, errorText, type Fields, type Level, type Logger } from '../../process/log.js';
export { httpStatus } from '../../process/kube-errors.js';
