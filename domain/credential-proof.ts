/**
 * Whether a backend accepted the caller's own credential during one execution. Operation names
 * are metric labels only for callers a backend let in (server/observability.ts): anyone can send
 * a name, but only a credential a backend accepts can take one of the label slots.
 */

/**
 * Answers only a request whose credential was checked and let in gets: a success, or not found or
 * conflict about the resource it named. Not 401/403 (rejected), nor 400, 429 or other 4xx, which
 * can come before the credential is looked at (Nomad decodes bodies and event topics before its
 * ACL check), nor 5xx (the backend failing says nothing about the caller).
 */
function provesCredential(status: number): boolean {
  return (status >= 200 && status < 300) || status === 404 || status === 409;
}

export class CredentialProof {
  #proven = false;

  /** True once a request that carried the caller's credential got an answer that accepts it. */
  get proven(): boolean {
    return this.#proven;
  }

  /** For `CallOptions.onAnswer` (adapters/backend.ts): told the status of each answer to a request with the caller's credential. */
  readonly answered = (status: number): void => {
    if (provesCredential(status)) this.#proven = true;
  };
}
