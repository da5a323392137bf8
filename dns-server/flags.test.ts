import { duration, hostPort, UsageError } from './flag-values.js';
import { parseFlags, usage } from './flags.js';

describe('flags', () => {
  it('has defaults: zone xcc.test, Kubernetes mode when no records file, SOA from the zone', () => {
    const c = parseFlags([])!;
    expect(c.listen).toEqual({ host: '0.0.0.0', port: 53 });
    expect(c.zones.map((z) => [z.name, z.mname, z.rname, z.nameServers, z.minimum])).toEqual([
      ['xcc.test', 'ns1.xcc.test', 'hostmaster.xcc.test', ['ns1.xcc.test'], 30],
      // Multi-Cluster Services, from this cluster's ServiceImports (Kubernetes mode only).
      [
        'clusterset.local',
        'ns1.clusterset.local',
        'hostmaster.clusterset.local',
        ['ns1.clusterset.local'],
        30,
      ],
    ]);
    expect(c.kubernetes).toEqual({
      kubeconfig: undefined,
      namespace: 'capi-dns',
      resyncMs: 300_000,
      clustersetDomain: 'clusterset.local',
      pod: undefined,
    });
    expect(c.recordsFile).toBeUndefined();
    expect(c.healthListen).toBeUndefined();
    expect(c.buildWorkerIdleMs).toBe(60_000);
    expect(parseFlags(['--build-worker-idle', '0s'])!.buildWorkerIdleMs).toBe(0);
    expect(c.buildHeapLimitMiB).toBe(128);
    expect(parseFlags(['--build-heap-limit', '256Mi'])!.buildHeapLimitMiB).toBe(256);
    for (const bad of ['1G', '128', '8Mi', '1.5Mi'])
      expect(() => parseFlags(['--build-heap-limit', bad])).toThrow(
        /--build-heap-limit .*not a size like 160Mi/,
      );
  });

  it('chooses the UDP path: native (batched) by default, dgram on request, nothing else', () => {
    expect(parseFlags([])!.udpIo).toBe('native');
    expect(parseFlags(['--udp-io', 'dgram'])!.udpIo).toBe('dgram');
    expect(() => parseFlags(['--udp-io', 'io_uring'])).toThrow(/--udp-io io_uring: 'native' or 'dgram'/);
  });

  it('names the Pod whose probe report this replica writes, and refuses what is no object name', () => {
    expect(parseFlags(['--pod-name', 'capi-dns-server-7d4-x2', '--pod-uid', 'u-1'])!.kubernetes?.pod).toEqual(
      {
        name: 'capi-dns-server-7d4-x2',
        uid: 'u-1',
      },
    );
    expect(parseFlags(['--pod-name', 'p'])!.kubernetes?.pod).toEqual({ name: 'p', uid: undefined });
    expect(() => parseFlags(['--pod-name', 'Bad_Name'])).toThrow(
      /--pod-name Bad_Name: not a Kubernetes object name/,
    );
    expect(() => parseFlags(['--pod-uid', 'u-1'])).toThrow(/--pod-uid: needs --pod-name/);
  });

  it("defaults the Pod's name to the host name in a Pod, and to none outside one", () => {
    const inPod = { inPod: true, hostname: 'capi-dns-server-7d4-x2' };
    expect(parseFlags([], inPod)!.kubernetes?.pod).toEqual({
      name: 'capi-dns-server-7d4-x2',
      uid: undefined,
    });
    expect(parseFlags(['--pod-uid', 'u-1'], inPod)!.kubernetes?.pod).toEqual({
      name: 'capi-dns-server-7d4-x2',
      uid: 'u-1',
    });
    expect(parseFlags(['--pod-name', 'p'], inPod)!.kubernetes?.pod).toEqual({ name: 'p', uid: undefined });
    expect(parseFlags([], { inPod: false, hostname: 'laptop' })!.kubernetes?.pod).toBeUndefined();
  });

  it('takes repeated zones, a records file alone, or both sources', () => {
    const file = parseFlags([
      '--zone',
      'A.test.',
      '--zone',
      'b.test',
      '--records-file',
      'r.yaml',
      '--listen',
      '[::1]:5353',
    ])!;
    expect(file.zones.map((z) => z.name)).toEqual(['a.test', 'b.test']);
    expect(file.kubernetes).toBeUndefined();
    expect(file.listen).toEqual({ host: '::1', port: 5353 });
    const both = parseFlags(['--records-file', 'r.yaml', '--kubeconfig', 'kc', '--namespace', 'x'])!;
    expect(both.kubernetes?.kubeconfig).toBe('kc');
    expect(both.kubernetes?.namespace).toBe('x');
    expect(parseFlags(['--help'])).toBeUndefined();
  });

  it('--clusterset-domain: another name, none with an empty value, refused where it overlaps a --zone', () => {
    expect(parseFlags(['--clusterset-domain', 'mcs.example'])!.zones.map((z) => z.name)).toEqual([
      'xcc.test',
      'mcs.example',
    ]);
    const none = parseFlags(['--clusterset-domain', ''])!;
    expect(none.zones.map((z) => z.name)).toEqual(['xcc.test']);
    expect(none.kubernetes?.clustersetDomain).toBeUndefined();
    expect(() => parseFlags(['--zone', 'local', '--clusterset-domain', 'clusterset.local'])).toThrow(
      /overlaps a --zone/,
    );
  });

  it('bounds TCP by default as CoreDNS and NSD do, and :PORT means both families', () => {
    expect(parseFlags([])!.tcp).toEqual({
      idleMs: 10_000,
      messageTimeoutMs: 2_000,
      maxLifetimeMs: 300_000,
      maxQueries: 10_000,
      maxConnections: 1000,
      maxPerClient: 100,
    });
    expect(
      parseFlags(['--tcp-max-connections-per-client', '3', '--tcp-message-timeout', '500ms'])!.tcp,
    ).toMatchObject({
      maxPerClient: 3,
      messageTimeoutMs: 500,
    });
    expect(hostPort(':5353', 'listen')).toEqual({ host: '', port: 5353 });
    expect(hostPort('[::1]:53', 'listen')).toEqual({ host: '::1', port: 53 });
    expect(hostPort('0.0.0.0:53', 'listen')).toEqual({ host: '0.0.0.0', port: 53 });
    expect(() => parseFlags(['--tcp-max-queries', '0'])).toThrow(/--tcp-max-queries/);
  });

  it('rejects what it cannot use, saying which flag', () => {
    expect(() => parseFlags(['--bogus'])).toThrow(UsageError);
    expect(() => parseFlags(['--zone', 'bad name'])).toThrow(/--zone/);
    expect(() => parseFlags(['--zone', 'a.test', '--zone', 'A.test'])).toThrow(/twice/);
    expect(() => parseFlags(['--max-udp-size', '100'])).toThrow(/--max-udp-size/);
    expect(() => parseFlags(['--tcp-idle-timeout', '10'])).toThrow(/duration/);
    expect(() => hostPort('localhost', 'listen')).toThrow(/HOST:PORT/);
    expect(duration('1.5s', 'x')).toBe(1500);
  });

  it('lists every flag in the usage text', () => {
    for (const flag of [
      '--listen',
      '--zone',
      '--records-file',
      '--kubeconfig',
      '--kubernetes',
      '--namespace',
      '--resync',
      '--health-listen',
      '--ns',
      '--soa-minimum',
      '--log-queries',
      '--build-worker-idle',
      '--help',
    ])
      expect(usage()).toContain(flag);
  });
});
