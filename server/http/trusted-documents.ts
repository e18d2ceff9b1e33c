/**
 * Trusted documents: the persisted-operation allowlist a production deployment can switch on
 * (`TRUSTED_DOCUMENTS`). Transport-neutral: a lookup by id and by document text.
 *
 * Accepted files:
 * - Apollo's persisted query manifest (what `generate-persisted-query-manifest` writes):
 *   `{ "format": "apollo-persisted-query-manifest", "version": 1, "operations": [{ "id", "name", "type", "body" }] }`;
 * - a plain map `{ "<id>": "<document>" }` (Relay, GraphQL Codegen's client preset, graphql-http's
 *   persisted documents).
 * Ids are usually the SHA-256 of the body but need not be; every document is also indexed by
 * the SHA-256 of its text, so a client may name it by either, and a free-form `query` can be
 * matched to the list.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** Lower-case hex SHA-256 of a document's UTF-8 text (what APQ and Apollo's manifest use). */
export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** A trusted-documents file is malformed; `message` says where. */
export class TrustedDocumentsError extends Error {}

export class TrustedDocuments {
  /** id → document text, and sha256(text) → text. */
  readonly #byId = new Map<string, string>();
  readonly #byHash = new Map<string, string>();

  private constructor(entries: Array<[id: string, body: string]>) {
    for (const [id, body] of entries) {
      this.#byId.set(normalizeId(id), body);
      this.#byHash.set(sha256Hex(body), body);
    }
  }

  /** How many documents the list holds. */
  get size(): number {
    return this.#byId.size;
  }

  /**
   * The document an id names: a manifest id or the SHA-256 of the text, bare or as
   * `sha256:<hex>` (the GraphQL over HTTP persisted documents form).
   */
  byId(id: string): string | undefined {
    const n = normalizeId(id);
    return this.#byId.get(n) ?? this.#byHash.get(n);
  }

  /** Whether this exact text (byte for byte) is a trusted document. */
  contains(text: string): boolean {
    return this.hasHash(sha256Hex(text));
  }

  /** Whether a text whose SHA-256 (lower-case hex) is `hex` is a trusted document. */
  hasHash(hex: string): boolean {
    return this.#byHash.has(hex);
  }

  /** From the parsed JSON of a manifest or a plain map. @throws TrustedDocumentsError */
  static fromJson(json: unknown): TrustedDocuments {
    if (typeof json !== 'object' || json === null || Array.isArray(json))
      throw new TrustedDocumentsError(
        'must be a JSON object: an Apollo persisted query manifest or a { "<id>": "<document>" } map',
      );
    const o = json as Record<string, unknown>;
    const entries: Array<[string, string]> = [];
    if (o.format !== undefined) {
      if (o.format !== 'apollo-persisted-query-manifest')
        throw new TrustedDocumentsError(
          `unknown format ${JSON.stringify(o.format)} (expected "apollo-persisted-query-manifest")`,
        );
      if (o.version !== 1)
        throw new TrustedDocumentsError(`unsupported manifest version ${JSON.stringify(o.version)} (expected 1)`);
      if (!Array.isArray(o.operations)) throw new TrustedDocumentsError('"operations" must be a list');
      o.operations.forEach((op: unknown, i) => {
        const e = (op ?? {}) as Record<string, unknown>;
        if (typeof e.id !== 'string' || e.id === '')
          throw new TrustedDocumentsError(`operations[${i}].id must be a non-empty string`);
        if (typeof e.body !== 'string' || e.body.trim() === '')
          throw new TrustedDocumentsError(`operations[${i}].body must be a non-empty string`);
        entries.push([e.id, e.body]);
      });
    } else {
      for (const [id, body] of Object.entries(o)) {
        if (typeof body !== 'string' || body.trim() === '')
          throw new TrustedDocumentsError(`the document of ${JSON.stringify(id)} must be a non-empty string`);
        entries.push([id, body]);
      }
    }
    if (entries.length === 0)
      throw new TrustedDocumentsError('holds no documents: with it every operation would be refused');
    return new TrustedDocuments(entries);
  }

  /** Reads and parses a file. @throws TrustedDocumentsError */
  static fromFile(path: string): TrustedDocuments {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new TrustedDocumentsError(
        `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new TrustedDocumentsError(`${path} is not valid JSON: ${(err as Error).message}`);
    }
    return TrustedDocuments.fromJson(json);
  }
}

/** `sha256:ABC…` → `abc…`; other ids unchanged. */
function normalizeId(id: string): string {
  return /^sha256:[0-9a-f]{64}$/i.test(id)
    ? id.slice(7).toLowerCase()
    : /^[0-9a-f]{64}$/i.test(id)
      ? id.toLowerCase()
      : id;
}
