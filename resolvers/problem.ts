/** The volume doctor's problems (docs/doctor.md): `volumeProblems`, `Volume.problems` and the problem types. */
import type { OpenProblem } from '../adapters/contract/diagnosis';
import { BadUserInputError } from '../adapters/contract/errors';
import { pageSize } from '../adapters/contract/input';
import { listVisibleProblems, problemSince, type ProblemPage, type ProblemSource } from '../domain/problems';
import { getVolume, volumeId } from '../domain';
import type { GatewayContext } from '../domain/context';
import type {
  QueryResolvers,
  QueryVolumeProblemsArgs,
  VolumeProblemEvidenceResolvers,
  VolumeProblemResolvers,
  VolumeRemedyMutationResolvers,
  VolumeStatusEvidenceResolvers,
} from '../schema/generated/resolvers-types';

/** Without a doctor every backend is left out as NOT_DIAGNOSED. */
const NO_DOCTOR: ProblemSource = {
  problems: () => [],
  ofVolume: () => [],
  gap: (backend) => ({ reason: 'NOT_DIAGNOSED', message: `backend "${backend}": the volume doctor is off` }),
};

/** A cursor: the (since, id) of the last problem shown, so a page continues after it as problems open and close. */
const cursorOf = (p: OpenProblem): string =>
  Buffer.from(JSON.stringify([problemSince(p), p.id]), 'utf8').toString('base64url');

function afterCursor(after: string): [since: number, id: string] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(after, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[0] !== 'number' || typeof parsed[1] !== 'string')
    throw new BadUserInputError('after is not a cursor issued by this gateway for volumeProblems', 'after');
  return [parsed[0], parsed[1]];
}

const isAfter = (p: OpenProblem, [since, id]: [number, string]): boolean =>
  problemSince(p) > since || (problemSince(p) === since && p.id > id);

function minAgeArg(v: number | null | undefined): number {
  if (v === null || v === undefined) return 0;
  if (!Number.isInteger(v) || v < 0)
    throw new BadUserInputError('filter.minAge must be 0 or more seconds', 'filter.minAge');
  return v;
}

async function problemPage(ctx: GatewayContext, args: QueryVolumeProblemsArgs): Promise<ProblemPage> {
  const size = pageSize(args.first, 50);
  const after = args.after ? afterCursor(args.after) : null;
  const f = args.filter;
  const visible = await listVisibleProblems(ctx, ctx.problems ?? NO_DOCTOR, {
    backends: f?.backends ?? undefined,
    kinds: f?.kinds ?? undefined,
    severities: f?.severities ?? undefined,
    minAgeSeconds: minAgeArg(f?.minAge),
  });
  const rest = after ? visible.problems.filter((p) => isAfter(p, after)) : visible.problems;
  const nodes = rest.slice(0, size);
  return {
    nodes,
    pageInfo: {
      hasNextPage: rest.length > size,
      hasPreviousPage: after !== null,
      startCursor: nodes[0] ? cursorOf(nodes[0]) : null,
      endCursor: nodes.length > 0 ? cursorOf(nodes.at(-1)!) : null,
    },
    omittedBackends: visible.omissions.map((o) => {
      const backend = ctx.registry.forId(o.backend);
      return {
        backend,
        reason: o.reason,
        code: o.error?.code ?? null,
        message:
          o.reason === 'NO_CREDENTIAL'
            ? `backend "${o.backend}" needs a credential (${ctx.registry.credentialHeader(backend)}) and the request carried none for it`
            : (o.message ?? o.error?.message ?? 'the backend failed'),
      };
    }),
  };
}

export const problemQueries: Pick<QueryResolvers, 'volumeProblems'> = {
  volumeProblems: (_p, args, ctx) => problemPage(ctx, args),
};

export const problemType: VolumeProblemResolvers = {
  volumeId: (p) => volumeId(p.volume),
  // Read with the caller's credential: null when gone (a compute attachment to a deleted volume).
  volume: (p, _a, ctx) => getVolume(ctx, p.volume),
  backend: (p, _a, ctx) => ctx.registry.forId(p.backend),
};

export const problemEvidenceType: VolumeProblemEvidenceResolvers = {
  __resolveType: (e) => e.__typename,
};

export const statusEvidenceType: VolumeStatusEvidenceResolvers = {
  thresholdSeconds: (e) => (e.thresholdMs === null ? null : Math.round(e.thresholdMs / 1000)),
};

export const remedyMutationType: VolumeRemedyMutationResolvers = {
  variables: (m) => JSON.stringify(m.variables),
};

/** `Volume.problems`: the caller read the volume, which proves it may see them. */
export const volumeProblemsOf = (v: { ref: OpenProblem['volume'] }, ctx: GatewayContext): readonly OpenProblem[] =>
  ctx.problems?.ofVolume(v.ref) ?? [];
