/**
 * The volume doctor's problems as callers read them (docs/doctor.md): `volumeProblems` across
 * backends and `Volume.problems`. The doctor (subscriptions/doctor/) finds them with the gateway's
 * own credential; a caller sees a problem only where its own credential may read the volume's
 * scope, proved by the backend's subscriber-access rule, the one `volumeChanged` applies.
 */
import type { VolumeBackend } from '../adapters/contract/backend';
import type { OpenProblem, ProblemKind, ProblemSeverity } from '../adapters/contract/diagnosis';
import type { GatewayError } from '../adapters/contract/errors';
import type { VolumeRef } from '../adapters/contract/model';
import { backendFailure } from '../adapters/listing';
import type { GatewayContext } from './context';

/** Why a backend's problems cannot be listed now, or null when they can. */
export type DiagnosisGap = { reason: 'NOT_DIAGNOSED'; message: string } | null;

/** What the doctor answers readers (implemented by subscriptions/doctor/). */
export interface ProblemSource {
  /** The open problems of one backend, in no particular order. */
  problems(backend: string): readonly OpenProblem[];
  /** The open problems of one volume. */
  ofVolume(ref: VolumeRef): readonly OpenProblem[];
  /** Null when the backend's problems are known (its doctor finished a pass), else why not. */
  gap(backend: string): DiagnosisGap;
}

/** `volumeProblems`' filter, checked. */
export interface ProblemFilter {
  backends?: readonly string[];
  kinds?: readonly ProblemKind[];
  severities?: readonly ProblemSeverity[];
  /** Seconds since `startedAt` (else `seenAt`). @default 0 */
  minAgeSeconds?: number;
}

/** A backend `volumeProblems` does not cover. */
export interface ProblemOmission {
  backend: string;
  reason: 'NO_CREDENTIAL' | 'FAILED' | 'NOT_DIAGNOSED';
  error?: GatewayError;
  message?: string;
}

/** The visible problems, oldest first (then by id), and the backends left out. */
export interface VisibleProblems {
  problems: OpenProblem[];
  omissions: ProblemOmission[];
}

/** When a problem began, for ordering and `minAge`: its start where known, else when it was seen. */
export const problemSince = (p: OpenProblem): number => Date.parse(p.startedAt ?? p.seenAt);

const byAge = (a: OpenProblem, b: OpenProblem): number =>
  problemSince(a) - problemSince(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Whether the caller may read `scope` of `backend`: the backend's subscriber-access rule with the
 * caller's own credential (one check per scope and call).
 */
async function mayRead(ctx: GatewayContext, b: VolumeBackend, scope: string, ref: VolumeRef): Promise<boolean> {
  const access = b.subscriberAccess;
  if (!access) return false;
  return (await access.checkAccess(scope, ref, ctx.call(b.id))).allowed;
}

/** The problems the caller may see, filtered, across the backends asked. */
export async function listVisibleProblems(
  ctx: GatewayContext,
  source: ProblemSource,
  filter: ProblemFilter,
): Promise<VisibleProblems> {
  const backends = filter.backends
    ? filter.backends.map((id) => ctx.registry.forArgument(id, 'filter.backends'))
    : ctx.registry.all;
  const kinds = filter.kinds && new Set(filter.kinds);
  const severities = filter.severities && new Set(filter.severities);
  const oldest = Date.now() - (filter.minAgeSeconds ?? 0) * 1000;
  const omissions: ProblemOmission[] = [];
  const parts = await Promise.all(
    backends.map(async (b): Promise<OpenProblem[]> => {
      const gap = source.gap(b.id);
      if (gap) {
        omissions.push({ backend: b.id, reason: gap.reason, message: gap.message });
        return [];
      }
      const found = source
        .problems(b.id)
        .filter(
          (p) =>
            (!kinds || kinds.has(p.kind)) && (!severities || severities.has(p.severity)) && problemSince(p) <= oldest,
        );
      if (found.length === 0) return [];
      if (b.requiresCredential && !ctx.call(b.id).credential.token) {
        omissions.push({ backend: b.id, reason: 'NO_CREDENTIAL' });
        return [];
      }
      const scopes = new Map<string, VolumeRef>();
      for (const p of found) if (!scopes.has(p.scope)) scopes.set(p.scope, p.volume);
      try {
        const allowed = new Set<string>();
        await Promise.all(
          [...scopes].map(async ([scope, ref]) => {
            if (await mayRead(ctx, b, scope, ref)) allowed.add(scope);
          }),
        );
        return found.filter((p) => allowed.has(p.scope));
      } catch (err) {
        omissions.push({ backend: b.id, reason: 'FAILED', error: backendFailure(err) });
        return [];
      }
    }),
  );
  const order = new Map(backends.map((b, i) => [b.id, i]));
  omissions.sort((a, b) => order.get(a.backend)! - order.get(b.backend)!);
  return { problems: parts.flat().sort(byAge), omissions };
}

/** A page of `volumeProblems`, as the schema's connection (omissions named for the resolver). */
export interface ProblemPage {
  nodes: OpenProblem[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  omittedBackends: Array<{
    backend: VolumeBackend;
    reason: ProblemOmission['reason'];
    code: string | null;
    message: string;
  }>;
}
