// Packet generators for robustness tests: random bytes and mutations of
// valid queries (bit flips, cut short, counts and lengths changed, pointers
// made up). Deterministic for a seed. Here rather than beside the responder
// because the socket fuzz test (test/integration/dns-fuzz.test.ts) and the
// generated zones (dnszone.ts) use it too, and the dns-server's dist/ must
// not ship it; the in-process fuzz test (dns-server/wire/fuzz.test.ts)
// imports it from here.

export function xorshift(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x100000000;
  };
}

export function mutatedPackets(seeds: Buffer[], count: number, seed = 1): Generator<Buffer> {
  const rnd = xorshift(seed);
  const int = (n: number) => Math.floor(rnd() * n);
  return (function* () {
    for (let i = 0; i < count; i++) {
      const kind = int(8);
      if (kind === 0) {
        const b = Buffer.alloc(int(600));
        for (let j = 0; j < b.length; j++) b[j] = int(256);
        yield b;
        continue;
      }
      const b = Buffer.from(seeds[int(seeds.length)]!);
      switch (kind) {
        case 1: // flip a few bits
          for (let n = 1 + int(4); n > 0; n--) b[int(b.length)]! ^= 1 << int(8);
          yield b;
          break;
        case 2: // cut short
          yield b.subarray(0, int(b.length));
          break;
        case 3: // header counts
          b.writeUInt16BE(int(4) === 0 ? int(65536) : int(3), 4 + 2 * int(4));
          yield b;
          break;
        case 4: // a label length or pointer somewhere
          b[12 + int(Math.max(1, b.length - 12))] = [0xc0, 0x3f, 0x40, 0xff, 0x00, 0x01][int(6)]!;
          yield b;
          break;
        case 5: // flags and opcode
          b[2] = int(256);
          b[3] = int(256);
          yield b;
          break;
        case 6: {
          // garbage appended, or an extra (bad) additional record
          const tail = Buffer.alloc(1 + int(40));
          for (let j = 0; j < tail.length; j++) tail[j] = int(256);
          b.writeUInt16BE(b.readUInt16BE(10) + int(2), 10);
          yield Buffer.concat([b, tail]);
          break;
        }
        default: // random bytes overwritten
          for (let n = 1 + int(8); n > 0; n--) b[int(b.length)] = int(256);
          yield b;
      }
    }
  })();
}
