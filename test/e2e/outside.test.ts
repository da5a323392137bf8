// End to end: `npm run demo -- --outside --failover` as the demo runs it (the
// same Walkthrough class), then what the walkthrough claims, checked: the host
// reaches kuard by name through the company's resolver and its NSD secondary,
// the failover was seen from there, the secondary follows a change by NOTIFY
// and transfer at the serial status.nameservers shows, only the listed
// secondary may transfer, and stopping the walkthrough stops NSD and unbound.
// Every process it starts is stopped in afterAll, also when a test fails.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DEFAULT_ZONE, type DNSZone } from '../../api/index.js';
import { OUTSIDE_DNSZONE, OUTSIDE_TSIG_SECRET } from '../../demo/outside.js';
import { addressesFor, KUARD_NAME, Walkthrough } from '../../demo/walkthrough.js';
import { dig } from '../support/dns.js';
import { eventually } from '../support/kube.js';
import { soaSerial } from '../support/secondaries.js';

const run = promisify(execFile);
const addresses = addressesFor('127.0.21');
const SECONDARY = addresses.outsideSecondary;
/** Not listed in the DNSZone's spec.transfer. */
const STRANGER = '127.0.21.62';

describe('the walkthrough outside every cluster (npm run demo -- --outside --failover)', () => {
  let w: Walkthrough | undefined;
  const measured: Record<string, number> = {};

  const walkthrough = () => {
    if (!w) throw new Error('the walkthrough is not running');
    return w;
  };
  const zoneStatus = async () =>
    JSON.parse(
      await walkthrough().managementKubectl().run(['get', 'dnszone', OUTSIDE_DNSZONE, '-o', 'json']),
    ) as DNSZone;

  beforeAll(async () => {
    w = await Walkthrough.run({ addresses, outside: true, failover: true, keepLogsOnFailure: false });
  }, 300_000);

  afterAll(async () => {
    await w?.stop();
    if (Object.keys(measured).length) process.stderr.write(`outside (ms): ${JSON.stringify(measured)}\n`);
  }, 120_000);

  it('curls kuard from the host by name through unbound and the NSD secondary, and saw the failover there', async () => {
    const host = walkthrough().outsideHost;
    if (!host) throw new Error('no host resolver');
    expect(await host.curl(`http://${KUARD_NAME}`)).toContain('kuard: hello from cluster-a');
    const times = walkthrough().failoverTimes;
    expect(times?.outsideFailoverMs).toBeGreaterThan(0);
    expect(times?.outsideRecoveryMs).toBeGreaterThan(0);
    measured.outsideFailover = times!.outsideFailoverMs!;
    measured.outsideRecovery = times!.outsideRecoveryMs!;
  });

  it('the secondary follows a change by NOTIFY and transfer, at the serial status.nameservers shows', async () => {
    const before = await soaSerial(SECONDARY, 53, DEFAULT_ZONE);
    expect(before).toBeDefined();
    const moved = '127.0.21.51';
    const began = Date.now();
    await walkthrough().setLoadBalancerAddress('cluster-a', moved);
    try {
      await eventually(
        async () => {
          const r = await dig(53, ['+norecurse', KUARD_NAME, 'A'], SECONDARY);
          if (!r.answer.some((l) => l.endsWith(` A ${moved}`)))
            throw new Error(`the secondary answers ${r.status} ${r.answer.join(' | ')}`);
        },
        15_000,
        20,
      );
      measured.changeAtSecondary = Date.now() - began;
      const held = await soaSerial(SECONDARY, 53, DEFAULT_ZONE);
      expect(held).toBeGreaterThan(before!);
      // Every cluster reports the serial it serves; the secondary holds the newest (RFC 1996).
      const serials = await eventually(
        async () => {
          const shown = ((await zoneStatus()).status?.nameservers ?? []).map((n) => n.serial);
          if (
            shown.length !== walkthrough().clusters.length ||
            shown.some((s) => s === undefined || s < held!)
          )
            throw new Error(
              `status.nameservers serials ${JSON.stringify(shown)}, the secondary holds ${held}`,
            );
          return shown as number[];
        },
        15_000,
        100,
      );
      expect(Math.max(...serials)).toBe(await soaSerial(SECONDARY, 53, DEFAULT_ZONE));
    } finally {
      await walkthrough().setLoadBalancerAddress('cluster-a', addresses.kuard);
    }
  });

  it('lets the listed secondary transfer the zone with the key, and refuses another address with the same key', async () => {
    const secret = JSON.parse(
      await walkthrough()
        .managementKubectl()
        .run(['-n', OUTSIDE_TSIG_SECRET.namespace, 'get', 'secret', OUTSIDE_TSIG_SECRET.name, '-o', 'json']),
    ) as { data: Record<string, string> };
    const field = (k: string) => Buffer.from(secret.data[k] ?? '', 'base64').toString();
    const key = `hmac-sha256:${field('name')}:${field('secret')}`;
    const axfr = async (from: string) =>
      (
        await run(
          'dig',
          ['-b', from, `@${addresses.dnsServer['cluster-a']}`, DEFAULT_ZONE, 'AXFR', '-y', key],
          {
            timeout: 10_000,
          },
        ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }))
      ).stdout;
    const listed = await axfr(SECONDARY);
    // The walkthrough's GatewayDNS serves kuard's names as wildcards under gateway.<cluster>.
    expect(listed).toMatch(/^\*\.gateway\.cluster-a\.dev-team\.clusters\.xcc\.test\.\s+\d+\s+IN\s+A\s/m);
    expect(listed).toContain('TSIG');
    const stranger = await axfr(STRANGER);
    expect(stranger).not.toMatch(/\sIN\s+A\s/);
    expect(stranger).toMatch(/Transfer failed|REFUSED/);
  });

  it('stops NSD and unbound with everything else', async () => {
    const outside = `${walkthrough().dir}/outside/`;
    const running = async () =>
      (await run('pgrep', ['-af', outside]).catch(() => ({ stdout: '' }))).stdout
        .trim()
        .split('\n')
        .filter(Boolean);
    expect((await running()).join('\n')).toMatch(/nsd[\s\S]*unbound|unbound[\s\S]*nsd/);
    const stopping = walkthrough();
    w = undefined;
    await stopping.stop();
    expect(await running()).toEqual([]);
  });
});
