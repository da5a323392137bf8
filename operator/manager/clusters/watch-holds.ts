// Which GatewayDNS needs which lazily started watch: a watch of a workload
// cluster's Services or EndpointSlices in one namespace lives while at least
// one GatewayDNS holds it and is released when the last one lets go, so the
// operator watches only what some GatewayDNS names (watches.ts keeps one per kind).
export class WatchHolds {
  private readonly byHolder = new Map<string, Set<string>>();
  private readonly count = new Map<string, number>();

  /** `holder` now needs exactly `items`; returns the items nobody needs any more. */
  set(holder: string, items: readonly string[]): string[] {
    const next = new Set(items);
    const previous = this.byHolder.get(holder) ?? new Set<string>();
    for (const item of next) if (!previous.has(item)) this.count.set(item, (this.count.get(item) ?? 0) + 1);
    const released: string[] = [];
    for (const item of previous) {
      if (next.has(item)) continue;
      const left = (this.count.get(item) ?? 1) - 1;
      if (left > 0) this.count.set(item, left);
      else {
        this.count.delete(item);
        released.push(item);
      }
    }
    if (next.size) this.byHolder.set(holder, next);
    else this.byHolder.delete(holder);
    return released.sort();
  }

  /** The holder is gone. */
  drop(holder: string): string[] {
    return this.set(holder, []);
  }

  held(): string[] {
    return [...this.count.keys()].sort();
  }
}
