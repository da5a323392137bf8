import { jest } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HealthCheck } from '../../api/index.js';
import { silentLogger } from '../../runtime/log.js';
import type { ProbeTarget } from '../zone/policy.js';
import { probe, Prober } from './prober.js';

const CHECK: HealthCheck = {
  protocol: 'TCP',
  port: 1,
  periodSeconds: 2,
  timeoutSeconds: 1,
  failureThreshold: 2,
  successThreshold: 3,
};
const target = (address: string): ProbeTarget => ({ id: `tcp://${address}`, address, check: CHECK });

describe('Prober', () => {
  // No jitter: the first probe half a period in, then one every period.
  beforeEach(() => {
    jest.useFakeTimers();
    jest.spyOn(Math, 'random').mockReturnValue(0.5);
  });
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  async function periods(n: number): Promise<void> {
    for (let i = 0; i < n; i++) await jest.advanceTimersByTimeAsync(2000);
  }

  it('turns a target unhealthy after failureThreshold failures and healthy after successThreshold successes', async () => {
    const up = new Map([['10.0.0.1', true]]);
    const changes: string[][] = [];
    const prober = new Prober({
      maxInFlight: 4,
      log: silentLogger,
      probe: async (t) => up.get(t.address) ?? false,
      onChange: (unhealthy) => changes.push([...unhealthy]),
    });
    prober.setTargets([target('10.0.0.1')]);
    await periods(3);
    expect(changes).toEqual([]);
    up.set('10.0.0.1', false);
    await periods(1);
    expect(changes).toEqual([]); // one failure: still healthy (hysteresis)
    await periods(1);
    expect(changes).toEqual([['tcp://10.0.0.1']]);
    up.set('10.0.0.1', true);
    await periods(2);
    expect(changes).toHaveLength(1); // two successes of three
    await periods(1);
    expect(changes).toEqual([['tcp://10.0.0.1'], []]);
    expect(prober.stats.transitions).toEqual({ healthy: 1, unhealthy: 1 });
    prober.stop();
  });

  it('counts a new target healthy until it fails, and forgets a removed one (its state leaves the view)', async () => {
    const changes: string[][] = [];
    const prober = new Prober({
      maxInFlight: 4,
      log: silentLogger,
      probe: async () => false,
      onChange: (unhealthy) => changes.push([...unhealthy]),
    });
    prober.setTargets([target('10.0.0.1'), target('10.0.0.2')]);
    expect(prober.stats).toMatchObject({ targets: 2, unhealthy: 0 });
    await periods(3);
    expect(changes.at(-1)?.sort()).toEqual(['tcp://10.0.0.1', 'tcp://10.0.0.2']);
    prober.setTargets([target('10.0.0.2')]);
    await jest.advanceTimersByTimeAsync(0);
    expect(changes.at(-1)).toEqual(['tcp://10.0.0.2']);
    expect(prober.stats.targets).toBe(1);
    prober.stop();
  });

  it('keeps at most maxInFlight probes at once', async () => {
    let inFlight = 0;
    let most = 0;
    const prober = new Prober({
      maxInFlight: 3,
      log: silentLogger,
      probe: async () => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 500));
        inFlight--;
        return true;
      },
      onChange: () => undefined,
    });
    prober.setTargets(Array.from({ length: 20 }, (_, i) => target(`10.0.1.${i}`)));
    await periods(3);
    expect(most).toBe(3);
    expect(prober.stats.probes.success).toBeGreaterThan(20);
    prober.stop();
  });
});

describe('probe (real sockets)', () => {
  let server: Server;
  let port: number;
  let status = 200;
  let seen: { path?: string; host?: string } = {};
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen = { path: req.url, host: req.headers.host };
      res.writeHead(status).end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const at = (protocol: HealthCheck['protocol'], over: Partial<HealthCheck> = {}): ProbeTarget => ({
    id: 'x',
    address: '127.0.0.1',
    check: { ...CHECK, protocol, port, ...over },
  });

  it('HTTP: 200-399 is healthy, 503 is not; path and Host as configured', async () => {
    status = 200;
    expect(await probe(at('HTTP', { path: '/healthz', host: 'shop.example' }))).toBe(true);
    expect(seen).toEqual({ path: '/healthz', host: 'shop.example' });
    status = 302;
    expect(await probe(at('HTTP', { path: '/' }))).toBe(true);
    status = 503;
    expect(await probe(at('HTTP', { path: '/' }))).toBe(false);
  });

  it('TCP: the connection opens, or it does not', async () => {
    expect(await probe(at('TCP'))).toBe(true);
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    expect(await probe(at('TCP', { port: closedPort }))).toBe(false);
  });
});
