/**
 * The HTTP control API under `/_sim/` (see README.md): the seeding and fault-injection methods
 * of NomadSimulator over JSON, so a simulator running in another process (demo mode,
 * benchmarks) can be driven. Requests here are not logged, delayed or failed by faults.
 * Errors are JSON `{"error": "..."}` with 400 (bad input, rejected claims) or 404 (unknown id
 * or route).
 */
import type { TokenSpec } from './acl';
import type { AllocationSpec, PluginSpec } from './cluster';
import { NotFoundError } from './state';
import { controlFailure, controlRoute, parseControlBody, unknownControlRoute } from '../common/control-request';

/** What the control API drives (implemented by NomadSimulator). */
export interface ControlTarget {
  requests(): unknown[];
  clearRequests(): void;
  connectionsAccepted(): number;
  addNamespace(name: string): void;
  addToken(t: TokenSpec): void;
  removeToken(secret: string): void;
  closeStreams(): number;
  addNode(n: { id: string; name: string }): void;
  addPlugin(p: PluginSpec): void;
  setPluginHealth(id: string, h: { controllersHealthy?: number; nodesHealthy?: number }): void;
  seedVolume(v: Record<string, unknown>): void;
  addExternalVolume(
    pluginId: string,
    v: {
      ExternalID: string;
      CapacityBytes: number;
      PublishedExternalNodeIDs?: string[];
      Status?: string;
      IsAbnormal?: boolean;
    },
  ): void;
  addSnapshot(
    pluginId: string,
    s: { ID: string; ExternalSourceVolumeID: string; SizeBytes: number; CreateTime?: number; IsReady?: boolean },
  ): void;
  placeAllocation(a: AllocationSpec): string;
  setAllocationStatus(id: string, s: { clientStatus?: string; desiredStatus?: string }): void;
  gcAllocation(id: string): void;
  failAllocation(id: string, o: { holdClaims?: boolean }): void;
  setNodePluginHealth(pluginId: string, nodeId: string, healthy: boolean): void;
  runClaimGC(): number;
  setVolumeWatcherPaused(paused: boolean): void;
  setLatency(ms: number): void;
  failNext(f: { count: number; status: number; body: string; method?: string; pathPrefix?: string }): void;
  seedDemo(variant: 'east' | 'west'): { managementToken: string; readOnlyToken: string };
}

export interface ControlResponse {
  status: number;
  body: unknown;
}

type Json = Record<string, unknown>;

function need<T>(o: Json, key: string, type: 'string' | 'number'): T {
  const v = o[key];
  if (typeof v !== type) throw new BadInput(`${key} must be a ${type}`);
  return v as T;
}

class BadInput extends Error {}

/** Dispatches one control request. `path` is relative to `/_sim`. */
export function handleControl(target: ControlTarget, method: string, path: string, rawBody: string): ControlResponse {
  const parsed = parseControlBody(rawBody);
  if ('error' in parsed) return parsed.error;
  const body = parsed.body;
  const { route, id, segments: seg } = controlRoute(method, path);
  try {
    switch (route) {
      case 'GET requests':
        return { status: 200, body: target.requests() };
      case 'DELETE requests':
        target.clearRequests();
        return ok();
      case 'GET connections':
        return { status: 200, body: { accepted: target.connectionsAccepted() } };
      case 'POST namespaces':
        target.addNamespace(need<string>(body, 'name', 'string'));
        return ok();
      case 'POST tokens':
        need<string>(body, 'secret', 'string');
        target.addToken(body as unknown as TokenSpec);
        return ok();
      case 'DELETE streams':
        return { status: 200, body: { closed: target.closeStreams() } };
      case 'DELETE tokens/:id':
        target.removeToken(id);
        return ok();
      case 'POST nodes':
        target.addNode({ id: need(body, 'id', 'string'), name: need(body, 'name', 'string') });
        return ok();
      case 'POST plugins':
        need<string>(body, 'id', 'string');
        target.addPlugin(body as unknown as PluginSpec);
        return ok();
      case 'POST plugins/:id/health':
        target.setPluginHealth(id, body);
        return ok();
      case 'POST plugins/:id/external-volumes':
        need<string>(body, 'ExternalID', 'string');
        target.addExternalVolume(id, body as unknown as Parameters<ControlTarget['addExternalVolume']>[1]);
        return ok();
      case 'POST plugins/:id/snapshots':
        need<string>(body, 'ID', 'string');
        target.addSnapshot(id, body as unknown as Parameters<ControlTarget['addSnapshot']>[1]);
        return ok();
      case 'POST volumes':
        target.seedVolume(body);
        return ok();
      case 'POST allocations':
        return { status: 200, body: { id: target.placeAllocation(body as unknown as AllocationSpec) } };
      case 'POST allocations/:id/status':
        target.setAllocationStatus(id, body);
        return ok();
      case 'DELETE allocations/:id':
        target.gcAllocation(id);
        return ok();
      case 'POST allocations/:id/fail':
        if (body.holdClaims !== undefined && typeof body.holdClaims !== 'boolean')
          throw new BadInput('holdClaims must be a boolean');
        target.failAllocation(id, { holdClaims: body.holdClaims === true });
        return ok();
      case 'POST plugins/:id/node-health':
        if (typeof body.healthy !== 'boolean') throw new BadInput('healthy must be a boolean');
        target.setNodePluginHealth(id, need<string>(body, 'nodeId', 'string'), body.healthy);
        return ok();
      case 'POST claim-gc':
        return { status: 200, body: { retried: target.runClaimGC() } };
      case 'POST volume-watcher':
        if (typeof body.paused !== 'boolean') throw new BadInput('paused must be a boolean');
        target.setVolumeWatcherPaused(body.paused);
        return ok();
      case 'POST latency':
        target.setLatency(need<number>(body, 'ms', 'number'));
        return ok();
      case 'POST fail-next':
        target.failNext({
          count: need(body, 'count', 'number'),
          status: need(body, 'status', 'number'),
          body: typeof body.body === 'string' ? body.body : '',
          ...(typeof body.method === 'string' ? { method: body.method } : {}),
          ...(typeof body.pathPrefix === 'string' ? { pathPrefix: body.pathPrefix } : {}),
        });
        return ok();
      case 'POST demo': {
        const variant = body.variant === 'west' ? 'west' : 'east';
        return { status: 200, body: target.seedDemo(variant) };
      }
      default:
        return unknownControlRoute(method, seg);
    }
  } catch (e) {
    return controlFailure(e, (x) => x instanceof NotFoundError);
  }
}

function ok(): ControlResponse {
  return { status: 200, body: { ok: true } };
}
