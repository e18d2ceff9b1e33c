/**
 * The live hub against a real Nomad simulator: a real registry and backend, the real schema, a
 * InProcessEventLog, and changes from the backend's own watcher (event stream, service token).
 * Subscriptions are driven through `hub.subscribe(args)` as graphql-ws does.
 */
import { ANALYTICS_READ, closedPortUrl, disposeAll, MGMT, seedVolumes, startNomad } from '../support/harness';
import type { NomadSimulator } from '../../simulators/nomad';
import { InProcessEventLog, type ReplayRequest } from '../../subscriptions/events';
import { events, startLive, until, type LiveUnderTest } from './live-helpers';
import type { SerializedResult } from '../../subscriptions/live';

const ALL = `subscription { volumeChanged { type cursor volumeId volume { name status } omittedBackends { backend { id } reason code message } } }`;

let sim: NomadSimulator;
let live: LiveUnderTest | undefined;

beforeEach(async () => {
  sim = await startNomad();
});

afterEach(async () => {
  await live?.stop();
  live = undefined;
  await disposeAll();
});

const names = (s: { results: any[] }, type = 'CREATED'): string[] =>
  events(s)
    .filter((e) => e.type === type)
    .map((e) => e.volume.name);

describe('volumeChanged', () => {
  it('starts with SUBSCRIBED, then shows a namespace-A subscriber namespace A only; the management token sees both', async () => {
    live = await startLive([{ id: 'east', url: sim.url, token: MGMT }]);
    const a = await live.subscribe(ALL, {}, { east: ANALYTICS_READ });
    const m = await live.subscribe(ALL, {}, { east: MGMT });
    seedVolumes(sim, 3, 'default', 'dflt');
    seedVolumes(sim, 2, 'analytics', 'anl');
    await until(() => names(m).length === 5 && names(a).length === 2, 'both subscribers to see their volumes');
    expect(events(a)[0]).toMatchObject({ type: 'SUBSCRIBED', volumeId: null, volume: null, omittedBackends: [] });
    expect(names(a).sort()).toEqual(['anl 0', 'anl 1']);
    expect(names(m).sort()).toEqual(['anl 0', 'anl 1', 'dflt 0', 'dflt 1', 'dflt 2']);
    // More changes in B later: A still sees none of them.
    seedVolumes(sim, 1, 'default', 'late');
    await until(() => names(m).includes('late 0'), 'the late volume');
    seedVolumes(sim, 1, 'analytics', 'fence');
    await until(() => names(a).includes('fence 0'), 'a later analytics volume');
    expect(
      events(a).every(
        (e) => e.type === 'SUBSCRIBED' || e.volume.name.startsWith('anl') || e.volume.name.startsWith('fence'),
      ),
    ).toBe(true);
  });

  it('stops a subscriber whose access is revoked within the access TTL', async () => {
    const ttl = 300;
    live = await startLive([{ id: 'east', url: sim.url, token: MGMT }], { hub: { accessTtlMs: ttl } });
    sim.addToken({ secret: 'soon-revoked', namespaces: { analytics: 'read' } });
    const s = await live.subscribe(ALL, {}, { east: 'soon-revoked' });
    seedVolumes(sim, 1, 'analytics', 'before');
    await until(() => names(s).includes('before 0'), 'the first volume');
    // The token loses its policy (Nomad answers 403 from now on).
    sim.addToken({ secret: 'soon-revoked', namespaces: {} });
    await new Promise((r) => setTimeout(r, ttl + 100));
    const m = await live.subscribe(ALL, {}, { east: MGMT });
    seedVolumes(sim, 1, 'analytics', 'after');
    await until(() => names(m).includes('after 0'), 'the management subscriber to see the later volume');
    // Delivery is ordered per subscriber and the check for "after" has settled once m saw it; give it a moment more.
    await new Promise((r) => setTimeout(r, 200));
    expect(names(s)).toEqual(['before 0']);
  });

  it('replays after `since` with no gap and no duplicate between replay and live', async () => {
    live = await startLive([{ id: 'east', url: sim.url, token: MGMT }]);
    const full = await live.subscribe(ALL, {}, { east: MGMT });
    seedVolumes(sim, 3, 'default', 'one');
    await until(() => names(full).length === 3, 'three volumes');
    const resumeAfter = events(full)[1]!.cursor; // after the first CREATED
    // Changes keep coming while the resumed subscription replays.
    const burst = (async () => {
      for (let i = 0; i < 5; i++) {
        seedVolumes(sim, 1, 'default', `burst${i}`);
        await new Promise((r) => setTimeout(r, 15));
      }
    })();
    const resumed = await live.subscribe(ALL, {}, { east: MGMT });
    const withSince = await live.subscribe(
      `subscription($since: String) { volumeChanged(since: $since) { type cursor volume { name } } }`,
      { since: resumeAfter },
      { east: MGMT },
    );
    await burst;
    await until(() => names(full).length === 8, 'every burst volume');
    await until(() => events(withSince).length === 8, 'the resumed subscription to catch up');
    const cursors = (s: any) =>
      events(s)
        .filter((e) => e.type !== 'SUBSCRIBED')
        .map((e) => e.cursor);
    expect(events(withSince)[0]).toMatchObject({ type: 'SUBSCRIBED', cursor: resumeAfter });
    expect(cursors(withSince)).toEqual(cursors(full).slice(1));
    expect(new Set(cursors(withSince)).size).toBe(cursors(withSince).length);
    expect(resumed.results.length).toBeGreaterThan(0);
  });

  it('delivers events appended while the replay is being read exactly once', async () => {
    /** A real in-process log whose replay takes a while (as a shared log's round trip does), so appends land during it. */
    class SlowReplayLog extends InProcessEventLog {
      gate: Promise<void> | null = null;
      override async replay(r: ReplayRequest) {
        if (this.gate) await this.gate;
        const answer = await super.replay(r);
        if (this.gate) await this.gate;
        return answer;
      }
    }
    const log = new SlowReplayLog();
    live = await startLive([{ id: 'east', url: sim.url, token: MGMT }], { logInstance: log });
    const full = await live.subscribe(ALL, {}, { east: MGMT });
    seedVolumes(sim, 2, 'default', 'early');
    await until(() => names(full).length === 2, 'two volumes');
    const since = events(full)[1]!.cursor;
    let open!: () => void;
    log.gate = new Promise((r) => (open = r));
    const pending = live.subscribe(
      `subscription($since: String) { volumeChanged(since: $since) { type cursor } }`,
      { since },
      { east: MGMT },
    );
    seedVolumes(sim, 3, 'default', 'during');
    await until(() => names(full).length === 5, 'the volumes created during the replay');
    open();
    const resumed = await pending;
    await until(() => events(resumed).length === 5, 'the resumed subscription to catch up');
    await new Promise((r) => setTimeout(r, 100));
    const cursors = (s: any) =>
      events(s)
        .filter((e) => e.type !== 'SUBSCRIBED')
        .map((e) => e.cursor);
    expect(cursors(resumed)).toEqual(cursors(full).slice(1));
  });

  it('answers CURSOR_EXPIRED for a cursor past retention or from another epoch', async () => {
    live = await startLive([{ id: 'east', url: sim.url, token: MGMT }], { log: { maxEvents: 2 } });
    const full = await live.subscribe(ALL, {}, { east: MGMT });
    seedVolumes(sim, 4, 'default');
    await until(() => names(full).length === 4, 'four volumes');
    const old = events(full)[1]!.cursor;
    const expired = await live.subscribe(
      `subscription($s: String) { volumeChanged(since: $s) { type } }`,
      { s: old },
      { east: MGMT },
    );
    expect(expired.refused.errors[0].extensions.code).toBe('CURSOR_EXPIRED');
    const other = Buffer.from(JSON.stringify(['otherepoch', 1])).toString('base64url');
    const foreign = await live.subscribe(
      `subscription($s: String) { volumeChanged(since: $s) { type } }`,
      { s: other },
      { east: MGMT },
    );
    expect(foreign.refused.errors[0].extensions.code).toBe('CURSOR_EXPIRED');
    const junk = await live.subscribe(
      `subscription { volumeChanged(since: "not a cursor!") { type } }`,
      {},
      { east: MGMT },
    );
    expect(junk.refused.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(live.hub.counts()).toEqual({
      volumeChanged: 1,
      attachmentChanged: 0,
      operationUpdated: 0,
      volumeProblemChanged: 0,
    });
  });

  it('executes once per group and hands every member the same serialized result', async () => {
    live = await startLive([{ id: 'east', url: sim.url, token: MGMT }]);
    const doc = `subscription($t: [VolumeChangeType!]) { volumeChanged(filter: { types: $t }) { type volume { name } } }`;
    const same = await Promise.all([1, 2, 3, 4, 5].map(() => live!.subscribe(doc, { t: ['CREATED'] }, { east: MGMT })));
    const otherVars = await live.subscribe(doc, { t: ['CREATED', 'DELETED'] }, { east: MGMT });
    const restricted = await live.subscribe(doc, { t: ['CREATED'] }, { east: ANALYTICS_READ });
    const before = live.executions.volumeChanged ?? 0;
    expect(before).toBe(7); // one SUBSCRIBED each
    seedVolumes(sim, 1, 'default', 'grp');
    await until(() => [...same, otherVars].every((s) => s.results.length === 2), 'the event at every subscriber');
    await new Promise((r) => setTimeout(r, 100));
    // Two groups saw it (same document and variables; other variables); the analytics subscriber may not.
    expect(live.executions.volumeChanged! - before).toBe(2);
    const shared = same.map((s) => s.raw[1]);
    expect(shared.every((r) => r === shared[0])).toBe(true);
    expect(otherVars.raw[1]).not.toBe(shared[0]);
    expect(restricted.results).toHaveLength(1);
  });

  it("writes shared results through the subscribers' sinks while they wait, each subscription in its own order", async () => {
    live = await startLive([{ id: 'east', url: sim.url, token: MGMT }]);
    const doc = `subscription { volumeChanged(filter: { types: [CREATED] }) { type volume { name } } }`;
    const sunk: SerializedResult[][] = Array.from({ length: 30 }, () => []);
    const subs = await Promise.all(
      sunk.map((mine) => live!.subscribe(doc, {}, { east: MGMT }, { sendShared: (r) => void mine.push(r) })),
    );
    await until(() => subs.every((s) => events(s).length === 1), 'SUBSCRIBED at every subscriber');
    seedVolumes(sim, 2, 'default', 'pass');
    await until(() => subs.every((s) => events(s).length === 3), 'both events at every subscriber');
    for (const s of subs)
      expect(events(s).map((e) => e.volume?.name ?? e.type)).toEqual(['SUBSCRIBED', 'pass 0', 'pass 1']);
    // The events went through the sinks (SUBSCRIBED may have been ready before the reader waited), one serialized result per event for all.
    const named = (mine: SerializedResult[]): string[] =>
      mine.map((x) => JSON.parse(x.json).data.volumeChanged.volume?.name).filter(Boolean);
    expect(sunk.every((mine) => named(mine).join() === 'pass 0,pass 1')).toBe(true);
    expect(sunk.every((mine) => mine.at(-1) === sunk[0]!.at(-1) && mine.at(-2) === sunk[0]!.at(-2))).toBe(true);
  });

  it('counts the results an event hands out once per event, not once per subscriber', async () => {
    const counted: Array<[string, number | undefined]> = [];
    live = await startLive([{ id: 'east', url: sim.url, token: MGMT }], {
      hub: { metrics: { eventOut: (field, n) => void counted.push([field, n]) } },
    });
    const doc = `subscription { volumeChanged(filter: { types: [CREATED] }) { type volume { name } } }`;
    const subs = await Promise.all(Array.from({ length: 12 }, () => live!.subscribe(doc, {}, { east: MGMT })));
    await until(() => subs.every((s) => events(s).length === 1), 'SUBSCRIBED at every subscriber');
    seedVolumes(sim, 1, 'default', 'count');
    await until(() => subs.every((s) => events(s).length === 2), 'the event at every subscriber');
    expect(counted).toEqual([['volumeChanged', 12]]);
  });

  it('reads a request once for all its subscribers; those who stay keep receiving when others leave, and the last frees it', async () => {
    live = await startLive([{ id: 'east', url: sim.url, token: MGMT }]);
    const doc = `subscription($t: [VolumeChangeType!]) { volumeChanged(filter: { types: $t }) { type volume { name } } }`;
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => live!.subscribe(doc, { t: ['CREATED'] }, { east: MGMT })));
    const other = await live.subscribe(doc, { t: ['DELETED'] }, { east: MGMT });
    expect(live.hub.groups()).toBe(2);
    await Promise.all([a!.return(), b!.return()]);
    expect(live.hub.groups()).toBe(2);
    seedVolumes(sim, 1, 'default', 'stay');
    await until(() => names(c!).includes('stay 0'), 'the event at the subscriber that stayed');
    expect(names(a!)).toEqual([]);
    await c!.return();
    expect(live.hub.groups()).toBe(1);
    // A later subscriber of the same request reads it afresh and is served.
    const d = await live.subscribe(doc, { t: ['CREATED'] }, { east: MGMT });
    expect(live.hub.groups()).toBe(2);
    seedVolumes(sim, 1, 'default', 'later');
    await until(() => names(d).includes('later 0'), 'the event at the later subscriber');
    await Promise.all([d.return(), other.return()]);
    expect(live.hub.groups()).toBe(0);
  });

  it('names in SUBSCRIBED the backends it cannot cover: NO_CREDENTIAL, and FAILED/UNSUPPORTED_BY_BACKEND without a watcher', async () => {
    const west = await startNomad();
    live = await startLive([
      { id: 'east', url: sim.url, token: MGMT },
      { id: 'west', url: west.url },
      {
        id: 'os',
        kind: 'openstack',
        url: await closedPortUrl(),
        region: 'RegionOne',
        interface: 'public',
        operationTimeoutMs: 5_000,
        timeoutMs: 2_000,
        maxConnections: 4,
        readRetries: 0,
      },
    ]);
    const s = await live.subscribe(ALL, {}, { east: MGMT, west: MGMT });
    await until(() => s.results.length === 1, 'SUBSCRIBED');
    const omitted = events(s)[0].omittedBackends;
    expect(omitted).toEqual([
      {
        backend: { id: 'west' },
        reason: 'FAILED',
        code: 'UNSUPPORTED_BY_BACKEND',
        message: expect.stringContaining('no service token'),
      },
      {
        backend: { id: 'os' },
        reason: 'NO_CREDENTIAL',
        code: null,
        message: expect.stringContaining('connection_init'),
      },
    ]);
    const onlyEast = await live.subscribe(
      `subscription { volumeChanged(filter: { backends: ["east"] }) { omittedBackends { reason } } }`,
      {},
      { east: MGMT },
    );
    await until(() => onlyEast.results.length === 1, 'SUBSCRIBED');
    expect(onlyEast.results[0].data.volumeChanged.omittedBackends).toEqual([]);
  });

  it('frees everything on return(): counts drop back to 0', async () => {
    live = await startLive([{ id: 'east', url: sim.url, token: MGMT }]);
    const subs = await Promise.all([
      live.subscribe(ALL, {}, { east: MGMT }),
      live.subscribe(`subscription { attachmentChanged(target: { node: "node-1111" }) { type } }`, {}, { east: MGMT }),
      live.subscribe(
        `subscription($v: [ID!]) { volumeChanged(filter: { volumeIds: $v }) { type } }`,
        { v: [] },
        { east: MGMT },
      ),
    ]);
    expect(live.hub.counts()).toEqual({
      volumeChanged: 2,
      attachmentChanged: 1,
      operationUpdated: 0,
      volumeProblemChanged: 0,
    });
    await Promise.all(subs.map((s) => s.return()));
    expect(live.hub.counts()).toEqual({
      volumeChanged: 0,
      attachmentChanged: 0,
      operationUpdated: 0,
      volumeProblemChanged: 0,
    });
    await until(() => subs.every((s) => s.done), 'every stream to end');
  });

  it('refuses bad arguments with BAD_USER_INPUT before anything runs', async () => {
    live = await startLive([{ id: 'east', url: sim.url, token: MGMT }]);
    const two = await live.subscribe(
      `subscription { attachmentChanged(target: { node: "n", consumer: "c" }) { type } }`,
      {},
      {},
    );
    expect(two.refused.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    const none = await live.subscribe(`subscription { attachmentChanged(target: {}) { type } }`, {}, {});
    expect(none.refused.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    const ids = Array.from({ length: 101 }, (_, i) =>
      Buffer.from(JSON.stringify(['Volume', 'east', 'default', `v${i}`])).toString('base64url'),
    );
    const many = await live.subscribe(
      `subscription($v: [ID!]) { volumeChanged(filter: { volumeIds: $v }) { type } }`,
      { v: ids },
      {},
    );
    expect(many.refused.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    const unknown = await live.subscribe(
      `subscription { volumeChanged(filter: { backends: ["nope"] }) { type } }`,
      {},
      {},
    );
    expect(unknown.refused.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(live.hub.counts()).toEqual({
      volumeChanged: 0,
      attachmentChanged: 0,
      operationUpdated: 0,
      volumeProblemChanged: 0,
    });
  });
});
