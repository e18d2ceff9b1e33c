/**
 * Whether a backend accepted the caller's own credential during one execution. Operation names
 * are metric labels only for callers a backend let in (server/observability.ts): anyone can send
 * a name, but only a credential a backend accepts can take one of the label slots.
 */

/**
 * Answers that say nothing about the credential being accepted: rejected (401, 403), refused
 * before it was looked at (429), or the backend failing (5xx).
 */
function provesCredential(status: number): boolean {
  return status >= 200 && status < 500 && status !== 401 && status !== 403 && status !== 429;
}

export class CredentialProof {
  #proven = false;

  /** True once a request that carried the caller's credential got an answer that accepts it. */
  get proven(): boolean {
    return this.#proven;
  }

  /** For {@link CallOptions.onAnswer}: told the status of each answer to a request with the caller's credential. */
  readonly answered = (status: number): void => {
    if (provesCredential(status)) this.#proven = true;
  };
}
