/**
 * The contract suite: one set of cases run over every backend of `backends.ts`, each a real
 * backend (Nomad and OpenStack on their simulators over HTTP, memory on its data file), called
 * through the contract interfaces only.
 */
import type { VolumeBackend } from '../../adapters/contract/backend';
import type { Accepted, BackendPage } from '../../adapters/contract/call-answers';
import type { CallOptions } from '../../adapters/contract/call-options';
import type { ChangeCheck, CompletionRule } from '../../adapters/contract/completion';
import {
  ForbiddenError,
  GatewayError,
  UnauthenticatedError,
  UnsupportedByBackendError,
} from '../../adapters/contract/errors';
import type { Volume, VolumeRef } from '../../adapters/contract/model';
import type { VolumeDelta } from '../../adapters/contract/watch';
import { disposeAll, rejection } from '../support/harness';
import { until } from '../support/until';
import { FIXTURES, type ContractBackend } from './backends';
import {
  CORE_CALLS,
  CORE_CAPABILITIES,
  answersPending,
  changeTracking,
  facetReport,
  watching,
} from './capability-facets';

/** A batch answer as the test compares it: the volume's id, null, or 'error'. */
const answer = (v: Volume | null | Error): string | null =>
  v instanceof Error ? 'error' : v === null ? null : v.ref.nativeId;

const ids = (refs: readonly VolumeRef[]): string[] => refs.map((r) => r.nativeId);

/** Every page of `scope`'s listing, `limit` at a time, from `token`. */
async function allPages(
  b: VolumeBackend,
  scope: string,
  limit: number,
  o: CallOptions,
  token: string | null = null,
): Promise<Array<BackendPage<Volume>>> {
  const pages: Array<BackendPage<Volume>> = [];
  do {
    const page = await b.listVolumes({ namespace: scope, limit, token }, o);
    pages.push(page);
    token = page.next;
    if (pages.length > 50) throw new Error('the listing does not end');
  } while (token !== null);
  return pages;
}

const listed = (pages: Array<BackendPage<Volume>>): string[] =>
  pages.flatMap((p) => p.items.map((i) => i.item.ref.nativeId));

/**
 * Follows an accepted change to its end through the `trackedChanges` facet as the operation tracker does (the
 * rule goes through JSON between checks, as into the operation store); 'DONE AT ONCE' when nothing
 * was pending, else the final progress state.
 */
async function finish(t: ContractBackend, accepted: Accepted<unknown>): Promise<string> {
  if (accepted.pending === null) return 'DONE AT ONCE';
  const tracking = changeTracking(t.backend);
  if (!tracking) throw new Error('a pending change from a backend that cannot check changes');
  let rule = JSON.parse(JSON.stringify(accepted.pending.rule)) as CompletionRule;
  let last: ChangeCheck | undefined;
  await until(
    async () => {
      const check = await tracking.checkChange(rule, t.caller);
      last = check;
      rule = JSON.parse(JSON.stringify({ ...rule, seen: check.seen })) as CompletionRule;
      return check.progress.state !== 'RUNNING';
    },
    () => `the pending change ${accepted.pending!.rule.name} to end; last check ${JSON.stringify(last)}`,
  );
  return last!.progress.state;
}

