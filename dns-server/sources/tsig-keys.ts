// Kubernetes mode: the TSIG keys of the zones the operator declares with
// transfer (api/zone-declaration.ts `transfer`, ADR 0216), read from the one
// Secret the declaration names in this server's namespace (capi-dns-tsig-keys),
// one data key per zone, as tsig-keygen writes it. Read again whenever the
// declaration changes and every resync, as zone-keys.ts reads the DNSSEC keys.
// A key that cannot be read keeps the last one read for its zone (its
// transfers go on as they were), logged and counted; a zone declared without
// transfer drops its key. The --tsig-key-file keys are not read here and win.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { DeclaredZone } from '../../api/index.js';
import type { Logger } from '../../runtime/log.js';
import { parseTsigKeys } from '../transfer/key-file.js';
import type { TsigKey } from '../transfer/tsig.js';

export interface TsigKeySourceOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  resyncMs: number;
  /** Every declared zone's key (by zone name, lower case, no final dot), every time one changes. */
  onKeys: (keys: ReadonlyMap<string, TsigKey>) => void;
  onError: (source: string) => void;
  log: Logger;
}

export class TsigKeySource {
  readonly name: string;
  private readonly core: CoreV1Api;
  private declared: DeclaredZone[] = [];
  private readonly last = new Map<string, TsigKey>();
  private readonly problems = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private delivered = '';
  private reading: Promise<void> = Promise.resolve();

  constructor(private readonly opts: TsigKeySourceOptions) {
    this.name = `tsig-keys:${opts.namespace}`;
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
    this.declared = zones.filter((z) => z.transfer);
    this.read();
  }

  private read(): void {
    this.reading = this.reading.then(() => this.readNow()).catch(() => undefined);
  }

  private async readNow(): Promise<void> {
    const zones = this.declared.map((z) => ({ zone: z, name: z.name.toLowerCase().replace(/\.$/, '') }));
    for (const name of [...this.last.keys()]) if (!zones.some((z) => z.name === name)) this.last.delete(name);
    // One GET per Secret named (the operator names one): the zones' keys are its data keys.
    const secrets = new Map<string, Promise<Record<string, string>>>();
    for (const { zone, name } of zones) {
      const secret = zone.transfer!.tsigSecret;
      const where = `${this.opts.namespace}/${secret}`;
      if (!secrets.has(secret))
        secrets.set(
          secret,
          this.core
            .readNamespacedSecret({ name: secret, namespace: this.opts.namespace })
            .then((s) => s.data ?? {}),
        );
      let problem: string | undefined;
      try {
        const data = (await secrets.get(secret)!)[zone.name];
        if (data === undefined) problem = `the Secret ${where} has no key "${zone.name}"`;
        else {
          const text = Buffer.from(data, 'base64').toString('utf8');
          this.last.set(name, parseTsigKeys(text, `Secret ${where} key "${zone.name}"`)[0]!);
        }
      } catch (err) {
        problem = `cannot read the TSIG key of the Secret ${where}: ${(err as Error).message}`;
      }
      if (problem !== undefined) {
        this.opts.onError(this.name);
        if (this.problems.get(name) !== problem)
          this.opts.log.error('TSIG key not read; the zone keeps its transfers as they were', {
            source: this.name,
            zone: name,
            error: problem,
            withLastKey: this.last.has(name),
          });
        this.problems.set(name, problem);
      } else this.problems.delete(name);
    }
    const text = JSON.stringify(
      [...this.last].map(([zone, k]) => [zone, k.name, k.secret.toString('base64')]),
    );
    if (text === this.delivered) return;
    this.delivered = text;
    this.opts.onKeys(new Map(this.last));
  }
}
