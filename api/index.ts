export * from './dnsrecordset.js';
export * from './gatewaydns.js';
export * from './naming.js';
export * from './limits.js';
export * from './mirror.js';
export * from './mcs.js';
export * from './traffic-policy.js';
export * from './probe-report.js';
