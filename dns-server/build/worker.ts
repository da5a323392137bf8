// Worker thread entry: build requests in, one reply each (the arena and the
// slot tables transferred, not copied), then a report of the heap left. The
// thread lives while builds keep coming, keeping its compiled code and the
// parsed record sets; the main thread ends it when builds stop (builder.ts),
// and its whole heap, grown by YAML parsing and zone building, goes back to
// the system.
import { getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { runBuild } from './run.js';
import { MAX_WARM_HEAP_BYTES } from './builder.js';
import type { BuildRequest, HeapReport } from './messages.js';
import { transferList } from '../wire/served.js';
import { ParseCache } from '../zone/compile.js';
import { SignatureCache } from '../dnssec/rrsig.js';
import { ParsedDocuments } from '../sources/records-file.js';

const cache = new ParseCache();
const signatures = new SignatureCache();
const documents = new ParsedDocuments();
/**
 * Given by the image's --expose-gc (scripts/images/dns-server-node-flags.ts): a build's heap is
 * mostly garbage, which V8 may keep uncollected for a while; the main thread decides on what is live.
 */
const collectGarbage = (globalThis as { gc?: () => void }).gc;

parentPort!.on('message', (req: BuildRequest) => {
  const reply = runBuild(req, cache, signatures, documents);
  parentPort!.postMessage(reply, reply.served ? transferList(reply.served) : []);
  // After the reply, so that a change reaches the answers without waiting for it (15–60 ms); the
  // next request waits in the port meanwhile, and the main thread keeps or ends the thread on it.
  let heap = getHeapStatistics().total_heap_size;
  if (heap > MAX_WARM_HEAP_BYTES && collectGarbage) {
    collectGarbage();
    heap = getHeapStatistics().used_heap_size;
  }
  parentPort!.postMessage({ kind: 'heap', workerHeapBytes: heap } satisfies HeapReport);
});
