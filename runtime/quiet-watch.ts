// The Watch that our informers open. client-node's Watch gives up on a watch that has carried no
// event for 30 s and ListWatch opens it again: a quiet resource (most of a fleet's, at rest) costs two
// watch requests a minute, per resource and per cluster (measured: bench/cold-start.ts --rest). As
// client-go's reflector does, this one asks the API server for bookmarks (allowWatchBookmarks: with
// its watch cache it sends one a minute on a quiet watch) and for a server-side end after a random
// 5 to 10 minutes (timeoutSeconds, as client-go's minWatchTimeout), and waits 75 s without a byte,
// past the one-minute bookmark, before it takes the connection for dead.
import { Watch, type KubeConfig } from '@kubernetes/client-node';

/** No byte for this long: the connection is dead (a bookmark is due every 60 s). */
export const WATCH_INACTIVITY_MS = 75_000;
const MIN_WATCH_TIMEOUT_S = 300;

type WatchArgs = Parameters<Watch['watch']>;

/** Applied to each event's object before the informer caches it (e.g. stripManagedFields). */
export type ObjectTransform = (object: object) => object;

export class QuietWatch extends Watch {
  constructor(
    config: KubeConfig,
    private readonly random: () => number = Math.random,
    private readonly transform?: ObjectTransform,
  ) {
    super(config);
    // client-node 2.x keeps its inactivity timeout in a private field and takes no option for it.
    (this as unknown as { requestTimeoutMs: number }).requestTimeoutMs = WATCH_INACTIVITY_MS;
  }

  override watch(
    path: WatchArgs[0],
    queryParams: WatchArgs[1],
    callback: WatchArgs[2],
    done: WatchArgs[3],
  ): ReturnType<Watch['watch']> {
    return super.watch(
      path,
      {
        ...queryParams,
        allowWatchBookmarks: true,
        timeoutSeconds: Math.floor(MIN_WATCH_TIMEOUT_S * (1 + this.random())),
      },
      this.transform === undefined ? callback : transformed(callback, this.transform),
      done,
    );
  }
}

function transformed(callback: WatchArgs[2], transform: ObjectTransform): WatchArgs[2] {
  // A bookmark or an error Status is passed on as it came: only objects are cached.
  return (phase, object, watchObj) =>
    callback(
      phase,
      phase === 'BOOKMARK' || phase === 'ERROR' || object === null || typeof object !== 'object'
        ? object
        : transform(object),
      watchObj,
    );
}
