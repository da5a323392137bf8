// A zone-transfer client for tests and benchmarks: AXFR or IXFR over TCP from
// a source address of our choosing, signed with TSIG (or with a wrong key, a
// skewed clock, none at all), reading every message of the answer. Its TSIG
// is a signer of its own (RFC 8945 section 4.3.3), not the dns-server's: the
// test checks one implementation against another, as NSD, Knot and BIND do.
import { createHmac } from 'node:crypto';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import type { TsigKeySpec } from './secondaries.js';

export interface TransferAsk {
  address: string;
  port: number;
  /** Source address (a listed secondary's); the kernel's choice when unset. */
  source?: string;
  zone: string;
  qtype: 'AXFR' | 'IXFR';
  /** IXFR: the serial we claim to have. */
  serial?: number;
  key?: TsigKeySpec;
  /** Seconds added to our clock when signing. */
  skewSeconds?: number;
  timeoutMs?: number;
}

export interface TransferAnswer {
  messages: Buffer[];
  rcode: string;
  /** The TSIG error of the first message (0 none), undefined without a TSIG. */
  tsigError: number | undefined;
  answers: dnsPacket.Answer[];
  /** Octets received, length prefixes included. */
  octets: number;
}

function nameWire(name: string): Buffer {
  const labels = name.toLowerCase().replace(/\.$/, '').split('.').filter(Boolean);
  return Buffer.concat([
    ...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])),
    Buffer.from([0]),
  ]);
}

/** `msg` with a TSIG record (hmac-sha256) signed at `now` (seconds) appended. */
export function signRequest(msg: Buffer, key: TsigKeySpec, now: number): Buffer {
  const u16 = (v: number) => Buffer.from([v >> 8, v & 255]);
  const time = Buffer.alloc(6);
  time.writeUIntBE(now, 0, 6);
  const name = nameWire(key.name);
  const algorithm = nameWire('hmac-sha256');
  const fudge = u16(300);
  const variables = Buffer.concat([name, u16(255), Buffer.alloc(4), algorithm, time, fudge, u16(0), u16(0)]);
  const mac = createHmac('sha256', Buffer.from(key.secret, 'base64')).update(msg).update(variables).digest();
  const rdata = Buffer.concat([
    algorithm,
    time,
    fudge,
    u16(mac.length),
    mac,
    msg.subarray(0, 2),
    u16(0),
    u16(0),
  ]);
  const out = Buffer.concat([msg, name, u16(250), u16(255), Buffer.alloc(4), u16(rdata.length), rdata]);
  out.writeUInt16BE(msg.readUInt16BE(10) + 1, 10);
  return out;
}

/** The Error field of the TSIG that ends `msg`, undefined without one. */
export function tsigErrorOf(msg: Buffer): number | undefined {
  const decoded = dnsPacket.decode(msg);
  const last = decoded.additionals?.at(-1) as { type?: string; data?: unknown } | undefined;
  if (!last || (last.type as string) !== 'TSIG') return undefined;
  const rdata = last.data as Buffer;
  // Algorithm name, time (6), fudge (2), MAC size (2), MAC, original ID (2), then the error.
  let at = 0;
  while (rdata[at] !== 0) at += rdata[at]! + 1;
  at += 1 + 8;
  const macSize = rdata.readUInt16BE(at);
  return rdata.readUInt16BE(at + 2 + macSize + 2);
}

export function transferRequest(ask: TransferAsk): Buffer {
  const msg = dnsPacket.encode({
    type: 'query',
    id: Math.floor(Math.random() * 0xffff),
    questions: [{ type: ask.qtype, name: ask.zone, class: 'IN' }],
    authorities:
      ask.qtype === 'IXFR'
        ? [
            {
              type: 'SOA',
              name: ask.zone,
              ttl: 0,
              data: {
                mname: `ns1.${ask.zone}`,
                rname: `hostmaster.${ask.zone}`,
                serial: ask.serial ?? 0,
                refresh: 0,
                retry: 0,
                expire: 0,
                minimum: 0,
              },
            },
          ]
        : [],
  });
  if (!ask.key) return msg;
  return signRequest(msg, ask.key, Math.floor(Date.now() / 1000) + (ask.skewSeconds ?? 0));
}

/** Sends `request` (or the one `ask` makes) and reads the answer until it is complete, refused, or times out. */
export function transfer(ask: TransferAsk, request = transferRequest(ask)): Promise<TransferAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: ask.address, port: ask.port, localAddress: ask.source });
    const messages: Buffer[] = [];
    const answers: dnsPacket.Answer[] = [];
    let pending = Buffer.alloc(0);
    let octets = 0;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `transfer of ${ask.zone} from ${ask.address}:${ask.port}: incomplete after ${messages.length} messages`,
        ),
      );
    }, ask.timeoutMs ?? 10_000);
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const first = messages[0];
      resolve({
        messages,
        rcode: first ? ((dnsPacket.decode(first) as { rcode?: string }).rcode ?? 'NOERROR') : 'NONE',
        tsigError: first ? tsigErrorOf(first) : undefined,
        answers,
        octets,
      });
    };
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => finish());
    socket.on('data', (chunk: Buffer) => {
      octets += chunk.length;
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const msg = pending.subarray(2, 2 + pending.readUInt16BE(0));
        pending = pending.subarray(2 + msg.length);
        messages.push(Buffer.from(msg));
        const decoded = dnsPacket.decode(msg);
        if ((msg[3]! & 0x0f) !== 0) return finish();
        for (const a of decoded.answers ?? []) answers.push(a);
        const soas = answers.filter((a) => a.type === 'SOA');
        const soaOnly = ask.qtype === 'IXFR' && messages.length === 1 && answers.length === 1;
        if (
          soaOnly ||
          (soas.length >= 2 &&
            answers.at(-1)?.type === 'SOA' &&
            sameSoa(soas[0]!, answers.at(-1)!) &&
            endsStream(ask, soas))
        )
          return finish();
      }
    });
    const framed = Buffer.alloc(2 + request.length);
    framed.writeUInt16BE(request.length, 0);
    request.copy(framed, 2);
    socket.write(framed);
  });
}

function serialOf(a: dnsPacket.Answer): number {
  return (a as { data: { serial: number } }).data.serial;
}

function sameSoa(a: dnsPacket.Answer, b: dnsPacket.Answer): boolean {
  return serialOf(a) === serialOf(b);
}

/**
 * AXFR ends at the second SOA. IXFR's differences hold the current SOA too (as the new SOA of the
 * last difference): it ends at the current SOA that closes a difference, the third of that serial
 * (RFC 1995 section 4), or the second in an IXFR answered with the whole zone.
 */
function endsStream(ask: TransferAsk, soas: dnsPacket.Answer[]): boolean {
  if (ask.qtype === 'AXFR') return true;
  const current = serialOf(soas[0]!);
  const times = soas.filter((s) => serialOf(s) === current).length;
  const incremental = soas.length > 1 && serialOf(soas[1]!) !== current;
  return incremental ? times >= 3 : times >= 2;
}

/** The answer's records other than the SOA, as "name type data" lines, sorted. */
export function recordLines(answers: dnsPacket.Answer[]): string[] {
  return answers
    .filter((a) => a.type !== 'SOA')
    .map((a) => `${a.name} ${a.type} ${JSON.stringify((a as { data?: unknown }).data)}`)
    .sort();
}
