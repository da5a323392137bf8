// Pure: a DNSZone's spec.transfer and the TSIG Secret it names (read from the
// management cluster by the reconciler) → whether it can be put in force, the
// key as tsig-keygen writes it (what each workload cluster's dns-server reads
// from the Secret capi-dns-tsig-keys, ADR 0216), and the TransferReady
// condition. A bad address or Secret leaves the transfer in force as it was:
// nothing served changes.
import { isIP } from 'node:net';
import type { Condition, EnforcedZone, TransferSpec } from '../../api/index.js';
import { setConditionWhile, ZONE_CONDITIONS, ZONE_REASONS } from '../model/conditions.js';

/** The Secret's data as the API returns it (base64 values); undefined when it does not exist. */
export type SecretData = Record<string, string> | undefined;

export type TransferVerdict =
  | { ok: true; transfer: TransferSpec; keyText: string }
  | {
      ok: false;
      reason:
        typeof ZONE_REASONS.Invalid | typeof ZONE_REASONS.SecretNotFound | typeof ZONE_REASONS.SecretInvalid;
      message: string;
    };

// A DNS name (the key's name): labels of letters, digits, '-' and '_', dot-separated.
const KEY_NAME =
  /^(?=.{1,253}\.?$)([A-Za-z0-9_]([-A-Za-z0-9_]{0,61}[A-Za-z0-9_])?\.)*[A-Za-z0-9_]([-A-Za-z0-9_]{0,61}[A-Za-z0-9_])?\.?$/;

export function checkTransfer(spec: TransferSpec, secret: SecretData): TransferVerdict {
  const bad = (spec.secondaries ?? []).flatMap((s, i) => {
    const port = s.port ?? 53;
    return isIP(s.address ?? '') === 0
      ? [`secondaries[${i}].address ${JSON.stringify(s.address)} is not an IP address`]
      : !Number.isInteger(port) || port < 1 || port > 65535
        ? [`secondaries[${i}].port ${port} is not a port`]
        : [];
  });
  if (!spec.secondaries?.length) bad.push('no secondaries');
  if (bad.length) return { ok: false, reason: ZONE_REASONS.Invalid, message: bad.join('; ') };
  const ref = `${spec.tsigSecretRef?.namespace}/${spec.tsigSecretRef?.name}`;
  if (secret === undefined)
    return { ok: false, reason: ZONE_REASONS.SecretNotFound, message: `no Secret ${ref}` };
  const text = (key: string) =>
    secret[key] === undefined ? undefined : Buffer.from(secret[key], 'base64').toString('utf8').trim();
  const name = text('name');
  const algorithm = text('algorithm');
  const value = text('secret');
  const invalid = (why: string): TransferVerdict => ({
    ok: false,
    reason: ZONE_REASONS.SecretInvalid,
    message: `Secret ${ref}: ${why}`,
  });
  if (!name || !KEY_NAME.test(name)) return invalid('no key "name" holding a DNS name');
  if (algorithm?.toLowerCase().replace(/\.$/, '') !== 'hmac-sha256')
    return invalid(`algorithm ${algorithm ?? '(none)'}; only hmac-sha256 is supported`);
  if (!value || !/^[A-Za-z0-9+/]+=*$/.test(value)) return invalid('no base64 key "secret"');
  // RFC 8945 section 6: shorter than the hash's output weakens it; tsig-keygen makes 32 octets.
  if (Buffer.from(value, 'base64').length < 16) return invalid('the secret is fewer than 16 octets');
  return {
    ok: true,
    transfer: {
      secondaries: spec.secondaries.map((s) => ({ address: s.address, port: s.port ?? 53 })),
      tsigSecretRef: { namespace: spec.tsigSecretRef.namespace, name: spec.tsigSecretRef.name },
    },
    keyText: tsigKeyText(name, value),
  };
}

/** The key as tsig-keygen writes it (BIND's key clause, which the dns-server's key parser reads). */
export function tsigKeyText(name: string, secret: string): string {
  return `key "${name}" {\n\talgorithm hmac-sha256;\n\tsecret "${secret}";\n};\n`;
}

/**
 * The transfer in force after this pass: the spec's once checked; the one before while the spec's
 * is refused (or was not checked this pass); none once the spec has none.
 */
export function transferInForce(
  spec: TransferSpec | undefined,
  verdict: TransferVerdict | undefined,
  previous: EnforcedZone | undefined,
): TransferSpec | undefined {
  if (!spec) return undefined;
  return verdict?.ok ? verdict.transfer : previous?.transfer;
}

/** TransferReady, while the spec asks for a transfer (left as it was when not checked this pass). */
export function transferCondition(
  conditions: Condition[],
  spec: TransferSpec | undefined,
  verdict: TransferVerdict | undefined,
  generation: number | undefined,
  now: Date,
): Condition[] {
  return setConditionWhile(
    conditions,
    spec !== undefined,
    ZONE_CONDITIONS.TransferReady,
    verdict && {
      ...(verdict.ok
        ? {
            status: 'True',
            reason: ZONE_REASONS.Ready,
            message: `transfer to ${verdict.transfer.secondaries.map((s) => `${s.address.includes(':') ? `[${s.address}]` : s.address}:${s.port}`).join(', ')} signed with the key of Secret ${verdict.transfer.tsigSecretRef.namespace}/${verdict.transfer.tsigSecretRef.name}`,
          }
        : {
            status: 'False',
            reason: verdict.reason,
            message: `refused, the transfer in force stays: ${verdict.message}`,
          }),
      observedGeneration: generation,
    },
    now,
  );
}
