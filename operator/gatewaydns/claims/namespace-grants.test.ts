import { checkGrant, namespacesNamed, parseGrant } from './namespace-grants.js';

const named = (service: string, mirror?: string) =>
  namespacesNamed({ serviceNamespace: service, ...(mirror ? { mirror: { namespace: mirror } } : {}) });

describe('checkGrant: which workload namespaces a GatewayDNS may name', () => {
  it.each<[string, string | undefined, ReturnType<typeof named>, boolean]>([
    ['no annotation: an ordinary namespace', undefined, named('projectcontour'), true],
    ['no annotation: kube-system as the Service', undefined, named('kube-system'), false],
    ['no annotation: kube-system as the mirror', undefined, named('apps', 'kube-system'), false],
    ['no annotation: kube-public', undefined, named('kube-public'), false],
    ['no annotation: kube-node-lease', undefined, named('kube-node-lease'), false],
    ['no annotation: the dns-server namespace', undefined, named('capi-dns'), false],
    ['a list naming both', 'projectcontour, apps', named('projectcontour', 'apps'), true],
    ['a list naming only one', 'projectcontour', named('projectcontour', 'apps'), false],
    ['a prefix', 'team-a-*', named('team-a-web'), true],
    ['a prefix, not matching', 'team-a-*', named('team-b-web'), false],
    ['"*" allows kube-system too', '*', named('kube-system'), true],
    ['named explicitly', 'kube-system', named('kube-system'), true],
    ['an empty annotation allows nothing', '', named('projectcontour'), false],
  ])('%s', (_name, annotation, n, allowed) => {
    expect(checkGrant('dev-team', annotation, n, 'capi-dns').allowed).toBe(allowed);
  });

  it('names the field, the namespace, the annotation and the Namespace to change', () => {
    const g = checkGrant('dev-team', undefined, named('apps', 'kube-system'), 'capi-dns');
    expect(g.allowed).toBe(false);
    expect(!g.allowed && g.message).toBe(
      'spec.mirror.namespace names workload namespace kube-system, which is not allowed: namespaces kube-system, kube-public, kube-node-lease, capi-dns are reached only when the annotation connectivity.tanzu.vmware.com/workload-namespaces on Namespace dev-team of the management cluster names them',
    );
    const listed = checkGrant('dev-team', 'apps', named('web'), 'capi-dns');
    expect(!listed.allowed && listed.message).toMatch(
      /spec.service names workload namespace web.*allows apps$/,
    );
  });

  it('parses the annotation', () => {
    expect(parseGrant(undefined)).toBeUndefined();
    expect(parseGrant(' a, b ,,c* ')).toEqual(['a', 'b', 'c*']);
    expect(parseGrant('')).toEqual([]);
  });
});
