// The dns-server's query counts per zone, in the shape of CoreDNS's metrics:
// by transport and type, by rcode, and the time each took in histogram slots.
// Plain typed arrays, so that counting a query on the hot path is a few array
// increments; metrics.ts reads them (and other processes' copies) when scraped.
const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];

/** The query types counted by name, as CoreDNS's monitored types; the others count as "other". */
const MONITORED_TYPES: [string, number][] = [
  ['A', 1],
  ['NS', 2],
  ['CNAME', 5],
  ['SOA', 6],
  ['PTR', 12],
  ['HINFO', 13],
  ['MX', 15],
  ['TXT', 16],
  ['AAAA', 28],
  ['SRV', 33],
  ['NAPTR', 35],
  ['DS', 43],
  ['RRSIG', 46],
  ['NSEC', 47],
  ['DNSKEY', 48],
  ['NSEC3', 50],
  ['SVCB', 64],
  ['HTTPS', 65],
  ['IXFR', 251],
  ['AXFR', 252],
  ['ANY', 255],
  ['CAA', 257],
];
const TYPE_LABELS = [...MONITORED_TYPES.map(([name]) => name), 'other', 'unparsed'];
const OTHER = MONITORED_TYPES.length;
const UNPARSED = OTHER + 1;
const TYPE_INDEX = new Uint8Array(65536).fill(OTHER);
MONITORED_TYPES.forEach(([, code], i) => (TYPE_INDEX[code] = i));
const PROTOS = ['udp', 'tcp'] as const;
/** By rcode (BADVERS = 16 included), plus one slot for dropped packets. */
const RCODE_SLOTS = 18;
/** CoreDNS's label for queries of no zone served here (answered REFUSED) or not parsed. */
export const NO_ZONE = 'dropped';
/**
 * Seconds from the query read to its answer made (parse, lookup, encoding: a few microseconds when
 * all is well, so finer than CoreDNS's buckets, which start at 0.25 ms).
 */
export const DURATION_BUCKETS = [
  0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
];

/** One zone's query counts (arrays, so that they cross to the primary process as JSON). */
export interface ZoneCounters {
  /** By transport (udp, tcp) × type index of TYPE_LABELS. */
  requests: number[];
  /** By rcode, the last slot dropped packets. */
  rcodes: number[];
  /** By DURATION_BUCKETS slot, the last +Inf. */
  durations: number[];
  durationSeconds: number;
}

export class ZoneCounts {
  readonly requests = new Float64Array(PROTOS.length * TYPE_LABELS.length);
  readonly rcodes = new Float64Array(RCODE_SLOTS);
  readonly durations = new Float64Array(DURATION_BUCKETS.length + 1);
  durationSeconds = 0;

  toJSON(): ZoneCounters {
    return {
      requests: [...this.requests],
      rcodes: [...this.rcodes],
      durations: [...this.durations],
      durationSeconds: this.durationSeconds,
    };
  }

  /** One query (rcode < 0: dropped, no response) that took `seconds`. */
  count(transport: 'udp' | 'tcp', qtype: number | undefined, rcode: number, seconds: number): void {
    const type = qtype === undefined ? UNPARSED : TYPE_INDEX[qtype]!;
    this.requests[(transport === 'udp' ? 0 : TYPE_LABELS.length) + type]!++;
    this.rcodes[rcode < 0 ? RCODE_SLOTS - 1 : Math.min(rcode, 16)]!++;
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket++;
    this.durations[bucket]!++;
    this.durationSeconds += seconds;
  }

  /** The non-zero request counts with their proto and type labels. */
  *requestSeries(): Generator<[{ proto: string; type: string }, number]> {
    for (let i = 0; i < this.requests.length; i++) {
      const n = this.requests[i]!;
      if (n === 0) continue;
      const proto = PROTOS[Math.floor(i / TYPE_LABELS.length)]!;
      yield [{ proto, type: TYPE_LABELS[i % TYPE_LABELS.length]! }, n];
    }
  }

  /** The non-zero response counts with their rcode label ("dropped": no response sent). */
  *responseSeries(): Generator<[{ rcode: string }, number]> {
    for (let rcode = 0; rcode < this.rcodes.length; rcode++) {
      const n = this.rcodes[rcode]!;
      if (n === 0) continue;
      const name =
        rcode === RCODE_SLOTS - 1
          ? 'dropped'
          : rcode === 16
            ? 'BADVERS'
            : (RCODE_NAMES[rcode] ?? `RCODE${rcode}`);
      yield [{ rcode: name }, n];
    }
  }

  add(c: ZoneCounters): void {
    c.requests.forEach((n, i) => (this.requests[i]! += n));
    c.rcodes.forEach((n, i) => (this.rcodes[i]! += n));
    c.durations.forEach((n, i) => (this.durations[i]! += n));
    this.durationSeconds += c.durationSeconds;
  }
}

/** CoreDNS's zone label: the zone with its trailing dot ("xcc.test."), or "dropped". */
export function zoneLabel(zone: string): string {
  return zone === NO_ZONE || zone.endsWith('.') ? zone : `${zone}.`;
}
