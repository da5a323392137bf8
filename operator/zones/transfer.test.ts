import type { DNSZone, TransferSpec } from '../../api/index.js';
import { declaredZones, zoneStatus } from './status.js';
import { checkTransfer, type SecretData } from './transfer.js';

const NOW = new Date('2026-11-27T12:00:00Z');
const b64 = (s: string) => Buffer.from(s).toString('base64');
const KEY = 'pTpS3Jn8mI2Rz5wW0pUXxJrVf7nq+BqJd2FZr1bLzVY=';
const SECRET: SecretData = { name: b64('xfr-key'), algorithm: b64('hmac-sha256'), secret: b64(KEY) };
const SPEC: TransferSpec = {
  secondaries: [{ address: '127.0.0.2' }, { address: '::1', port: 5353 }],
  tsigSecretRef: { namespace: 'dns', name: 'xfr' },
};

function zone(spec: TransferSpec | undefined, status?: DNSZone['status']): DNSZone {
  return {
    metadata: { name: 'apps', generation: 2, creationTimestamp: '2026-11-27T10:00:00Z' },
    spec: { zone: 'apps.corp.internal', ...(spec ? { transfer: spec } : {}) },
    ...(status ? { status } : {}),
  };
}

function statusOf(z: DNSZone, secret: SecretData) {
  const transfer = z.spec.transfer ? checkTransfer(z.spec.transfer, secret) : undefined;
  return zoneStatus({
    zone: z,
    zones: [z],
    served: [],
    namespaceLabels: () => undefined,
    ...(transfer ? { transfer } : {}),
    now: NOW,
  });
}

describe('spec.transfer', () => {
  it('puts a transfer in force with its key as tsig-keygen writes it, and declares it', () => {
    const verdict = checkTransfer(SPEC, SECRET);
    expect(verdict).toEqual({
      ok: true,
      transfer: {
        secondaries: [
          { address: '127.0.0.2', port: 53 },
          { address: '::1', port: 5353 },
        ],
        tsigSecretRef: SPEC.tsigSecretRef,
      },
      keyText: `key "xfr-key" {\n\talgorithm hmac-sha256;\n\tsecret "${KEY}";\n};\n`,
    });
    const status = statusOf(zone(SPEC), SECRET);
    expect(status.conditions?.find((c) => c.type === 'TransferReady')).toMatchObject({
      status: 'True',
      reason: 'Ready',
    });
    expect(declaredZones([zone(SPEC, status)])).toEqual([
      {
        name: 'apps.corp.internal',
        transfer: {
          secondaries: [
            { address: '127.0.0.2', port: 53 },
            { address: '::1', port: 5353 },
          ],
          tsigSecret: 'capi-dns-tsig-keys',
        },
      },
    ]);
  });

  it.each([
    ['a bad address', { ...SPEC, secondaries: [{ address: 'ns.example' }] }, SECRET, 'Invalid'],
    ['a bad port', { ...SPEC, secondaries: [{ address: '127.0.0.2', port: 0 }] }, SECRET, 'Invalid'],
    ['no Secret', SPEC, undefined, 'SecretNotFound'],
    ['no key name', SPEC, { ...SECRET, name: b64('') }, 'SecretInvalid'],
    ['another algorithm', SPEC, { ...SECRET, algorithm: b64('hmac-md5') }, 'SecretInvalid'],
    ['a secret that is no base64', SPEC, { ...SECRET, secret: b64('not base64!') }, 'SecretInvalid'],
    ['a short secret', SPEC, { ...SECRET, secret: b64(b64('short')) }, 'SecretInvalid'],
  ])('refuses %s, and the transfer in force stays', (_, spec, secret, reason) => {
    const before = statusOf(zone(SPEC), SECRET);
    const after = statusOf(zone(spec as TransferSpec, before), secret);
    expect(after.conditions?.find((c) => c.type === 'TransferReady')).toMatchObject({
      status: 'False',
      reason,
      observedGeneration: 2,
    });
    expect(after.enforced?.transfer).toEqual(before.enforced?.transfer);
    expect(after.enforced?.transfer).toBeDefined();
    // A refused first transfer puts none in force.
    expect(statusOf(zone(spec as TransferSpec), secret).enforced?.transfer).toBeUndefined();
  });

  it('drops the transfer and its condition once the spec has none', () => {
    const before = statusOf(zone(SPEC), SECRET);
    const after = statusOf(zone(undefined, before), undefined);
    expect(after.enforced?.transfer).toBeUndefined();
    expect(after.conditions?.find((c) => c.type === 'TransferReady')).toBeUndefined();
  });
});
