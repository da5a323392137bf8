// Kubernetes mode: the signing keys of the zones the operator declares signed
// (api/zone-declaration.ts `dnssec`, ADR 0106), read from the one Secret the
// declaration names in this server's namespace. Read again whenever the
// declaration changes and every resync; the store gets the PEM text. A key
// that cannot be read keeps the last one read for its zone, so the zone stays
// served as it was (signed with it), logged and counted; a zone declared
// without dnssec drops its key.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { DeclaredZone } from '../../api/index.js';
import type { Logger } from '../../runtime/log.js';

export interface ZoneKeySourceOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  resyncMs: number;
  onKeys: (keys: { zone: string; pem: string }[]) => void;
  onError: (source: string) => void;
  log: Logger;
}

export class ZoneKeySource {
  readonly name: string;
  private readonly core: CoreV1Api;
  private declared: DeclaredZone[] = [];
  private readonly last = new Map<string, string>();
  private readonly problems = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private delivered = '';
  private reading: Promise<void> = Promise.resolve();

  constructor(private readonly opts: ZoneKeySourceOptions) {
    this.name = `dnssec-keys:${opts.namespace}`;
    this.core = opts.kubeConfig.makeApiClient(CoreV1Api);
  }

  start(): void {
    this.timer = setInterval(() => this.read(), this.opts.resyncMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** The zones declared now (the ZoneDeclarationSource's last delivery). */
  setDeclared(zones: readonly DeclaredZone[]): void {
    // Named as the zones are served (zone/declared.ts): lower case, no final dot.
    this.declared = zones
      .filter((z) => z.dnssec)
      .map((z) => ({ ...z, name: z.name.toLowerCase().replace(/\.$/, '') }));
    this.read();
  }

  private read(): void {
    this.reading = this.reading.then(() => this.readNow()).catch(() => undefined);
  }

  private async readNow(): Promise<void> {
    const zones = this.declared;
    for (const name of [...this.last.keys()]) if (!zones.some((z) => z.name === name)) this.last.delete(name);
    for (const zone of zones) {
      const { secret, key } = zone.dnssec!;
      let problem: string | undefined;
      try {
        const s = await this.core.readNamespacedSecret({ name: secret, namespace: this.opts.namespace });
        const data = s.data?.[key];
        if (data === undefined) problem = `the Secret ${this.opts.namespace}/${secret} has no key "${key}"`;
        else this.last.set(zone.name, Buffer.from(data, 'base64').toString('utf8'));
      } catch (err) {
        problem = `cannot read the Secret ${this.opts.namespace}/${secret}: ${(err as Error).message}`;
      }
      if (problem !== undefined) {
        this.opts.onError(this.name);
        if (this.problems.get(zone.name) !== problem)
          this.opts.log.error('DNSSEC key not read; the zone stays served as it was', {
            source: this.name,
            zone: zone.name,
            error: problem,
            signedWithLastKey: this.last.has(zone.name),
          });
        this.problems.set(zone.name, problem);
      } else this.problems.delete(zone.name);
    }
    const keys = [...this.last].map(([zone, pem]) => ({ zone, pem }));
    const text = JSON.stringify(keys);
    if (text === this.delivered) return;
    this.delivered = text;
    this.opts.onKeys(keys);
  }
}
