/**
 * What a backend kind registers: its module, and the parts of its own that the wiring cannot find by
 * its folders' names. The rest is found by the kind's name (`module.kind`): its SDL in
 * `schema/<kind>/`, its models for codegen in `adapters/<kind>/model.ts`, its contract fixture in
 * `adapters/<kind>/testing/contract-fixture.ts` (docs/architecture.md, "Adding a backend").
 */
import type { BackendModule, CommonBackendSettings } from '../../adapters/contract/module';
import type { Resolvers } from '../../schema/generated/resolvers-types';
import type { DemoPart } from '../../simulators/common/demo-backend';
import type { EventFieldSources } from '../../subscriptions/live/view';

/** A kind's module as the wiring sees it: through the settings every kind has. */
export type AnyModule = BackendModule<CommonBackendSettings>;

/** A kind with parts beyond its adapter and SDL: `./<kind>.ts` gathers them. */
export interface KindParts<Info = unknown> {
  /** Its module (`adapters/<kind>/module.ts`). */
  readonly module: AnyModule;
  /** The resolvers of its SDL's root fields and own types (`resolvers/<kind>/`). @default none */
  readonly resolvers?: Resolvers;
  /**
   * Where subscription events get its types' fields that have resolvers of their own
   * (`resolvers/<kind>/event-fields.ts`; resolvers/event-fields.ts says how). @default none
   */
  readonly eventFields?: EventFieldSources;
  /**
   * Its part of demo mode (`simulators/<kind>/demo-backend.ts`), loaded when demo mode starts: a
   * configured gateway never loads the simulators (test/server/demo-lazy.test.ts). @default no demo
   */
  readonly demo?: () => DemoPart<Info>;
}

/** One line of `./registered.ts`: a kind's module alone (all it has is its adapter and SDL), or its parts. */
export type Registration = AnyModule | KindParts;

/** A registration with its parts spelled out. */
export const partsOf = (r: Registration): KindParts => ('module' in r ? r : { module: r });
