// Counters for /metrics. Queries are counted per zone in plain arrays
// (query-counts.ts), so that counting one costs a map lookup and a few array
// increments on the hot path; the prom-client collectors read them (and the
// counts of the other answering processes) only when /metrics is scraped. The
// DNS metrics have CoreDNS's names and labels
// (coredns_dns_requests_total{zone,proto,type}, …) under the capi_dns_server_
// prefix: dashboards written for CoreDNS read them.
import { registerBuildInfo } from '../../runtime/build-info.js';
import { Counter, Gauge, processRegistry, registerReadHistogram, Registry } from '../../runtime/metrics.js';
import { DURATION_BUCKETS, NO_ZONE, ZoneCounts, zoneLabel, type ZoneCounters } from './query-counts.js';
import { CLOSE_REASONS, type CloseReason } from './tcp-connections.js';
import type { ProberStats } from '../health/prober.js';

export interface QueryCounters {
  zones: [string, ZoneCounters][];
  /** TCP connections closed by the server (or refused), by reason, indexed as CLOSE_REASONS. */
  tcpClosed: number[];
  /** UDP answers made but not sent (the batched path), by reason, indexed as UDP_NOT_SENT. */
  udpNotSent: number[];
  /** UDP responses held back by response rate limiting, indexed as RATE_LIMITED (absent from older peers). */
  rateLimited?: number[];
}

/** What response rate limiting did with a response past the rate (rate-limit.ts). */
export const RATE_LIMITED = ['dropped', 'slipped'] as const;

/**
 * Why an answer made on the batched UDP path was not sent: the kernel refused that datagram
 * (EMSGSIZE, an unreachable peer), or the send buffer stayed full and the rest of its batch was
 * dropped (EAGAIN, ENOBUFS). See native-udp.ts.
 */
export const UDP_NOT_SENT = ['refused', 'buffer_full'] as const;

export class Metrics {
  /** Query counts by zone name (NO_ZONE for none). */
  private readonly byZone = new Map<string, ZoneCounts>();
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
  /** UDP answers not sent so far, indexed as UDP_NOT_SENT (the batched path sets it). */
  udpNotSent: () => number[] = () => UDP_NOT_SENT.map(() => 0);
  /** UDP responses held back by rate limiting so far, indexed as RATE_LIMITED (the server sets it). */
  rateLimited: () => number[] = () => RATE_LIMITED.map(() => 0);
  /** The health checks of the traffic policies (health/prober.ts), read when scraped. */
  probes: () => ProberStats | undefined = () => undefined;
  /** Per policy name and type ("name/A"), the tier answering (null: none healthy), as of the last build. */
  answeringTiers: [string, number | null][] = [];
  /** Unix milliseconds of the last successful sync or load of each source. */
  readonly lastSync = new Map<string, number>();
  /** Unix milliseconds of the oldest delivery not yet in the served zones; undefined when all are. */
  unbuiltSince: number | undefined;

  /** Query counters of other processes (--workers), by process, as they last reported them. */
  private readonly peers = new Map<number, QueryCounters>();
  /** Only the process that serves /metrics has one; answering processes just count. */
  readonly registry: Registry;

  constructor(options: { serve?: boolean } = {}) {
    this.registry = options.serve === false ? new Registry() : processRegistry();
    if (options.serve !== false) this.register();
  }

  /** This process's query counters, to send to the process that serves /metrics. */
  counters(): QueryCounters {
    return {
      zones: [...this.byZone].map(([zone, c]) => [zone, c.toJSON()]),
      tcpClosed: [...this.tcpClosed],
      udpNotSent: this.udpNotSent(),
      rateLimited: this.rateLimited(),
    };
  }

  countTcpClose(reason: CloseReason): void {
    this.tcpClosed[CLOSE_REASONS.indexOf(reason)]!++;
  }

  setPeer(id: number, counters: QueryCounters): void {
    this.peers.set(id, counters);
  }

