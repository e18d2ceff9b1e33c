/** The configured backends, in configuration order (the order of merged listings). */
import type { VolumeBackend } from '../adapters/contract/backend';
import { BreakerBoard } from '../adapters/contract/breaker';
import { FACET_NAMES, type BackendFacets, type Facet, type FacetNames } from '../adapters/contract/capabilities';
import { DEFAULT_LIST_BACKEND_DEADLINE_MS } from '../adapters/listing';
import { BadUserInputError, NotFoundError, UnsupportedByBackendError } from '../adapters/contract/errors';
import type { BackendKind, Capability } from '../adapters/contract/model';

/** How the gateway guards itself against failing backends. */
export interface RegistryResilience {
  /** The board the backends were built with. @default an empty board (backends with boards of their own report none) */
  breakers?: BreakerBoard;
  /** Per-backend deadline of merged lists, ms. @default 5000 */
  listBackendDeadlineMs?: number;
}

/** What messages call the kinds' things, from their modules (the wiring hands it in: server/backends.ts). */
export interface KindNames {
  /** Each kind's (`VolumeBackend.kind`) caller-credential header (as its module declares it), for NO_CREDENTIAL messages. */
  readonly credentialHeaders: ReadonlyMap<BackendKind, string>;
  /** The facets some kind names in its own words (`BackendModule.facetNames`). @default {@link FACET_NAMES} only */
  readonly facetNames?: FacetNames;
}

/** The options of a {@link BackendRegistry}. */
export interface RegistryOptions extends RegistryResilience {
  /** @default no header names (messages say "its credential header") and the neutral facet names */
  kinds?: KindNames;
}

export class BackendRegistry {
  readonly #byId: Map<string, VolumeBackend>;

  /** The board the backends' breakers live on (`/readyz` and `/metrics` read it). */
  readonly breakers: BreakerBoard;
  /** Longest one backend's part of a merged list may take (adapters/listing.ts). */
  readonly listBackendDeadlineMs: number;

  readonly #kinds: KindNames | undefined;

  constructor(
    readonly all: readonly VolumeBackend[],
    options: RegistryOptions = {},
  ) {
    this.#byId = new Map(all.map((b) => [b.id, b]));
    this.breakers = options.breakers ?? new BreakerBoard();
    this.listBackendDeadlineMs = options.listBackendDeadlineMs ?? DEFAULT_LIST_BACKEND_DEADLINE_MS;
    this.#kinds = options.kinds;
  }

  /** The header a caller sends `b`'s credential in (the one its kind's module declares), for messages. */
  credentialHeader(b: Pick<VolumeBackend, 'kind'>): string {
    return this.#kinds?.credentialHeaders.get(b.kind) ?? 'its credential header';
  }

  /** What messages call `facet`: a kind's own words where its module gives them, else the neutral ones. */
  facetName(facet: Facet): string {
    return this.#kinds?.facetNames?.[facet] ?? FACET_NAMES[facet];
  }

  get ids(): string[] {
    return this.all.map((b) => b.id);
  }

  find(id: string): VolumeBackend | undefined {
    return this.#byId.get(id);
  }

  /** A backend named by the caller in an argument: unknown → BAD_USER_INPUT. */
  forArgument(id: string, argument: string): VolumeBackend {
    const b = this.#byId.get(id);
    if (!b)
      throw new BadUserInputError(
        `${argument}: no backend "${id}" is configured (configured: ${this.ids.join(', ')})`,
        argument,
      );
    return b;
  }

  /** A backend named inside a global id: unknown → NOT_FOUND (the object cannot be here). */
  forId(id: string): VolumeBackend {
    const b = this.#byId.get(id);
    if (!b) throw new NotFoundError(`no backend "${id}" is configured`);
    return b;
  }

  /** The backend's facet `facet` (adapters/contract/capabilities.ts), or UNSUPPORTED_BY_BACKEND saying which. */
  capable<F extends Facet>(b: VolumeBackend, facet: F): NonNullable<BackendFacets[F]> {
    const f = b[facet];
    if (f) return f;
    throw new UnsupportedByBackendError(b.id, this.facetName(facet));
  }

  /** The backends with facet `facet`, each with it, in configuration order. */
  having<F extends Facet>(facet: F): Array<{ backend: VolumeBackend; facet: NonNullable<BackendFacets[F]> }> {
    return this.all.flatMap((b) => {
      const f = b[facet];
      return f ? [{ backend: b, facet: f }] : [];
    });
  }

  /** Backends that can do `capability`, optionally limited to `ids`. */
  select(capability: Capability, ids?: readonly string[] | null, argument = 'backends'): VolumeBackend[] {
    const chosen = ids && ids.length > 0 ? ids.map((id) => this.forArgument(id, argument)) : this.all;
    return chosen.filter((b) => b.capabilities.has(capability));
  }

  async close(): Promise<void> {
    await Promise.all(this.all.map((b) => b.close()));
  }
}
