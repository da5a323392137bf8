// Counters for /metrics. Queries are counted in plain arrays indexed by type
// and rcode, so that counting one costs two array increments on the hot path;
// the prom-client collectors read them (and the counts of the other answering
// processes) only when /metrics is scraped.
import { Counter, Gauge, processRegistry, Registry } from '../../process/metrics.js';
import { typeName } from '../zone/rr.js';
import { CLOSE_REASONS, type CloseReason } from './tcp-connections.js';
import type { ProberStats } from '../health/prober.js';

const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];

export interface QueryCounters {
  byType: [number, number][];
  byRcode: number[];
  udp: number;
  tcp: number;
  unparsed: number;
  /** TCP connections closed by the server (or refused), by reason, indexed as CLOSE_REASONS. */
  tcpClosed: number[];
}

export class Metrics {
  private readonly byType = new Float64Array(65536);
  /** By rcode (BADVERS = 16 included), plus one slot for dropped packets. */
  private readonly byRcode = new Float64Array(18);
  private readonly byTransport = { udp: 0, tcp: 0 };
  private unparsed = 0;
  private readonly tcpClosed = CLOSE_REASONS.map(() => 0);
  records = 0;
  serial = 0;
  reloads = 0;
  reloadErrors = 0;
  recordProblems = 0;
  /** The TCP connections of the server in this process (none in the process that forks --workers). */
  tcpState: () => { connections: number; bufferedBytes: number } = () => ({
    connections: 0,
    bufferedBytes: 0,
  });
  /** The health checks of the traffic policies (health/prober.ts), read when scraped. */
  probes: () => ProberStats | undefined = () => undefined;
  /** Per policy name and type ("name/A"), the tier answering (null: none healthy), as of the last build. */
  answeringTiers: [string, number | null][] = [];
  /** Unix milliseconds of the last successful sync or load of each source. */
  readonly lastSync = new Map<string, number>();

  /** Query counters of other processes (--workers), by process, as they last reported them. */
  private readonly peers = new Map<number, QueryCounters>();
  /** Only the process that serves /metrics has one; answering processes just count. */
  readonly registry: Registry;

