// Worker thread entry: one build request in, one reply out (the arena and the
// slot tables transferred, not copied), then the thread ends and its whole
// heap, grown by YAML parsing and zone building, goes back to the system.
import { parentPort } from 'node:worker_threads';
import { runBuild } from './build-run.js';
import type { BuildRequest } from './builder.js';
import { transferList } from './wire/served.js';

parentPort!.once('message', (req: BuildRequest) => {
  const reply = runBuild(req);
  parentPort!.postMessage(reply, reply.served ? transferList(reply.served) : []);
});
