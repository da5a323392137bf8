// The floor of Node's UDP path: answers every DNS query with the query itself
// (QR set, no records), no lookup, no allocation. Whatever a DNS server in
// Node does per datagram, it cannot answer faster than this on one thread.
// Prints its port on stdout.
//
//   node dist/bench/udp-echo.js [--reuse-port] [--port 0]
import dgram from 'node:dgram';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'reuse-port': { type: 'boolean', default: false },
    // The default dns.lookup per send, to show what the server's own lookup saves.
    'dns-lookup': { type: 'boolean', default: false },
  },
});
const sock = dgram.createSocket({
  type: 'udp4',
  reusePort: values['reuse-port'],
  recvBufferSize: 4 << 20,
  sendBufferSize: 4 << 20,
  ...(values['dns-lookup']
    ? {}
    : {
        lookup: (address: string, _options: unknown, callback: (e: null, a: string, f: number) => void) =>
          callback(null, address, 4),
      }),
});
sock.on('message', (msg, peer) => {
  msg[2] = msg[2]! | 0x80;
  sock.send(msg, peer.port, peer.address);
});
sock.bind(Number(values.port), '127.0.0.1', () => process.stdout.write(`${sock.address().port}\n`));
process.on('SIGTERM', () => sock.close(() => process.exit(0)));
