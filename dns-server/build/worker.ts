// Worker thread entry: build requests in, one reply each (the arena and the
// slot tables transferred, not copied). The thread lives while builds keep
// coming, keeping its compiled code and the parsed record sets; the main
// thread ends it when builds stop (builder.ts), and its whole heap, grown by
// YAML parsing and zone building, goes back to the system.
import { getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { runBuild } from './run.js';
import type { BuildRequest } from './messages.js';
import { transferList } from '../wire/served.js';
import { ParseCache } from '../zone/compile.js';
import { SignatureCache } from '../dnssec/rrsig.js';

const cache = new ParseCache();
const signatures = new SignatureCache();
parentPort!.on('message', (req: BuildRequest) => {
  const reply = runBuild(req, cache, signatures);
  reply.workerHeapBytes = getHeapStatistics().total_heap_size;
  parentPort!.postMessage(reply, reply.served ? transferList(reply.served) : []);
});
