// Record-set size of a headless Service: how large the DNSRecordSets of a
// GatewayDNS get (one per source cluster; the largest is what etcd must hold)
// for N ready pods spread over C clusters, what is left out
// (operator/gatewaydns/plan/limits.ts), and the largest Service that fits whole.
// Pure computation through the operator's own desired-state code; no cluster.
//
//   npm run build && node dist/bench/service-size.js [--clusters 1,10] [--pods 300,1000,10000]
import { parseArgs } from 'node:util';
import type { DNSRecordSet } from '../api/index.js';
import { recordSetsOf, shardsFor, type DesiredInput } from '../operator/gatewaydns/plan/desired.js';
import type { ClusterFacts } from '../operator/model/facts.js';
import { fitRecordSets } from '../operator/gatewaydns/plan/limits.js';
import { validateGatewayDnsSpec } from '../operator/model/validate.js';

interface Shape {
  name: string;
  hostnames: boolean;
  dualStack: boolean;
  ports: number;
}

const SHAPES: Shape[] = [
  { name: 'Deployment (no host names), IPv4, 1 named port', hostnames: false, dualStack: false, ports: 1 },
  { name: 'StatefulSet (host names), IPv4, 1 named port', hostnames: true, dualStack: false, ports: 1 },
  { name: 'StatefulSet (host names), dual-stack, 2 named ports', hostnames: true, dualStack: true, ports: 2 },
];

function facts(shape: Shape, pods: number, clusters: number): ClusterFacts[] {
  return Array.from({ length: clusters }, (_, c) => {
    const count = Math.floor(pods / clusters) + (c < pods % clusters ? 1 : 0);
    const endpoints = Array.from({ length: count }, (_, i) => ({
      ...(shape.hostnames ? { hostname: `db-${i}` } : {}),
      addresses: [
        `10.${c}.${i >> 8}.${i & 255}`,
        ...(shape.dualStack ? [`fd00:${c.toString(16)}::${i.toString(16)}`] : []),
      ],
      ports: Array.from({ length: shape.ports }, (_, p) => ({
        name: `port-${p}`,
        protocol: 'TCP',
        port: 5432 + p,
      })),
    }));
    return {
      cluster: `cluster-${String(c + 1).padStart(2, '0')}`,
      state: 'Ready' as const,
      addresses: endpoints.flatMap((e) => e.addresses),
      ports: [],
      endpoints,
      readyEndpoints: count,
      totalEndpoints: count,
    };
  });
}

function measure(shape: Shape, pods: number, clusters: number) {
  const v = validateGatewayDnsSpec({
    clusterSelector: {},
    service: 'databases/db',
    resolutionType: 'headless',
    gatewayLabel: 'db',
  });
  if (!v.valid) throw new Error(v.message);
  const input: DesiredInput = {
    namespace: 'dev-team',
    name: 'db',
    spec: v.spec,
    suffix: 'xcc.test',
    facts: facts(shape, pods, clusters),
  };
  // Before limits: the sets as they would be with nothing left out.
  const full = recordSetsOf(input, shardsFor(input), 'capi-dns');
  const { sets, omitted } = fitRecordSets(full);
  const octets = (s: DNSRecordSet[]) => Math.max(0, ...s.map((x) => Buffer.byteLength(JSON.stringify(x))));
  return {
    records: full.reduce((n, s) => n + s.spec.records.length, 0),
    sets: full.length,
    /** The largest set: the etcd limit is per object. */
    octets: octets(full),
    keptOctets: octets(sets),
    omitted,
  };
}

/** The most pods that fit with nothing left out (binary search). */
function largestWhole(shape: Shape, clusters: number): number {
  let lo = clusters;
  let hi = 200_000;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measure(shape, mid, clusters).omitted.length === 0) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

const { values } = parseArgs({
  options: {
    clusters: { type: 'string', default: '1,10' },
    pods: { type: 'string', default: '300,1000,10000' },
  },
});
const clusterCounts = values.clusters.split(',').map(Number);
const podCounts = values.pods.split(',').map(Number);

for (const shape of SHAPES) {
  console.log(`\n${shape.name}`);
  console.log('| pods | clusters | records (sets) | largest set, JSON octets | left out |');
  console.log('|---|---|---|---|---|');
  for (const clusters of clusterCounts)
    for (const pods of podCounts) {
      const m = measure(shape, pods, clusters);
      const reasons = [...new Set(m.omitted.map((o) => o.reason))].join(', ');
      console.log(
        `| ${pods} | ${clusters} | ${m.records} (${m.sets}) | ${m.octets}${m.omitted.length ? ` (${m.keptOctets} written)` : ''} | ${m.omitted.length ? `${m.omitted.length} records (${reasons})` : 'nothing'} |`,
      );
    }
  for (const clusters of clusterCounts)
    console.log(
      `largest Service published whole, ${clusters} cluster(s): ${largestWhole(shape, clusters)} pods`,
    );
}