describe.each(FIXTURES.map((f) => [f.name, f] as const))('VolumeBackend contract: %s', (_name, fixture) => {
  let t: ContractBackend;
  beforeEach(async () => {
    t = await fixture.start();
  });
  afterEach(async () => {
    await t.stop();
    await disposeAll();
  });

  describe('paging', () => {
    it('pages in one stable order, with no duplicates or gaps, and next null on the last page', async () => {
      const seeded = ids(await t.seed(7, 'page'));
      const pages = await allPages(t.backend, t.scope, 3, t.caller);
      const order = listed(pages);
      expect([...order].sort()).toEqual([...seeded].sort());
      expect(new Set(order).size).toBe(order.length);
      expect(pages.map((p) => p.items.length)).toEqual([3, 3, 1]);
      expect(pages.at(-1)!.next).toBeNull();
      for (const p of pages.slice(0, -1)) expect(p.next).not.toBeNull();
      // the same order in one page and again in pages
      expect(listed(await allPages(t.backend, t.scope, 100, t.caller))).toEqual(order);
      expect(listed(await allPages(t.backend, t.scope, 3, t.caller))).toEqual(order);
    });

    it("resumes at an item's position with that item", async () => {
      await t.seed(5, 'pos');
      const first = await t.backend.listVolumes({ namespace: t.scope, limit: 100, token: null }, t.caller);
      const order = first.items.map((i) => i.item.ref.nativeId);
      const third = first.items[2]!;
      expect(listed(await allPages(t.backend, t.scope, 2, t.caller, third.position))).toEqual(order.slice(2));
    });
  });

  describe('reads', () => {
    it('reads a volume in full, and a missing one as null', async () => {
      const [ref] = await t.seed(1, 'one');
      const v = await t.backend.getVolume(ref!, t.caller);
      expect(v).toMatchObject({
        __typename: 'Volume',
        ref: { backend: t.backend.id, namespace: t.scope, nativeId: ref!.nativeId },
        complete: true,
      });
      await expect(t.backend.getVolume(t.missing(), t.caller)).resolves.toBeNull();
    });

    it('reads a batch with one answer per key, in order: a volume, or null when missing', async () => {
      const [a, b] = await t.seed(2, 'batch');
      const got = await t.backend.getVolumes([b!, t.missing(), a!], t.caller, 4);
      expect(got.map(answer)).toEqual([b!.nativeId, null, a!.nativeId]);
      // enough keys for a backend's list strategy (OpenStack from 8)
      const many = await t.seed(9, 'many');
      const refs = [...many.slice(0, 4), t.missing(), ...many.slice(4)];
      expect((await t.backend.getVolumes(refs, t.caller, 4)).map(answer)).toEqual(
        refs.map((r) => (r === refs[4] ? null : r.nativeId)),
      );
    });

    it.each([2, 10])(
      'answers a batch of %i keys with one Error per key when the credential fails, not a rejection',
      async (n) => {
        const refs = [...(await t.seed(n - 1, 'err')), t.missing()];
        const got = await t.backend.getVolumes(refs, t.unknown, 4);
        expect(got).toHaveLength(n);
        for (const r of got)
          expect({ code: (r as GatewayError).code, isError: r instanceof GatewayError }).toEqual({
            code: t.refuses.unknown,
            isError: true,
          });
      },
    );
  });

  describe('capabilities', () => {
    it('advertises exactly the facets it has, and the core', () => {
      for (const c of CORE_CAPABILITIES)
        expect({ capability: c, advertised: t.backend.capabilities.has(c) }).toEqual({
          capability: c,
          advertised: true,
        });
      for (const row of facetReport(t.backend)) expect(row).toEqual({ ...row, advertised: row.present });
    });

    it('refuses the core calls it does not advertise with UnsupportedByBackendError', async () => {
      const [ref] = await t.seed(1, 'unsupported');
      const refused = CORE_CALLS.filter((c) => !t.backend.capabilities.has(c.capability));
      for (const c of refused) {
        const err = await rejection(c.call(t.backend, ref!, t.caller));
        expect({ capability: c.capability, error: err }).toEqual({
          capability: c.capability,
          error: expect.any(UnsupportedByBackendError),
        });
      }
    });
  });

  describe('changes', () => {
    it('creates: done at once (pending null) or through its pending change, then readable', async () => {
      const accepted = await t.backend.createVolume(t.createSpec('made-here'), t.caller);
      expect(accepted.result).toMatchObject({ backend: t.backend.id, namespace: t.scope });
      await expect(finish(t, accepted)).resolves.toBe(accepted.pending === null ? 'DONE AT ONCE' : 'SUCCEEDED');
      const v = await t.backend.getVolume(accepted.result, t.caller);
      expect(v).not.toBeNull();
      expect(v!.status).toBe('AVAILABLE');
    });

    it('deletes: done at once (pending null) or through its pending change, then not found', async () => {
      const [ref] = await t.seed(1, 'doomed');
      const accepted = await t.backend.deleteVolume(ref!, {}, t.caller);
      await expect(finish(t, accepted)).resolves.toBe(accepted.pending === null ? 'DONE AT ONCE' : 'SUCCEEDED');
      await expect(t.backend.getVolume(ref!, t.caller)).resolves.toBeNull();
    });

    it('creates pending only when it advertises tracked operations, and then finishes it', async () => {
      const accepted = await t.backend.createVolume(t.createSpec('said-so'), t.caller);
      if (!answersPending(t.backend)) expect(accepted.pending).toBeNull();
      await expect(finish(t, accepted)).resolves.toBe(accepted.pending === null ? 'DONE AT ONCE' : 'SUCCEEDED');
    });
  });

  describe('watching', () => {
    it("reports a delta for a volume added through the simulator's control API", async () => {
      const live = watching(t.backend);
      expect(live).toBeDefined();
      if (!live) return;
      const deltas: VolumeDelta[] = [];
      const w = live.createWatcher({ onDeltas: (d) => deltas.push(...d) });
      if ('unavailable' in w) throw new Error(`no watcher: ${w.unavailable}`);
      try {
        w.start();
        w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
        await until(() => w.current, 'the watcher to be current');
        const ref = await t.control.addVolume('watched-here');
        await until(() => deltas.some((d) => d.after?.ref.nativeId === ref.nativeId), 'a delta of the added volume');
        const delta = deltas.find((d) => d.after?.ref.nativeId === ref.nativeId)!;
        expect(delta.before).toBeNull();
        expect(delta.after).toMatchObject({ ref, name: 'watched-here' });
      } finally {
        await w.stop();
      }
    });
  });

  describe('access', () => {
    it('refuses a caller that may not read the scope: ForbiddenError, or the volumes hidden', async () => {
      const [ref] = await t.seed(1, 'private');
      const list = t.backend.listVolumes({ namespace: t.scope, limit: 10, token: null }, t.denied);
      const read = t.backend.getVolume(ref!, t.denied);
      const batch = await t.backend.getVolumes([ref!], t.denied, 4);
      if (t.refuses.denied === 'FORBIDDEN') {
        for (const err of [await rejection(list), await rejection(read), batch[0]]) {
          expect(err).toBeInstanceOf(ForbiddenError);
          expect((err as ForbiddenError).code).toBe('FORBIDDEN');
        }
      } else {
        expect((await list).items).toEqual([]);
        await expect(read).resolves.toBeNull();
        expect(batch).toEqual([null]);
      }
      // the same calls with the caller's own credential do see it
      await expect(t.backend.getVolume(ref!, t.caller)).resolves.not.toBeNull();
    });

    it('refuses a credential the backend does not know with its typed error', async () => {
      const err = await rejection(t.backend.listVolumes({ namespace: t.scope, limit: 10, token: null }, t.unknown));
      expect(err).toBeInstanceOf(t.refuses.unknown === 'UNAUTHENTICATED' ? UnauthenticatedError : ForbiddenError);
      expect((err as GatewayError).code).toBe(t.refuses.unknown);
    });
  });
});
