/** Shapes shared by the use cases' inputs. */
import type { VolumeBackend } from '../adapters/contract/backend';

/**
 * A part of a use case's input that is checked once the use case has found the backend and the
 * facet it needs: a backend without the facet refuses (UNSUPPORTED_BY_BACKEND) whatever was given,
 * and the part is checked with that backend's rules. The resolver maps the arguments in it.
 */
export type CheckedFor<T> = (backend: VolumeBackend) => T;
