import { ClusterCache } from '../manager/clusters/cache.js';
import { silentLogger } from '../../runtime/log.js';
import { createLogger } from '../manager/runtime/log.js';
import { validateGatewayDnsSpec, type EffectiveSpec } from '../model/validate.js';
import { WorkloadWatches } from '../manager/clusters/workload-watches.js';
import { watchesNamedBy, type WatchInput, type WatchNeeds } from './watches.js';

function spec(fields: Record<string, unknown>): EffectiveSpec {
  const v = validateGatewayDnsSpec({ clusterSelector: {}, service: 'apps/db', ...fields });
  if (!v.valid) throw new Error(v.message);
  return v.spec;
}

function input(over: Partial<WatchInput>): WatchInput {
  return {
    namespace: 'team',
    spec: spec({}),
    selected: ['a'],
    targets: ['a', 'b'],
    mirrorNamespaces: [],
    ...over,
  };
}

describe('watchesNamedBy', () => {
  it.each<[string, Partial<WatchInput>, WatchNeeds]>([
    [
      'loadBalancer reads only the Services of the selected clusters',
      {},
      { Service: ['team/a|apps'], EndpointSlice: [], MirrorEndpointSlice: [] },
    ],
    [
      'headless reads their EndpointSlices too',
      { spec: spec({ resolutionType: 'headless' }), selected: ['a', 'b'] },
      {
        Service: ['team/a|apps', 'team/b|apps'],
        EndpointSlice: ['team/a|apps', 'team/b|apps'],
        MirrorEndpointSlice: [],
      },
    ],
    [
      'clusterIP follows pod readiness through EndpointSlices',
      { spec: spec({ resolutionType: 'clusterIP' }) },
      { Service: ['team/a|apps'], EndpointSlice: ['team/a|apps'], MirrorEndpointSlice: [] },
    ],
    [
      'a mirror is read in every workload cluster, an earlier mirror namespace until withdrawn',
      { spec: spec({ mirror: { namespace: 'shop' } }), mirrorNamespaces: ['old', 'shop'] },
      {
        Service: ['team/a|apps', 'team/a|old', 'team/a|shop', 'team/b|old', 'team/b|shop'],
        EndpointSlice: [],
        MirrorEndpointSlice: ['team/a|old', 'team/a|shop', 'team/b|old', 'team/b|shop'],
      },
    ],
    [
      'a mirror in the source namespace shares the source Service watch',
      { spec: spec({ mirror: {} }), mirrorNamespaces: ['apps'] },
      {
        Service: ['team/a|apps', 'team/b|apps'],
        EndpointSlice: [],
        MirrorEndpointSlice: ['team/a|apps', 'team/b|apps'],
      },
    ],
    [
      'no selected cluster, no source watch',
      { selected: [] },
      { Service: [], EndpointSlice: [], MirrorEndpointSlice: [] },
    ],
    [
      'being deleted without a valid spec: only the mirrors to withdraw',
      { spec: undefined, mirrorNamespaces: ['shop'] },
      {
        Service: ['team/a|shop', 'team/b|shop'],
        EndpointSlice: [],
        MirrorEndpointSlice: ['team/a|shop', 'team/b|shop'],
      },
    ],
  ])('%s', (_what, over, want) => {
    expect(watchesNamedBy(input(over))).toEqual(want);
  });
});

describe('WorkloadWatches', () => {
  function watches(): { watches: WorkloadWatches; released: string[] } {
    const released: string[] = [];
    const log = createLogger('info', {}, (line) => {
      const l = JSON.parse(line) as { msg: string; kind: string; cluster: string; namespace: string };
      if (l.msg === 'watch released') released.push(`${l.kind} ${l.cluster}|${l.namespace}`);
    });
    // No kubeconfig Secrets: no client is built, and releasing must not build one.
    const clusters = new ClusterCache({
      provider: { kubeconfig: () => ({ problem: 'no kubeconfig' }), notConnectableYet: () => undefined },
      log: silentLogger,
    });
    return { watches: new WorkloadWatches({ clusters, log }), released };
  }
  const headless = (selected: string[]) =>
    watchesNamedBy(input({ spec: spec({ resolutionType: 'headless' }), selected }));

  it('releases a Service watch, as an EndpointSlice watch, only when its last holder lets go', () => {
    const { watches: w, released } = watches();
    w.hold('team/one', headless(['a']));
    w.hold('team/two', headless(['a', 'b']));
    w.hold('team/two', headless(['a']));
    expect(released).toEqual(['Service team/b|apps', 'EndpointSlice team/b|apps']);
    w.drop('team/one');
    expect(released).toHaveLength(2);
    w.drop('team/two');
    expect(released).toEqual([
      'Service team/b|apps',
      'EndpointSlice team/b|apps',
      'Service team/a|apps',
      'EndpointSlice team/a|apps',
    ]);
    expect(w.held()).toEqual({ Service: [], EndpointSlice: [], MirrorEndpointSlice: [] });
  });

  it('holds again what a dropped (invalid) GatewayDNS needs once it is fixed', () => {
    const { watches: w, released } = watches();
    w.hold('team/one', headless(['a']));
    w.drop('team/one');
    expect(released).toEqual(['Service team/a|apps', 'EndpointSlice team/a|apps']);
    w.hold('team/one', headless(['a']));
    expect(w.held()).toEqual({
      Service: ['team/a|apps'],
      EndpointSlice: ['team/a|apps'],
      MirrorEndpointSlice: [],
    });
  });
});
