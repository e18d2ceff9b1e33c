/**
 * The backend kinds the gateway knows, derived from their registrations (./registered.ts): the
 * modules (config, credentials, help, GraphiQL's and /live's texts), the resolvers and SDL folders
 * of the schema, the demo parts, and what the registry's messages call the kinds' things. Nothing
 * else lists kinds.
 */
import type { FacetNames } from '../../adapters/contract/capabilities';
import type { KindNames } from '../../domain/registry';
import type { Resolvers } from '../../schema/generated/resolvers-types';
import type { DemoPart } from '../../simulators/common/demo-backend';
import type { EventFieldSources } from '../../subscriptions/live/view';
import * as REGISTERED from './registered';
import { partsOf, type AnyModule, type KindParts } from './registration';

export type { AnyModule, KindParts, Registration } from './registration';

/** Texts list the kinds that serve a system at a URL first, then those the gateway holds itself (a lab), each group by kind. */
const listOrder = (m: AnyModule): string => `${m.needsUrl ? 0 : 1}${m.kind}`;

/**
 * Every registered kind's parts, in the order texts list them ({@link listOrder}). (A module
 * namespace's key order is no source order: swc and esbuild sort it, tsc does not; so it is set here.)
 * @throws Error at load when a line exports a kind under another name than its module's kind
 */
export const KINDS: readonly KindParts[] = Object.entries(REGISTERED)
  .map(([name, r]) => {
    const parts = partsOf(r);
    if (parts.module.kind !== name)
      throw new Error(
        `server/kinds/registered.ts exports kind ${JSON.stringify(parts.module.kind)} as ${JSON.stringify(name)}: export it under its kind`,
      );
    return parts;
  })
  .sort((a, b) => (listOrder(a.module) < listOrder(b.module) ? -1 : 1));

/** Every backend module, in the order texts list them. */
export const BACKEND_MODULES: readonly AnyModule[] = KINDS.map((k) => k.module);

/** The module of a config kind (`nomad`), or undefined for a kind no module has. */
export const moduleForKind = (kind: string): AnyModule | undefined => BACKEND_MODULES.find((m) => m.kind === kind);

/**
 * The module of a built backend, by its model kind (`VolumeBackend.kind`, e.g. `NOMAD`).
 * @throws Error when no module has that kind (a backend built outside the registry)
 */
export function moduleForBackend(b: { readonly kind: string }): AnyModule {
  const m = BACKEND_MODULES.find((x) => x.modelKind === b.kind);
  if (!m) throw new Error(`no backend module has model kind ${b.kind}`);
  return m;
}

/** The folders below `schema/` the kinds' SDL is in (a kind without one has none). */
export const SDL_FOLDERS: readonly string[] = BACKEND_MODULES.map((m) => m.kind);

/** Each kind's resolvers, for the schema (resolvers/index.ts merges them with the core's). */
export const BACKEND_RESOLVERS: readonly Resolvers[] = KINDS.flatMap((k) => (k.resolvers ? [k.resolvers] : []));

/** Each kind's classification of its fields for subscription events (resolvers/event-fields.ts merges them with the core's). */
export const BACKEND_EVENT_FIELDS: readonly EventFieldSources[] = KINDS.flatMap((k) =>
  k.eventFields ? [k.eventFields] : [],
);

type Registered = typeof REGISTERED;
type DemoKind = {
  [K in keyof Registered]: Registered[K] extends { demo: () => DemoPart } ? K : never;
}[keyof Registered];
type InfoOf<R> = R extends { demo: () => DemoPart<infer I> } ? I : never;

/** What each kind's demo part started, by config kind (its URLs, tokens, ids: simulators/<kind>/demo-backend.ts). */
export type DemoInfo = { readonly [K in DemoKind]: InfoOf<Registered[K]> };

/** The kinds with a demo part, in the order texts list them, each loaded now (demo mode is starting). */
export const demoParts = (): Array<{ kind: DemoKind; part: DemoPart }> =>
  KINDS.flatMap((k) => (k.demo ? [{ kind: k.module.kind as DemoKind, part: k.demo() }] : []));

/** What the registry's messages call the kinds' things: credential headers and facets, from the modules (the first kind to name a facet names it). */
export const KIND_NAMES: KindNames = {
  credentialHeaders: new Map(BACKEND_MODULES.map((m) => [m.modelKind, m.credential.header])),
  facetNames: Object.assign({}, ...[...BACKEND_MODULES].reverse().map((m) => m.facetNames ?? {})) as FacetNames,
};
