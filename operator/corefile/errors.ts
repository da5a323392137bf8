// The one error type of the Corefile transform. The reconciler turns `reason`
// into a condition reason on the cluster, so reasons are a closed set.

export type CorefileErrorReason =
  /** The text is not a Corefile we can parse safely: it is left alone. */
  | 'Unparseable'
  /** A block not written by us already serves the zone on the same port. */
  | 'Conflict'
  /** The caller passed a zone or forward target that cannot be written into a Corefile. */
  | 'InvalidArgument';

export class CorefileError extends Error {
  override readonly name = 'CorefileError';

  constructor(
    readonly reason: CorefileErrorReason,
    message: string,
    /** 1-based line of the Corefile the error concerns, when there is one. */
    readonly line?: number,
  ) {
    super(line === undefined ? message : `line ${line}: ${message}`);
  }
}
