// Kubernetes mode: a key per zone the operator declares with one (the DNSSEC
// signing keys, zone-keys.ts; the TSIG keys of the zones with transfer,
// tsig-keys.ts), read from the one Secret the declaration names in this
// server's namespace. Read again whenever the declaration changes and every
// resync. A key that cannot be read keeps the last one read for its zone (what
// it serves goes on as it was), logged and counted; a zone declared without a
// key drops its key. The two kinds differ only in where a zone's key is and
// how its text parses.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { DeclaredZone } from '../../api/index.js';
import type { Logger } from '../../runtime/log.js';

/** What differs between the kinds of declared keys. */
export interface DeclaredKeyKind<T> {
  /** The source's name, before ":<namespace>" (in logs, metrics and the store's readiness). */
  source: string;
  /** The key's name in logs: "TSIG", "DNSSEC". */
  what: string;
  /** What stays as it was while a zone's key cannot be read (logged). */
  meanwhile: string;
  /** The Secret and data key holding a declared zone's key; undefined for a zone declared without one. */
  keyOf: (zone: DeclaredZone) => { secret: string; key: string } | undefined;
  /** The key, from the data key's text; throws, naming `where`, on one that does not parse. */
  parse: (text: string, where: string) => T;
}

export interface DeclaredSecretKeysOptions<T> {
  kubeConfig: KubeConfig;
  namespace: string;
  resyncMs: number;
  /** Every declared zone's key (by zone name, lower case, no final dot), every time one changes. */
  onKeys: (keys: ReadonlyMap<string, T>) => void;
  onError: (source: string) => void;
  log: Logger;
}

export class DeclaredSecretKeys<T> {
  readonly name: string;
  private readonly core: CoreV1Api;
  /** The declared zones with a key, named as they are served (zone/declared.ts): lower case, no final dot. */
  private declared: { name: string; secret: string; key: string }[] = [];
  private readonly last = new Map<string, T>();
  private readonly problems = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private delivered = '';
  private reading: Promise<void> = Promise.resolve();

  constructor(
    private readonly kind: DeclaredKeyKind<T>,
    private readonly opts: DeclaredSecretKeysOptions<T>,
  ) {
    this.name = `${kind.source}:${opts.namespace}`;
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
    this.declared = zones.flatMap((z) => {
      const at = this.kind.keyOf(z);
      return at ? [{ name: z.name.toLowerCase().replace(/\.$/, ''), ...at }] : [];
    });
    this.read();
  }

  private read(): void {
    this.reading = this.reading.then(() => this.readNow()).catch(() => undefined);
  }

  private async readNow(): Promise<void> {
    const zones = this.declared;
    for (const name of [...this.last.keys()]) if (!zones.some((z) => z.name === name)) this.last.delete(name);
    // One GET per Secret named (the operator names one): the zones' keys are its data keys.
    const secrets = new Map<string, Promise<Record<string, string>>>();
    for (const { name, secret, key } of zones) {
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
        const data = (await secrets.get(secret)!)[key];
        if (data === undefined) problem = `the Secret ${where} has no key "${key}"`;
        else {
          const text = Buffer.from(data, 'base64').toString('utf8');
          this.last.set(name, this.kind.parse(text, `Secret ${where} key "${key}"`));
        }
      } catch (err) {
        problem = `cannot read the ${this.kind.what} key of the Secret ${where}: ${(err as Error).message}`;
      }
      if (problem !== undefined) {
        this.opts.onError(this.name);
        if (this.problems.get(name) !== problem)
          this.opts.log.error(`${this.kind.what} key not read; ${this.kind.meanwhile}`, {
            source: this.name,
            zone: name,
            error: problem,
            withLastKey: this.last.has(name),
          });
        this.problems.set(name, problem);
      } else this.problems.delete(name);
    }
    // A key's JSON form is all of it (a Buffer's too): a key changed in any part is delivered.
    const text = JSON.stringify([...this.last]);
    if (text === this.delivered) return;
    this.delivered = text;
    this.opts.onKeys(new Map(this.last));
  }
}
