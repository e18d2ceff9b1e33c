/**
 * The contract suite's diagnosis cases: over every registered kind whose backend has the
 * `diagnosis` facet, each kind its fixture can make is made out of band (the simulator's control API
 * or the memory backend's data file) and found by one pass run the way the doctor runs it: the facts
 * read once with the service credential, every volume of the watcher's view (or, without one, of
 * a listing with the service credential) checked, and the facts checked against the view. Each
 * finding is of its kind's evidence type and has remedies whose mutations the gateway's schema
 * accepts with their variables.
 */
import {
  getVariableValues,
  Kind,
  OperationTypeNode,
  parse,
  validate,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import type { CallOptions } from '../../adapters/contract/call-options';
import type { DiagnosisContext, Finding, ProblemKind, Remedy } from '../../adapters/contract/diagnosis';
import type { Volume, VolumeRef } from '../../adapters/contract/model';
import { createRegistry } from '../../server/backends';
import { loadConfig } from '../../server/config';
import { BACKEND_MODULES } from '../../server/kinds';
import { buildGatewaySchema } from '../../server/schema';
import { until } from '../support/until';
import { fixtureOf, type ContractBackend } from './backends';

/** Each kind's evidence type (schema/problem.graphql). */
const EVIDENCE: Readonly<Record<ProblemKind, string>> = {
  STUCK_CLAIM: 'VolumeClaimEvidence',
  CLAIM_ON_MISSING_PLUGIN: 'VolumePluginEvidence',
  STUCK_TRANSITION: 'VolumeStatusEvidence',
  ERROR_STATE: 'VolumeStatusEvidence',
  ATTACHMENT_DRIFT: 'VolumeAttachmentDriftEvidence',
};

const WEEK_MS = 7 * 24 * 3_600_000;

/** Whether a kind's backend has the facet, asked of a backend built from its module (nothing is called). */
function hasDiagnosis(kind: string): boolean {
  const module = BACKEND_MODULES.find((m) => m.kind === kind)!;
  const config = loadConfig({ GATEWAY_BACKENDS: `probe=${kind}${module.needsUrl ? '@http://127.0.0.1:9' : ''}` });
  const registry = createRegistry(config.backends);
  const has = registry.forId('probe').diagnosis !== undefined;
  void registry.close();
  return has;
}

const KINDS_WITH_FACET = BACKEND_MODULES.map((m) => m.kind).filter(hasDiagnosis);

const refKey = (r: VolumeRef): string => `${r.backend}\u0000${r.namespace}\u0000${r.nativeId}`;
const same = (a: VolumeRef, b: VolumeRef): boolean => refKey(a) === refKey(b);

/**
 * The view a doctor's pass checks: the watcher's, once current; else (no watcher) every page of a
 * listing with the service credential.
 */
async function view(t: ContractBackend, service: CallOptions): Promise<Volume[]> {
  const watching = t.backend.watching;
  const w = watching?.createWatcher({ onDeltas: () => {} });
  if (w && 'start' in w) {
    w.start();
    // The doctor counts as the watcher's listener: a polling watcher idles without one.
    w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
    try {
      await until(() => w.current, `the ${t.backend.id} watcher to be current`);
      return w.volumes();
    } finally {
      await w.stop();
    }
  }
  const out: Volume[] = [];
  let token: string | null = null;
  do {
    const page = await t.backend.listVolumes({ namespace: '*', limit: 500, token }, service);
    out.push(...page.items.map((i) => i.item));
    token = page.next;
  } while (token !== null);
  return out;
}

/** A doctor's context at `now`: nothing of the gateway's running, every condition first seen at `firstSeen`. */
const context = (now: number, firstSeen: number, running = false): DiagnosisContext => ({
  now,
  operationRunning: () => running,
  firstSeen: () => firstSeen,
});

/** One pass, as the doctor runs it. */
async function pass(t: ContractBackend, ctx: DiagnosisContext): Promise<Finding[]> {
  const d = t.backend.diagnosis!;
  const service = t.diagnosis!.service;
  const facts = d.readFacts ? await d.readFacts(service) : null;
  const volumes = await view(t, service);
  const inView = new Set(volumes.map((v) => refKey(v.ref)));
  const found = volumes.flatMap((v) => d.checkVolume(v, facts, ctx));
  if (d.checkFacts && facts !== null) found.push(...d.checkFacts(facts, (r) => inView.has(refKey(r)), ctx));
  return found;
}

/** What is wrong with a remedy's mutation against the gateway's schema; empty when it would run. */
function mutationErrors(schema: GraphQLSchema, r: Remedy): string[] {
  if (!r.mutation) return [];
  const doc = parse(r.mutation.document);
  const errors = validate(schema, doc).map((e) => e.message);
  const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (ops.length !== 1 || ops[0]!.operation !== OperationTypeNode.MUTATION)
    return [...errors, 'not exactly one mutation'];
  // The variables as a client sends them: JSON, coerced by the operation's variable types.
  const variables = JSON.parse(JSON.stringify(r.mutation.variables)) as Record<string, unknown>;
  const coerced = getVariableValues(schema, ops[0]!.variableDefinitions ?? [], variables);
  return [...errors, ...(coerced.errors ?? []).map((e) => e.message)];
}

describe.each(KINDS_WITH_FACET.map((k) => [k] as const))('diagnosis contract: %s', (kind) => {
  let t: ContractBackend;
  let schema: GraphQLSchema;
  /** The volume made for each kind. */
  const made = new Map<ProblemKind, VolumeRef>();

  beforeAll(async () => {
    schema = buildGatewaySchema();
    t = await fixtureOf(kind).start();
    if (!t.diagnosis)
      throw new Error(`the ${kind} fixture makes no diagnosis conditions, though its backend has the facet`);
    for (const k of t.diagnosis.kinds) made.set(k, await t.diagnosis.make(k));
  }, 120_000);

  afterAll(async () => {
    await t?.stop();
  });

  it('should make every kind the facet declares', () => {
    expect([...t.diagnosis!.kinds].sort()).toEqual([...t.backend.diagnosis!.kinds].sort());
    expect(t.backend.capabilities.has('VOLUME_DIAGNOSIS')).toBe(true);
  });

  it('should find each made kind on its volume with its evidence type and remedies the gateway accepts', async () => {
    const now = Date.now();
    const found = await pass(t, context(now, now - WEEK_MS));
    for (const [k, ref] of made) {
      const mine = found.filter((f) => f.kind === k && same(f.volume, ref));
      expect([k, mine.length > 0]).toEqual([k, true]);
      for (const f of mine) {
        expect([k, f.evidence.__typename]).toEqual([k, EVIDENCE[k]]);
        expect(['WARNING', 'CRITICAL']).toContain(f.severity);
        expect(f.subject.length).toBeGreaterThan(0);
        expect(f.summary.length).toBeGreaterThan(0);
        if (f.startedAt !== null) expect(Number.isNaN(Date.parse(f.startedAt))).toBe(false);
        expect([k, f.remedies.length > 0]).toEqual([k, true]);
        for (const r of f.remedies) {
          expect(r.action).toMatch(/^[A-Z][A-Z0-9_]*$/);
          expect(r.does.length * r.risk.length).toBeGreaterThan(0);
          expect(['VOLUME_WRITER', 'ADMIN', 'OPERATOR', 'NOBODY']).toContain(r.who);
          expect([k, r.action, mutationErrors(schema, r)]).toEqual([k, r.action, []]);
        }
      }
    }
  });

  it('should report on first sight only what the backend dates past its threshold (grace periods hold)', async () => {
    const now = Date.now();
    const found = await pass(t, context(now, now));
    for (const f of found.filter((x) => [...made.values()].some((r) => same(r, x.volume)))) {
      // A start is never in the future (fixtures may set a threshold to 0, so a first sight may report).
      if (f.startedAt !== null) expect(Date.parse(f.startedAt)).toBeLessThanOrEqual(now);
      const e = f.evidence;
      if (e.__typename === 'VolumeStatusEvidence' && e.thresholdMs !== null)
        expect(now - Date.parse(e.since)).toBeGreaterThanOrEqual(e.thresholdMs);
    }
  });

  it('should say a lasting problem the same way in every pass (no age in its summary), so it is not UPDATED each pass', async () => {
    const now = Date.now();
    const first = await pass(t, context(now, now - WEEK_MS));
    const later = await pass(t, context(now + 3_600_000, now - WEEK_MS));
    const said = (fs: Finding[]): string[] =>
      fs
        .filter((x) => [...made.values()].some((r) => same(r, x.volume)))
        .map((f) => `${f.kind} ${f.subject}: ${f.summary}`)
        .sort();
    expect(said(later)).toEqual(said(first));
  });

  it('should find nothing wrong with freshly seeded volumes', async () => {
    const seeded = await t.seed(3, 'healthy');
    const now = Date.now();
    const found = await pass(t, context(now, now - WEEK_MS));
    expect(found.filter((f) => seeded.some((r) => same(r, f.volume)))).toEqual([]);
  });

  it("should not report a transition one of the gateway's own operations drives", async () => {
    const ref = made.get('STUCK_TRANSITION');
    if (!ref) return;
    const now = Date.now();
    const found = await pass(t, context(now, now - WEEK_MS, true));
    expect(found.filter((f) => f.kind === 'STUCK_TRANSITION' && same(f.volume, ref))).toEqual([]);
  });
});
