import dnsPacket from 'dns-packet';
import { createLogger } from '../../runtime/log.js';
import { compileZones } from '../zone/compile.js';
import { recordSet, sourced, zoneConfig } from '../zone/fixtures.test-support.js';
import { transferImageOf } from './image.js';
import { messagesOf } from './responses.js';
import { TransferServer, type TransferResult } from './transfer-server.js';
import { HMAC_SHA256, sign, type TsigKey } from './tsig.js';
import { transferRequestOf } from './request.js';

const key: TsigKey = { name: 'k', algorithm: HMAC_SHA256, secret: Buffer.alloc(32, 1) };
const SECONDARY = '127.0.0.2';

function zoneImage(serial: number, values: string[]) {
  const transfer = { secondaries: [{ address: SECONDARY, port: 53 }], keyName: 'k' };
  const config = zoneConfig('xfr.test', { transfer });
  const sets = sourced(recordSet('www', [{ name: 'www.xfr.test', type: 'A', values }]));
  const { zones } = compileZones(sets, [config], serial);
  return transferImageOf(zones[0]!, transfer);
}

function request(qtype: 'AXFR' | 'IXFR', serial = 0): Buffer {
  const msg = dnsPacket.encode({
    type: 'query',
    id: 1,
    questions: [{ type: qtype, name: 'xfr.test', class: 'IN' }],
    authorities:
      qtype === 'IXFR'
        ? [
            {
              type: 'SOA',
              name: 'xfr.test',
              data: { mname: 'a', rname: 'b', serial, refresh: 0, retry: 0, expire: 0, minimum: 0 },
            },
          ]
        : [],
  });
  return sign(msg, key, { now: Math.floor(Date.now() / 1000) }).message;
}

function server(results: TransferResult[] = [], maxConcurrent = 2) {
  const s = new TransferServer(
    { keys: [key], maxConcurrent, journalOctets: 1 << 20 },
    { log: createLogger('error', {}, () => undefined), onResult: (_z, r) => results.push(r) },
  );
  s.load([zoneImage(10, ['10.0.0.1', '10.0.0.2'])]);
  return s;
}

function answers(out: ReturnType<TransferServer['answerTcp']>): dnsPacket.Answer[] {
  const messages = Buffer.isBuffer(out) ? [out] : [...{ [Symbol.iterator]: () => out! as Iterator<Buffer> }];
  return messages
    .flatMap((m) => dnsPacket.decode(m).answers ?? [])
    .filter((a) => (a.type as string) !== 'TSIG');
}

describe('TransferServer', () => {
  it('answers AXFR with SOA, records, SOA, and leaves other messages to the responder', () => {
    const s = server();
    const out = answers(s.answerTcp(request('AXFR'), SECONDARY));
    expect(out.map((a) => a.type)).toEqual(['SOA', 'NS', 'A', 'A', 'SOA']);
    const plain = dnsPacket.encode({
      type: 'query',
      id: 2,
      questions: [{ type: 'A', name: 'www.xfr.test' }],
    });
    expect(s.answerTcp(plain, SECONDARY)).toBeUndefined();
  });

  it('answers IXFR with the condensed difference, the whole zone for an unknown serial, the SOA when current', () => {
    const s = server();
    s.load([zoneImage(11, ['10.0.0.1', '10.0.0.3'])]);
    const ixfr = answers(s.answerTcp(request('IXFR', 10), SECONDARY));
    const line = (a: dnsPacket.Answer) => {
      const data = (a as { data: unknown }).data;
      return `${a.type} ${a.type === 'SOA' ? (data as { serial: number }).serial : String(data)}`;
    };
    expect(ixfr.map(line)).toEqual(['SOA 11', 'SOA 10', 'A 10.0.0.2', 'SOA 11', 'A 10.0.0.3', 'SOA 11']);
    expect(answers(s.answerTcp(request('IXFR', 3), SECONDARY)).map((a) => a.type)).toEqual([
      'SOA',
      'NS',
      'A',
      'A',
      'SOA',
    ]);
    expect(answers(s.answerTcp(request('IXFR', 11), SECONDARY)).map(line)).toEqual(['SOA 11']);
  });

  it('refuses clients not listed and unsigned requests; bounds the transfers streaming at once', () => {
    const results: TransferResult[] = [];
    const s = server(results, 2);
    const refused = s.answerTcp(request('AXFR'), '127.0.0.9') as Buffer;
    expect(dnsPacket.decode(refused).flags! & 0xf).toBe(5);
    const unsigned = dnsPacket.encode({
      type: 'query',
      id: 3,
      questions: [{ type: 'AXFR', name: 'xfr.test' }],
    });
    expect((s.answerTcp(unsigned, SECONDARY) as Buffer)[3]! & 0xf).toBe(5);
    // Two streams started and not finished hold both slots; the third is SERVFAIL.
    const a = s.answerTcp(request('AXFR'), `::ffff:${SECONDARY}`) as Iterator<Buffer>;
    const b = s.answerTcp(request('AXFR'), SECONDARY) as Iterator<Buffer>;
    a.next();
    b.next();
    expect(s.streaming).toBe(2);
    expect((s.answerTcp(request('AXFR'), SECONDARY) as Buffer)[3]! & 0xf).toBe(2);
    // A connection that goes away ends its stream: the slot is free again.
    a.return!(undefined);
    expect(s.streaming).toBe(1);
    expect(results).toEqual(['refused', 'refused', 'busy', 'abandoned']);
  });

  it('packs records into messages of bounded size, the question in the first only', () => {
    const req = request('AXFR');
    const parsed = transferRequestOf(req);
    if (!parsed || parsed === 'formerr') throw new Error('not parsed');
    const records = Array.from({ length: 100 }, () => Buffer.alloc(100, 1));
    const messages = [...messagesOf(req, parsed.questionEnd, records, 1000)];
    expect(messages).toHaveLength(10);
    expect(messages.map((m) => m.readUInt16BE(4))).toEqual([1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(messages.reduce((n, m) => n + m.readUInt16BE(6), 0)).toBe(100);
  });
});
