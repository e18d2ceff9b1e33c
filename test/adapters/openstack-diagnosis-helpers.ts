/**
 * Helpers for the OpenStack doctor tests: a watcher that polls without pause (its view is what
 * the checks run on), a doctor context as the core's doctor keeps it (first-seen times kept while
 * asked, forgotten after a pass that did not ask; the gateway's running operations), one pass of
 * the facet, and the check that a remedy's mutation is a valid document of the gateway's schema
 * with variables its input types accept.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, getVariableValues, parse, validate, type OperationDefinitionNode } from 'graphql';
import type { CallOptions } from '../../adapters/contract/call-options';
import type { DiagnosisContext, Finding, Remedy } from '../../adapters/contract/diagnosis';
import type { VolumeRef } from '../../adapters/contract/model';
import type { NovaFacts } from '../../adapters/openstack/diagnosis';
import { until } from '../support/until';
import { watch, type Recorder, type WatchCloud } from './openstack-watch-helpers';

const key = (ref: VolumeRef): string => `${ref.backend}/${ref.namespace}/${ref.nativeId}`;

/** The doctor's memory between passes, with a clock a test may move forward. */
export class TestDoctor {
  readonly #seen = new Map<string, number>();
  #asked = new Set<string>();
  /** Refs (backend/namespace/id) the gateway's own operations are changing. */
  readonly running = new Set<string>();

  constructor(
    readonly c: WatchCloud,
    readonly r: Recorder,
    readonly service: CallOptions,
  ) {}

  /** A context for a pass at `now`. */
  ctx(now: number): DiagnosisContext {
    return {
      now,
      operationRunning: (ref) => this.running.has(key(ref)),
      firstSeen: (ref, condition) => {
        const k = `${key(ref)}#${condition}`;
        this.#asked.add(k);
        if (!this.#seen.has(k)) this.#seen.set(k, now);
        return this.#seen.get(k)!;
      },
    };
  }

  /** One full pass over the view at `now` (Nova read first unless `facts` is given); its findings. */
  async pass(now = Date.now(), facts?: NovaFacts | null): Promise<{ findings: Finding[]; facts: NovaFacts | null }> {
    const d = this.c.backend.diagnosis;
    const f = facts === undefined ? await d.readFacts!(this.service) : facts;
    this.#asked = new Set();
    const ctx = this.ctx(now);
    const volumes = this.r.w.volumes();
    const findings = volumes.flatMap((v) => d.checkVolume(v, f, ctx));
    if (f) findings.push(...d.checkFacts!(f, (ref) => this.r.w.volume(ref) !== undefined, ctx));
    for (const k of [...this.#seen.keys()]) if (!this.#asked.has(k)) this.#seen.delete(k);
    return { findings, facts: f };
  }

  ref(nativeId: string, project = this.c.p.demo): VolumeRef {
    return { backend: 'os', namespace: project, nativeId };
  }

  /** Marks `ref` as changed by a running operation of the gateway's. */
  operation(ref: VolumeRef): void {
    this.running.add(key(ref));
  }
}

/** A watcher of `c` polling every 20 ms, started and current. */
export async function viewOf(c: WatchCloud): Promise<Recorder> {
  const r = watch(c, { fastMs: 20, slowMs: 20 });
  r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
  r.w.start();
  await until(() => r.w.current, 'the watcher to be current');
  return r;
}

/** Waits for two more polls, so the view shows what the services hold now. */
export async function fresh(r: Recorder): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const at = r.w.status().currentAt;
    await until(() => (r.w.status().currentAt ?? 0) > (at ?? 0), 'a new poll');
  }
}

/** The findings of one volume. */
export const about = (findings: Finding[], nativeId: string): Finding[] =>
  findings.filter((f) => f.volume.nativeId === nativeId);

const schema = buildSchema(readFileSync(join(__dirname, '../../schema/generated/api.graphql'), 'utf8'));

/** The errors of a remedy's mutation against the gateway's schema (document and variables); empty when valid. */
export function mutationErrors(remedy: Remedy): string[] {
  if (!remedy.mutation) return [];
  const doc = parse(remedy.mutation.document);
  const errors = validate(schema, doc).map((e) => e.message);
  const op = doc.definitions[0] as OperationDefinitionNode;
  const values = getVariableValues(schema, op.variableDefinitions ?? [], remedy.mutation.variables);
  return [...errors, ...(values.errors ?? []).map((e) => e.message)];
}
