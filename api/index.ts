export * from './dnsrecordset.js';
