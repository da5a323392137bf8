// The real CoreDNS of the test environment forwarding xcc.test to the
// dns-server, as each workload cluster's CoreDNS does.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dig, startCoreDns, startDnsServer, type DnsProcess } from '../support/dns.js';

const W = 'gateway.cluster-a.dev-team.clusters.xcc.test';

describe('CoreDNS forwarding xcc.test to the dns-server', () => {
  let dir: string;
  let server: DnsProcess;
  let coredns: DnsProcess;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'capi-dns-coredns-test-'));
    const file = path.join(dir, 'records.yaml');
    writeFileSync(
      file,
      `apiVersion: connectivity.tanzu.vmware.com/v1alpha1
kind: DNSRecordSet
metadata: {name: gateway}
spec:
  records:
  - {name: "*.${W}", type: A, values: ["10.0.0.5", "10.0.0.6"]}
  - {name: "big.xcc.test", type: A, values: [${Array.from({ length: 60 }, (_, i) => `"10.1.0.${i}"`).join(', ')}]}
`,
    );
    server = await startDnsServer(['--zone', 'xcc.test', '--records-file', file]);
    coredns = await startCoreDns(
      `xcc.test:{port} {
  bind 127.0.0.1
  forward . 127.0.0.1:${server.port}
}
.:{port} {
  bind 127.0.0.1
  template ANY ANY {
    rcode REFUSED
  }
}
`,
      'xcc.test',
    );
  });
  afterAll(async () => {
    await coredns?.stop();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('resolves wildcard names through CoreDNS', async () => {
    const r = await dig(coredns.port, [`Kuard.${W}`, 'A']);
    expect(r.status).toBe('NOERROR');
    expect(r.answer.sort()).toEqual([`Kuard.${W}. 30 IN A 10.0.0.5`, `Kuard.${W}. 30 IN A 10.0.0.6`]);
  });

  it('passes NXDOMAIN and NODATA through with the SOA', async () => {
    const nx = await dig(coredns.port, ['missing.xcc.test', 'A']);
    expect(nx.status).toBe('NXDOMAIN');
    expect(nx.authority[0]).toMatch(/^xcc\.test\. \d+ IN SOA ns1\.xcc\.test\. /);
    const nodata = await dig(coredns.port, [`kuard.${W}`, 'AAAA']);
    expect(nodata.status).toBe('NOERROR');
    expect(nodata.answer).toEqual([]);
    expect(nodata.authority).toHaveLength(1);
  });

  it('delivers big answers: truncated over UDP, whole after the retry over TCP', async () => {
    const udp = await dig(coredns.port, ['+noedns', '+ignore', 'big.xcc.test', 'A']);
    expect(udp.flags).toContain('tc');
    const retried = await dig(coredns.port, ['+noedns', 'big.xcc.test', 'A']);
    expect(retried.answer).toHaveLength(60);
  });
});
