// The signing key of each signed DNSZone (spec.dnssec, ADR 0106), read from
// the management cluster: the Secret spec.dnssec.keySecretRef names, or the
// one the operator generates once, `<dnszone>-dnssec` in its own namespace
// (labelled with the DNSZone, owned by nothing: it outlives the DNSZone, so
// that recreating the DNSZone keeps the DS the parent holds). Read each pass
// (level-triggered); a key that is missing or does not parse is reported,
// never replaced by a new one. The controller watches the Secret
// (secret-watches.ts): a key changed in place is read at once.
import type { V1Secret } from '@kubernetes/client-node';
import {
  CONTROLLER_NAME,
  DEFAULT_DNSSEC_ALGORITHM,
  DNSSEC_KEY_DATA,
  DNSSEC_KEY_LABEL,
  MANAGED_BY_LABEL,
  type DNSZone,
} from '../../api/index.js';
import { ZONE_REASONS } from '../model/conditions.js';
import { errorText, httpStatus, type Logger } from '../manager/runtime/log.js';
import { generateZoneKey, zoneKeyInfo, type ZoneKeyInfo } from './dnssec-key.js';
import { keySecretOf } from './key-secrets.js';
import type { ManagementSecrets } from './secrets.js';

/** A zone's key as read now: its PEM and DS, or why there is none. */
export type ZoneKeyRead =
  | { pem: string; info: ZoneKeyInfo }
  | { reason: typeof ZONE_REASONS.KeyNotFound | typeof ZONE_REASONS.KeyInvalid; message: string };

export interface ZoneKeyReaderOptions {
  secrets: ManagementSecrets;
  /** Where generated keys go: the operator's namespace. */
  namespace: string;
  log: Logger;
}

export class ZoneKeyReader {
  constructor(private readonly opts: ZoneKeyReaderOptions) {}

  /** The Secret a DNSZone's key is in. */
  secretOf(zone: DNSZone): { namespace: string; name: string; generated: boolean } {
    return keySecretOf(zone, this.opts.namespace);
  }

  async read(zone: DNSZone, apex: string): Promise<ZoneKeyRead> {
    const { namespace, name, generated } = this.secretOf(zone);
    const where = `the Secret ${namespace}/${name}`;
    let secret: V1Secret | undefined;
    try {
      secret = await this.opts.secrets.get(namespace, name);
      if (!secret && generated) secret = await this.generate(zone, namespace, name);
    } catch (err) {
      return { reason: ZONE_REASONS.KeyNotFound, message: `cannot read ${where}: ${errorText(err)}` };
    }
    if (!secret) return { reason: ZONE_REASONS.KeyNotFound, message: `${where} does not exist` };
    const data = secret.data?.[DNSSEC_KEY_DATA];
    if (data === undefined)
      return { reason: ZONE_REASONS.KeyNotFound, message: `${where} has no "${DNSSEC_KEY_DATA}"` };
    const pem = Buffer.from(data, 'base64').toString('utf8');
    try {
      return { pem, info: zoneKeyInfo(apex, pem) };
    } catch (err) {
      return { reason: ZONE_REASONS.KeyInvalid, message: `${where} "${DNSSEC_KEY_DATA}": ${errorText(err)}` };
    }
  }

  /** Created once; another replica (or an earlier pass) that created it first wins: its key is read. */
  private async generate(zone: DNSZone, namespace: string, name: string): Promise<V1Secret | undefined> {
    const algorithm = zone.spec.dnssec?.algorithm ?? DEFAULT_DNSSEC_ALGORITHM;
    const body: V1Secret = {
      metadata: {
        name,
        namespace,
        labels: { [DNSSEC_KEY_LABEL]: zone.metadata.name, [MANAGED_BY_LABEL]: CONTROLLER_NAME },
      },
      type: 'Opaque',
      data: { [DNSSEC_KEY_DATA]: Buffer.from(generateZoneKey(algorithm)).toString('base64') },
    };
    try {
      const created = await this.opts.secrets.create(namespace, body);
      this.opts.log.info('DNSSEC key generated', {
        dnszone: zone.metadata.name,
        secret: `${namespace}/${name}`,
        algorithm,
      });
      return created;
    } catch (err) {
      if (httpStatus(err) === 409) return this.opts.secrets.get(namespace, name);
      throw err;
    }
  }
}
