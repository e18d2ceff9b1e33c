/**
 * The HTTP control API under `/_sim/` (README.md "Control API"): the simulator's seeding and
 * fault-injection methods over JSON, answered on every port (Keystone's, Cinder's and Nova's), so
 * a simulator in another process can be driven. Never logged, delayed or made unavailable.
 * Errors: `{"error": "…"}` with 404 (unknown id or route) or 400 (anything else).
 */
import type { ControlResult } from './http/front';
import type { OutageSpec } from './http/outage';
import type { RequestLogEntry } from './http/request-log';
import type { Service } from './http/types';
import type { AppCredSpec, ProjectSpec, UserSpec } from './keystone/identity';
import type { Delays } from './options';
import type {
  AttachNowOptions,
  SeedMessageSpec,
  SeedServerSpec,
  SeedSnapshotSpec,
  SeedVolumeSpec,
  VolumeTypeSpec,
} from './seeding';
import { NotFoundError } from './state';
import { controlFailure, controlRoute, parseControlBody, unknownControlRoute } from '../common/control-request';

/** What the control API drives (implemented by OpenStackSimulator). */
export interface ControlTarget {
  requests(): RequestLogEntry[];
  clearRequests(): void;
  addProject(p: ProjectSpec): string;
  addUser(u: UserSpec): string;
  addApplicationCredential(a: AppCredSpec): string;
  issueToken(t: { user: string; project?: string; ttlMs?: number }): string;
  expireToken(token: string): void;
  addVolumeType(t: VolumeTypeSpec): string;
  seedVolume(v: SeedVolumeSpec): string;
  seedServer(s: SeedServerSpec): string;
  attachNow(serverId: string, volumeId: string, o?: AttachNowOptions): string;
  seedSnapshot(s: SeedSnapshotSpec): string;
  seedUserMessage(m: SeedMessageSpec): string;
  volume(id: string): unknown;
  server(id: string): unknown;
  setDelays(d: Partial<Delays>): Delays;
  failNextAttach(volumeId?: string, o?: { rollback?: boolean }): void;
  failNextExtend(volumeId?: string): void;
  stickNextDetach(volumeId?: string): void;
  failNextDetach(volumeId?: string): void;
  failNextCreate(name?: string): void;
  stuckDetach(serverId: string, volumeId: string): void;
  danglingBdm(serverId: string, volumeId: string): void;
  deleteServerKeepingAttachments(serverId: string): void;
  shelveOffload(serverId: string): void;
  unavailable(o: OutageSpec): void;
  available(service?: Service): void;
  setLatency(ms: number, service?: Service): void;
  seedDemo(): unknown;
}

type Json = Record<string, unknown>;

class BadInput extends Error {}

function str(o: Json, key: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw new BadInput(`${key} must be a string`);
  return v;
}

function optStr(o: Json, key: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new BadInput(`${key} must be a string`);
  return v;
}

function service(v: unknown): Service {
  if (v !== 'keystone' && v !== 'cinder' && v !== 'nova')
    throw new BadInput('service must be keystone, cinder or nova');
  return v;
}

export function handleControl(target: ControlTarget, method: string, path: string, rawBody: string): ControlResult {
  const parsed = parseControlBody(rawBody);
  if ('error' in parsed) return parsed.error;
  const body = parsed.body;
  // Only these collections take an id in the second segment; `faults/attach`, `tokens/expire` are literal.
  const {
    route,
    id,
    segments: seg,
  } = controlRoute(method, path, (c) => ['volumes', 'servers', 'unavailable'].includes(c));
  const created = (x: string): ControlResult => ({ status: 201, body: { id: x } });
  try {
    switch (route) {
      case 'GET requests':
        return { status: 200, body: target.requests() };
      case 'DELETE requests':
        target.clearRequests();
        return done();
      case 'POST projects':
        return created(target.addProject(body as unknown as ProjectSpec));
      case 'POST users':
        str(body, 'name');
        str(body, 'password');
        return created(target.addUser(body as unknown as UserSpec));
      case 'POST application-credentials':
        return created(target.addApplicationCredential(body as unknown as AppCredSpec));
      case 'POST tokens': {
        const ttl = body.ttlMs;
        const project = optStr(body, 'project');
        return {
          status: 201,
          body: {
            token: target.issueToken({
              user: str(body, 'user'),
              ...(project !== undefined ? { project } : {}),
              ...(typeof ttl === 'number' ? { ttlMs: ttl } : {}),
            }),
          },
        };
      }
      case 'POST tokens/expire':
        target.expireToken(str(body, 'token'));
        return done();
      case 'POST volume-types':
        return created(target.addVolumeType(body as unknown as VolumeTypeSpec));
      case 'POST volumes':
        str(body, 'project');
        return created(target.seedVolume(body as unknown as SeedVolumeSpec));
      case 'GET volumes/:id':
        return { status: 200, body: target.volume(id) };
      case 'POST servers':
        str(body, 'project');
        str(body, 'name');
        return created(target.seedServer(body as unknown as SeedServerSpec));
      case 'GET servers/:id':
        return { status: 200, body: target.server(id) };
      case 'POST attachments':
        return created(target.attachNow(str(body, 'serverId'), str(body, 'volumeId'), body));
      case 'POST snapshots':
        str(body, 'volumeId');
        return created(target.seedSnapshot(body as unknown as SeedSnapshotSpec));
      case 'POST messages':
        return created(target.seedUserMessage(body as unknown as SeedMessageSpec));
      case 'POST delays':
        return { status: 200, body: target.setDelays(body) };
      case 'GET delays':
        return { status: 200, body: target.setDelays({}) };
      case 'POST faults/attach':
        target.failNextAttach(optStr(body, 'volumeId'), body.rollback === false ? { rollback: false } : {});
        return done();
      case 'POST faults/extend':
        target.failNextExtend(optStr(body, 'volumeId'));
        return done();
      case 'POST faults/detach':
        target.stickNextDetach(optStr(body, 'volumeId'));
        return done();
      case 'POST faults/detach-error':
        target.failNextDetach(optStr(body, 'volumeId'));
        return done();
      case 'POST faults/create':
        target.failNextCreate(optStr(body, 'name'));
        return done();
      case 'POST failures/stuck-detaching':
        target.stuckDetach(str(body, 'serverId'), str(body, 'volumeId'));
        return done();
      case 'POST failures/dangling-attachment':
        target.danglingBdm(str(body, 'serverId'), str(body, 'volumeId'));
        return done();
      case 'POST failures/server-deleted-keeping-attachments':
        target.deleteServerKeepingAttachments(str(body, 'serverId'));
        return done();
      case 'POST servers/:id/shelve-offload':
        target.shelveOffload(id);
        return done();
      case 'POST unavailable':
        target.unavailable({ ...(body as unknown as OutageSpec), service: service(body.service) });
        return done();
      case 'DELETE unavailable':
        target.available();
        return done();
      case 'DELETE unavailable/:id':
        target.available(service(id));
        return done();
      case 'POST latency': {
        if (typeof body.ms !== 'number') throw new BadInput('ms must be a number');
        target.setLatency(body.ms, body.service === undefined ? undefined : service(body.service));
        return done();
      }
      case 'POST demo':
        return { status: 200, body: target.seedDemo() };
      default:
        return unknownControlRoute(method, seg);
    }
  } catch (e) {
    return controlFailure(e, (x) => x instanceof NotFoundError);
  }
}

function done(): ControlResult {
  return { status: 200, body: { ok: true } };
}
