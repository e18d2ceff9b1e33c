/**
 * The volume doctor's open problems (and its conditions' first-seen times) in Redis, one key per backend (`<prefix>{live}:problems:<backend>`,
 * in the live path's slot). Only the lease holder of the backend writes it, under its lease's fence,
 * so a new holder starts from what the last one held and does not open every problem again; the
 * other replicas read it to answer `volumeProblems` and `Volume.problems`.
 */
import type { DoctorState, ProblemStore } from '../doctor';
import { DEFAULT_REDIS_KEY_PREFIX } from '../operations/redis-keys';
import { runScript } from '../leases/scripts';
import type { RedisClient } from '../redis-client';
import { liveKey } from './keys';

/** SET KEYS[2] = ARGV[2] for ARGV[3] ms while the lease (KEYS[1]) holds token ARGV[1]; 1 when written. */
const FENCED_SET = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
return 1
`;

/** Options of {@link ProblemSnapshots}. */
export interface ProblemSnapshotsOptions {
  client: RedisClient;
  /** @default 'vg:' */
  keyPrefix?: string;
  /** The lease a write must hold (`WatcherLeases.fence`); null when this replica does not hold it. */
  fence(backend: string): { key: string; token: string } | null;
  /** How long a backend's problems are kept unless rewritten, in ms. @default 86400000 (24 h) */
  ttlMs?: number;
}

export class ProblemSnapshots implements ProblemStore {
  readonly #o: ProblemSnapshotsOptions;
  readonly #prefix: string;

  constructor(o: ProblemSnapshotsOptions) {
    this.#o = o;
    this.#prefix = o.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
  }

  key(backend: string): string {
    return liveKey(this.#prefix, 'problems', backend);
  }

  /** Writes a backend's doctor state; false when the fence did not hold (nothing written). */
  async write(backend: string, state: DoctorState): Promise<boolean> {
    const fence = this.#o.fence(backend);
    if (!fence) return false;
    const written = await runScript(
      this.#o.client,
      FENCED_SET,
      [fence.key, this.key(backend)],
      [fence.token, JSON.stringify(state), String(this.#o.ttlMs ?? 86_400_000)],
    );
    return written === 1;
  }

  /** A backend's doctor state as last written; null when none was (or not one this code wrote). */
  async read(backend: string): Promise<DoctorState | null> {
    const raw = await this.#o.client.get(this.key(backend));
    if (raw === null) return null;
    const s = JSON.parse(raw) as Partial<DoctorState>;
    return Array.isArray(s.problems) && Array.isArray(s.seen) ? (s as DoctorState) : null;
  }
}
