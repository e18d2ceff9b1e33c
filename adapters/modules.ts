/**
 * The module registry: every kind of backend the gateway knows, in the order texts list them
 * (help, GraphiQL's header editor, /live's credential help). The one file outside the backend
 * folders that names the kinds; adding a backend is its folder and one line here.
 */
import type { BackendModule, CommonBackendSettings } from './contract/module';
import { memoryModule } from './memory/module';
import { nomadModule } from './nomad/module';
import { openStackModule } from './openstack/module';

// Each module is typed by its own settings; the registry sees them through the common ones.
type AnyModule = BackendModule<CommonBackendSettings>;

/** Every backend module. */
export const BACKEND_MODULES: readonly AnyModule[] = [
  nomadModule,
  openStackModule,
  memoryModule,
];

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
