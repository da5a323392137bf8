// Counters for /metrics in the Prometheus text format (version 0.0.4). Kept
// as plain arrays indexed by type and rcode so that counting a query costs
// two array increments on the hot path.
import { typeName } from './zone/rr.js';

const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];

export interface QueryCounters {
  byType: [number, number][];
  byRcode: number[];
  udp: number;
  tcp: number;
  unparsed: number;
}

export class Metrics {
  private readonly byType = new Float64Array(65536);
  /** By rcode (BADVERS = 16 included), plus one slot for dropped packets. */
  private readonly byRcode = new Float64Array(18);
  private readonly byTransport = { udp: 0, tcp: 0 };
  private unparsed = 0;
  records = 0;
  serial = 0;
  reloads = 0;
  reloadErrors = 0;
  recordProblems = 0;
  /** Unix milliseconds of the last successful sync or load of each source. */
  readonly lastSync = new Map<string, number>();

  /** Query counters of other processes (--workers), by process, as they last reported them. */
  private readonly peers = new Map<number, QueryCounters>();

  /** This process's query counters, sparse, to send to the process that serves /metrics. */
  counters(): QueryCounters {
    const byType: [number, number][] = [];
    this.byType.forEach((n, type) => n > 0 && byType.push([type, n]));
    return {
      byType,
      byRcode: [...this.byRcode],
      udp: this.byTransport.udp,
      tcp: this.byTransport.tcp,
      unparsed: this.unparsed,
    };
  }

  setPeer(id: number, counters: QueryCounters): void {
    this.peers.set(id, counters);
  }

  countQuery(transport: 'udp' | 'tcp', qtype: number | undefined, rcode: number): void {
    this.byTransport[transport]++;
    if (qtype === undefined) this.unparsed++;
    else this.byType[qtype]!++;
    this.byRcode[rcode < 0 ? 17 : Math.min(rcode, 16)]!++;
  }

  render(now = Date.now()): string {
    const all = [this.counters(), ...this.peers.values()];
    const byType = new Map<number, number>();
    const byRcode = new Float64Array(this.byRcode.length);
    let unparsed = 0;
    const byTransport = { udp: 0, tcp: 0 };
    for (const c of all) {
      for (const [type, n] of c.byType) byType.set(type, (byType.get(type) ?? 0) + n);
      c.byRcode.forEach((n, i) => (byRcode[i]! += n));
      unparsed += c.unparsed;
      byTransport.udp += c.udp;
      byTransport.tcp += c.tcp;
    }
    const lines: string[] = [];
    const metric = (name: string, kind: 'counter' | 'gauge', help: string, samples: [string, number][]) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${kind}`);
      for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
    };
    const types: [string, number][] = [];
    [...byType]
      .sort((a, b) => a[0] - b[0])
      .forEach(([type, n]) => types.push([`{type="${typeName(type)}"}`, n]));
    if (unparsed > 0) types.push(['{type="unparsed"}', unparsed]);
    metric('capi_dns_server_queries_by_type_total', 'counter', 'Queries answered, by query type.', types);
    const rcodes: [string, number][] = [];
    byRcode.forEach((n, rcode) => {
      if (n === 0) return;
      const name =
        rcode === 17 ? 'dropped' : rcode === 16 ? 'BADVERS' : (RCODE_NAMES[rcode] ?? `RCODE${rcode}`);
      rcodes.push([`{rcode="${name}"}`, n]);
    });
    metric(
      'capi_dns_server_responses_by_rcode_total',
      'counter',
      'Queries by response code ("dropped": no response sent).',
      rcodes,
    );
    metric('capi_dns_server_queries_by_transport_total', 'counter', 'Queries by transport.', [
      ['{transport="udp"}', byTransport.udp],
      ['{transport="tcp"}', byTransport.tcp],
    ]);
    metric('capi_dns_server_records', 'gauge', 'Resource records served, SOA and NS included.', [
      ['', this.records],
    ]);
    metric('capi_dns_server_soa_serial', 'gauge', 'The SOA serial of the served zones.', [['', this.serial]]);
    metric('capi_dns_server_zone_builds_total', 'counter', 'Times the served data was rebuilt.', [
      ['', this.reloads],
    ]);
    metric('capi_dns_server_source_errors_total', 'counter', 'Failed loads or syncs of a source.', [
      ['', this.reloadErrors],
    ]);
    metric(
      'capi_dns_server_record_problems',
      'gauge',
      'Records skipped in the last build because they cannot be served.',
      [['', this.recordProblems]],
    );
    metric(
      'capi_dns_server_last_sync_age_seconds',
      'gauge',
      'Seconds since each source last delivered its records.',
      [...this.lastSync].map(([source, at]) => [
        `{source="${source.replace(/["\\\n]/g, '_')}"}`,
        (now - at) / 1000,
      ]),
    );
    return `${lines.join('\n')}\n`;
  }
}
