import { parseFlags } from './flags.js';

describe('parseFlags: untrusted kubeconfig opt-ins', () => {
  it.each([
    [[], false, false],
    [['--insecure-kubeconfig-exec'], true, false],
    [['--insecure-kubeconfig-tls'], false, true],
    [['--insecure-kubeconfig-exec', '--insecure-kubeconfig-tls'], true, true],
  ])('%j: exec %s, tls %s', (argv, exec, tls) => {
    const flags = parseFlags(argv);
    expect(flags.insecureKubeconfigExec).toBe(exec);
    expect(flags.insecureKubeconfigTls).toBe(tls);
  });
});

describe('--paused-departure-grace', () => {
  it('defaults to 10 minutes and takes a duration', () => {
    expect(parseFlags([]).pausedDepartureGraceMs).toBe(600_000);
    expect(parseFlags(['--paused-departure-grace', '30s']).pausedDepartureGraceMs).toBe(30_000);
    expect(() => parseFlags(['--paused-departure-grace', 'soon'])).toThrow(/--paused-departure-grace/);
  });
});

describe('--shards', () => {
  it('is off by default and takes a non-negative integer', () => {
    expect(parseFlags([]).shards).toBe(0);
    expect(parseFlags(['--shards', '16']).shards).toBe(16);
    expect(() => parseFlags(['--shards', '-1'])).toThrow(/--shards/);
    expect(() => parseFlags(['--shards', 'many'])).toThrow(/--shards/);
  });
});

describe('--zone', () => {
  it('takes further zones, normalised, none by default', () => {
    expect(parseFlags([]).zones).toEqual([]);
    expect(parseFlags(['--zone', 'Apps.Corp.Internal.', '--zone', 'shop.example']).zones).toEqual([
      'apps.corp.internal',
      'shop.example',
    ]);
  });

  it.each([
    [['--zone', 'not a name'], '--zone: not a DNS name'],
    [['--zone', 'xcc.test'], 'overlaps xcc.test'],
    [['--zone', 'apps.xcc.test'], 'overlaps xcc.test'],
    [['--zone', 'test'], 'overlaps xcc.test'],
    [['--zone', 'clusterset.local'], 'overlaps clusterset.local'],
    [['--zone', 'a.example', '--zone', 'b.a.example'], 'overlaps a.example'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseFlags(argv)).toThrow(message);
  });
});

describe('--cluster-profiles and --cluster-manager-name', () => {
  it('are off and cluster-api by default', () => {
    expect(parseFlags([]).clusterProfiles).toBe('off');
    expect(parseFlags([]).clusterManagerName).toBe('cluster-api');
  });
  it('take produce and a label value, and refuse anything else', () => {
    const flags = parseFlags(['--cluster-profiles=produce', '--cluster-manager-name', 'fleet-a']);
    expect(flags.clusterProfiles).toBe('produce');
    expect(flags.clusterManagerName).toBe('fleet-a');
    expect(() => parseFlags(['--cluster-profiles=consume'])).toThrow(/--cluster-profiles/);
    expect(() => parseFlags(['--cluster-manager-name', 'not/a label'])).toThrow(/--cluster-manager-name/);
  });
});