  /**
   * One query answered (rcode < 0: dropped, no response) in `seconds`. The hot path: a map lookup
   * and four array increments.
   */
  countQuery(
    transport: 'udp' | 'tcp',
    zone: string | undefined,
    qtype: number | undefined,
    rcode: number,
    seconds: number,
  ): void {
    const key = zone ?? NO_ZONE;
    let c = this.byZone.get(key);
    if (!c) this.byZone.set(key, (c = new ZoneCounts()));
    c.count(transport, qtype, rcode, seconds);
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
    const byZone = new Map<string, ZoneCounts>();
    const tcpClosed = CLOSE_REASONS.map(() => 0);
    const udpNotSent = UDP_NOT_SENT.map(() => 0);
    const rateLimited = RATE_LIMITED.map(() => 0);
    for (const c of [this.counters(), ...this.peers.values()]) {
      for (const [zone, counts] of c.zones) {
        let sum = byZone.get(zone);
        if (!sum) byZone.set(zone, (sum = new ZoneCounts()));
        sum.add(counts);
      }
      c.tcpClosed.forEach((n, i) => (tcpClosed[i]! += n));
      c.udpNotSent.forEach((n, i) => (udpNotSent[i]! += n));
      c.rateLimited?.forEach((n, i) => (rateLimited[i]! += n));
    }
    return { byZone, tcpClosed, udpNotSent, rateLimited };
  }

  private register(): void {
    const registers = [this.registry];
    this.registerProbes();
    // prom-client calls collect() with the metric as `this`; these reach the counts.
    const totals = () => this.totals();
    const lastSync = this.lastSync;
    registerBuildInfo(this.registry, 'capi_dns_server_build_info', 'dns-server');
    new Counter({
      name: 'capi_dns_server_dns_requests_total',
      help: 'Queries, by zone ("dropped": none served here, or not parsed), transport and query type (as coredns_dns_requests_total).',
      labelNames: ['zone', 'proto', 'type'],
      registers,
      collect() {
        this.reset();
        for (const [zone, c] of totals().byZone)
          for (const [labels, n] of c.requestSeries()) this.inc({ zone: zoneLabel(zone), ...labels }, n);
      },
    });
    new Counter({
      name: 'capi_dns_server_dns_responses_total',
      help: 'Responses, by zone and response code ("dropped": no response sent), as coredns_dns_responses_total.',
      labelNames: ['zone', 'rcode'],
      registers,
      collect() {
        this.reset();
        for (const [zone, c] of totals().byZone)
          for (const [labels, n] of c.responseSeries()) this.inc({ zone: zoneLabel(zone), ...labels }, n);
      },
    });
    registerReadHistogram(
      this.registry,
      'capi_dns_server_dns_request_duration_seconds',
      'Seconds from a query read to its answer made (parse, lookup, encoding), by zone (as coredns_dns_request_duration_seconds).',
      DURATION_BUCKETS,
      () =>
        [...totals().byZone].map(([zone, c]) => [{ zone: zoneLabel(zone) }, c.durations, c.durationSeconds]),
    );
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
    new Counter({
      name: 'capi_dns_server_udp_answers_not_sent_total',
      help: 'UDP answers made but not sent (batched path), by reason: refused (the kernel refused that datagram: EMSGSIZE, an unreachable peer), buffer_full (the send buffer stayed full: EAGAIN, ENOBUFS).',
      labelNames: ['reason'],
      registers,
      collect() {
        const t = totals();
        this.reset();
        UDP_NOT_SENT.forEach((reason, i) => this.inc({ reason }, t.udpNotSent[i]!));
      },
    });
    new Counter({
      name: 'capi_dns_server_rate_limited_responses_total',
      help: 'UDP responses past the rate of their client prefix and response (--rrl-responses-per-second): dropped, or slipped (sent truncated, so that a real client retries over TCP).',
      labelNames: ['action'],
      registers,
      collect() {
        const t = totals();
        this.reset();
        RATE_LIMITED.forEach((action, i) => this.inc({ action }, t.rateLimited[i]!));
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
    gauge(
      'capi_dns_server_zone_build_pending_seconds',
      'Seconds since the oldest change delivered by a source that the served zones do not hold yet (0: they hold every change).',
      () => (this.unbuiltSince === undefined ? 0 : (Date.now() - this.unbuiltSince) / 1000),
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
