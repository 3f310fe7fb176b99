/** What went wrong while running the local cluster, for callers that branch on it. */
export type ClusterErrorCode =
  /** A program exited or never became ready; the message names it and shows the tail of its log. */
  | 'COMPONENT_FAILED'
  /** The cluster did not reach a state in time (nodes Ready, default ServiceAccount, ...). */
  | 'NOT_READY'
  /** kubectl could not be run, or `apply` was refused. */
  | 'KUBECTL_FAILED';

/** The one error type of the local cluster harness: a code, a message a person can act on, the cause. */
export class ClusterError extends Error {
  readonly code: ClusterErrorCode;

  constructor(code: ClusterErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ClusterError';
    this.code = code;
  }
}
