/**
 * What every module of this Nomad backend shares: its id and the HTTP client (whose calls all go
 * through the backend's breaker), plus the one helper they all use (404 as absence).
 */
import { NotFoundError } from '../contract/errors';
import type { NomadClient } from './client';

export interface NomadContext {
  /** The backend's configured id (in refs, errors and metrics). */
  readonly backend: string;
  readonly client: NomadClient;
}

/** The value of `call`, or null when Nomad answers 404 (`volume not found`, `plugin not found`). */
export async function orNull<T>(call: Promise<T>): Promise<T | null> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof NotFoundError) return null;
    throw err;
  }
}
