// The dns-server logs through the shared logger (process/log.ts).
export { createLogger, silentLogger, type Level, type Logger } from '../process/log.js';
