/** The caller's namespace on a backend, named: for people (the live page shows project names, not ids). */
import type { VolumeBackend } from '../adapters/contract/backend';
import type { NamespaceName } from '../adapters/contract/capabilities';
import type { GatewayContext } from './context';

/** The namespace the caller's credential for `b` is bound to; null when the backend binds none (no `callerScope` facet). */
export const callerNamespace = (ctx: GatewayContext, b: VolumeBackend): Promise<NamespaceName | null> =>
  b.callerScope ? b.callerScope.callerNamespace(ctx.call(b.id)) : Promise.resolve(null);
