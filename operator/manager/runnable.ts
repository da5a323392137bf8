/**
 * What the manager starts once its caches have synced and stops on shutdown, as controller-runtime's
 * manager.Runnable: every controller is one, so none depends on another's start order.
 */
export interface Runnable {
  /** For logs and errors: "gatewaydns", "mcs", "corefile". */
  readonly name: string;
  start(): void | Promise<void>;
  stop(): Promise<void>;
}
