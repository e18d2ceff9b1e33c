/**
 * Operation names as metric labels. Names are chosen by clients, and each label value is a set
 * of series (with histogram buckets) that lives as long as the process: only callers a backend
 * let in, or trusted documents, may add one (issue 17, item 12), and the cap stays as a backstop.
 */

/** Distinct operation names kept as labels; later names count as `other`. */
export const MAX_OPERATION_LABELS = 200;

const NAME = /^[_A-Za-z][_0-9A-Za-z]{0,63}$/;

/** An operation's name for logs and labels: the name when it is a sane GraphQL name, else `anonymous` or `invalid`. */
export function operationName(name: string | null | undefined): string {
  if (!name) return 'anonymous';
  return NAME.test(name) ? name : 'invalid';
}

export class OperationLabels {
  readonly #seen = new Set<string>();

  /** @param max distinct names kept as labels. @default MAX_OPERATION_LABELS */
  constructor(readonly max = MAX_OPERATION_LABELS) {}

  /**
   * The label of an operation named `name`.
   * @param vouched the document is a trusted one, or a backend accepted the caller's credential
   *   during the operation: only then may the name be a label of its own (else `other`).
   */
  label(name: string | null | undefined, vouched: boolean): string {
    const n = operationName(name);
    if (n !== name) return n;
    if (!vouched) return 'other';
    if (this.#seen.has(n)) return n;
    if (this.#seen.size >= this.max) return 'other';
    this.#seen.add(n);
    return n;
  }
}