  constructor(options: { serve?: boolean } = {}) {
    this.registry = options.serve === false ? new Registry() : processRegistry();
    if (options.serve !== false) this.register();
  }

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
      tcpClosed: [...this.tcpClosed],
    };
  }

  countTcpClose(reason: CloseReason): void {
    this.tcpClosed[CLOSE_REASONS.indexOf(reason)]!++;
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

  private registerProbes(): void {
    const registers = [this.registry];
    const stats = () => this.probes();
    const tiers = () => this.answeringTiers;
    new Gauge({
      name: 'capi_dns_server_probe_targets',
      help: "Addresses probed by the traffic policies' health checks, by state.",
      labelNames: ['state'],
      registers,
      collect() {
        const s = stats();
        this.reset();
        if (!s) return;
        this.set({ state: 'healthy' }, s.targets - s.unhealthy);
        this.set({ state: 'unhealthy' }, s.unhealthy);
      },
    });
    new Counter({
      name: 'capi_dns_server_probes_total',
      help: 'Health-check probes made from this cluster, by result.',
      labelNames: ['result'],
      registers,
      collect() {
        const s = stats();
        this.reset();
        if (!s) return;
        this.inc({ result: 'success' }, s.probes.success);
        this.inc({ result: 'failure' }, s.probes.failure);
      },
    });
    new Counter({
      name: 'capi_dns_server_probe_transitions_total',
      help: 'Probe targets that became healthy or unhealthy (after their thresholds).',
      labelNames: ['to'],
      registers,
      collect() {
        const s = stats();
        this.reset();
        if (!s) return;
        this.inc({ to: 'healthy' }, s.transitions.healthy);
        this.inc({ to: 'unhealthy' }, s.transitions.unhealthy);
      },
    });
    new Gauge({
      name: 'capi_dns_server_policy_answering_tier',
      help: 'The failover tier answering each name with a traffic policy, 0 first; -1: none healthy.',
      labelNames: ['name', 'type'],
      registers,
      collect() {
        this.reset();
        for (const [key, tier] of tiers()) {
          const slash = key.lastIndexOf('/');
          this.set({ name: key.slice(0, slash), type: key.slice(slash + 1) }, tier ?? -1);
        }
      },
    });
  }

  /** The exposition text, as /metrics serves it. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /**
   * This process's counters and those its answering processes last reported, summed: what the
   * collectors below publish at each scrape.
   */
  private totals() {
    const byType = new Map<number, number>();
    const byRcode = new Float64Array(this.byRcode.length);
    const tcpClosed = CLOSE_REASONS.map(() => 0);
    const totals = { byType, byRcode, unparsed: 0, udp: 0, tcp: 0, tcpClosed };
    for (const c of [this.counters(), ...this.peers.values()]) {
      for (const [type, n] of c.byType) byType.set(type, (byType.get(type) ?? 0) + n);
      c.byRcode.forEach((n, i) => (byRcode[i]! += n));
      totals.unparsed += c.unparsed;
      totals.udp += c.udp;
      totals.tcp += c.tcp;
      c.tcpClosed.forEach((n, i) => (tcpClosed[i]! += n));
    }
    return totals;
  }

  private register(): void {
    const registers = [this.registry];
    this.registerProbes();
    // prom-client calls collect() with the metric as `this`; these reach the counts.
    const totals = () => this.totals();
    const lastSync = this.lastSync;
    new Counter({
      name: 'capi_dns_server_queries_by_type_total',
      help: 'Queries answered, by query type.',
      labelNames: ['type'],
      registers,
      collect() {
        const t = totals();
        this.reset();
        for (const [type, n] of t.byType) this.inc({ type: typeName(type) }, n);
        if (t.unparsed > 0) this.inc({ type: 'unparsed' }, t.unparsed);
      },
    });
    new Counter({
      name: 'capi_dns_server_responses_by_rcode_total',
      help: 'Queries by response code ("dropped": no response sent).',
      labelNames: ['rcode'],
      registers,
      collect() {
        this.reset();
        totals().byRcode.forEach((n, rcode) => {
          if (n === 0) return;
          const name =
            rcode === 17 ? 'dropped' : rcode === 16 ? 'BADVERS' : (RCODE_NAMES[rcode] ?? `RCODE${rcode}`);
          this.inc({ rcode: name }, n);
        });
      },
    });
    new Counter({
      name: 'capi_dns_server_queries_by_transport_total',
      help: 'Queries by transport.',
      labelNames: ['transport'],
      registers,
      collect() {
        const t = totals();
        this.reset();
        this.inc({ transport: 'udp' }, t.udp);
        this.inc({ transport: 'tcp' }, t.tcp);
      },
    });
    new Counter({
      name: 'capi_dns_server_tcp_connections_closed_total',
      help: 'TCP connections closed or refused by the server, by reason (idle, message_timeout, write_stalled, lifetime, query_limit, client_limit, server_full, evicted, malformed).',
      labelNames: ['reason'],
      registers,
      collect() {
        const t = totals();
        this.reset();
        CLOSE_REASONS.forEach((reason, i) => this.inc({ reason }, t.tcpClosed[i]!));
      },
    });
    const gauge = (name: string, help: string, value: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(value());
        },
      });
    const counter = (name: string, help: string, value: () => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(value());
        },
      });
    gauge(
      'capi_dns_server_tcp_connections',
      'Open TCP connections of this process (with --workers, each answering process has its own).',
      () => this.tcpState().connections,
    );
    gauge(
      'capi_dns_server_tcp_buffered_bytes',
      'Answer octets written to TCP connections and not yet taken by their clients.',
      () => this.tcpState().bufferedBytes,
    );
    gauge('capi_dns_server_records', 'Resource records served, SOA and NS included.', () => this.records);
    gauge('capi_dns_server_soa_serial', 'The SOA serial of the served zones.', () => this.serial);
    counter('capi_dns_server_zone_builds_total', 'Times the served data was rebuilt.', () => this.reloads);
    counter(
      'capi_dns_server_source_errors_total',
      'Failed loads or syncs of a source.',
      () => this.reloadErrors,
    );
    gauge(
      'capi_dns_server_record_problems',
      'Records skipped in the last build because they cannot be served.',
      () => this.recordProblems,
    );
    new Gauge({
      name: 'capi_dns_server_last_sync_age_seconds',
      help: 'Seconds since each source last delivered its records.',
      labelNames: ['source'],
      registers,
      collect() {
        const now = Date.now();
        this.reset();
        for (const [source, at] of lastSync) this.set({ source }, (now - at) / 1000);
      },
    });
  }
}
