/**
 * A faithful OpenStack simulator for block storage: Keystone v3, Cinder v3 and Nova's
 * `os-volume_attachments` and `os-instance-actions`, as three real HTTP servers on their own
 * ports sharing one cloud state, answering like the recorded Keystone 22 / Cinder 21.3.1 / Nova 26
 * (test/fixtures/recorded) — quirks included — with asynchronous transitions on timers,
 * injectable failures, a request log and the same controls over HTTP under `/_sim/`.
 *
 * @example
 * const sim = new OpenStackSimulator({ delays: { attachMs: 20 } });
 * const { keystoneUrl, cinderUrl, novaUrl } = await sim.listen();
 * const creds = sim.seedDemo();             // or addProject/addUser/seedVolume/…
 * const token = sim.issueToken({ user: 'demo', project: 'demo' });
 * // GET `${cinderUrl}/v3/${creds.projects.demo}/volumes/detail` with X-Auth-Token: token
 * await sim.close();
 */
import type { QuotaLimits } from './cinder/quota';
import { CinderService } from './cinder/router';
import { handleControl, type ControlTarget } from './control';
import { seedDemo, type DemoCredentials } from './demo';
import { HttpFront } from './http/front';
import type { OutageSpec } from './http/outage';
import type { RequestLogEntry } from './http/request-log';
import { TokenValidator } from './http/token-auth';
import type { Service } from './http/types';
import {
  addApplicationCredential,
  addProject,
  addUser,
  issueToken,
  type AppCredSpec,
  type ProjectSpec,
  type UserSpec,
} from './keystone/identity';
import { KeystoneService } from './keystone/router';
import type { Server, Volume } from './model';
import { NovaService } from './nova/router';
import { danglingBdm, deleteServerKeepingAttachments, shelveOffload, stuckDetach } from './nova/failure-modes';
import { resolveOptions, type Delays, type OpenStackSimulatorOptions } from './options';
import {
  addVolumeType,
  attachNow,
  seedServer,
  seedSnapshot,
  seedUserMessage,
  seedVolume,
  type AttachNowOptions,
  type SeedMessageSpec,
  type SeedServerSpec,
  type SeedSnapshotSpec,
  type SeedVolumeSpec,
  type VolumeTypeSpec,
} from './seeding';
import { NotFoundError, SimState } from './state';

export type { Delays, OpenStackSimulatorOptions } from './options';
export { DEFAULT_DELAYS } from './options';
export type { RequestLogEntry } from './http/request-log';
export type { OutageSpec, OutageStyle } from './http/outage';
export type { Service } from './http/types';
export type { AppCredSpec, ProjectSpec, UserSpec } from './keystone/identity';
export type {
  AttachNowOptions,
  SeedMessageSpec,
  SeedServerSpec,
  SeedSnapshotSpec,
  SeedVolumeSpec,
  VolumeTypeSpec,
} from './seeding';
export type { DemoCredentials } from './demo';
export type { Attachment, Bdm, Role, Server, Snapshot, Volume } from './model';
export { NotFoundError } from './state';

/** The URLs `listen()` resolves with. */
export interface OpenStackUrls {
  /** Keystone auth URL, ending in `/v3` (what OS_AUTH_URL holds). */
  keystoneUrl: string;
  /** Cinder base (`http://host:port`); per-project endpoints are `${cinderUrl}/v3/<project_id>`. */
  cinderUrl: string;
  /** Nova base; the catalog's compute endpoint is `${novaUrl}/v2.1`. */
  novaUrl: string;
}

export class OpenStackSimulator implements ControlTarget {
  private readonly state: SimState;
  private readonly front: HttpFront;
  private listening: OpenStackUrls | null = null;

  constructor(options: OpenStackSimulatorOptions = {}) {
    this.state = new SimState(resolveOptions(options), options.delays);
    for (const t of this.state.opts.volumeTypes) addVolumeType(this.state, t);
    const tokens = new TokenValidator(this.state);
    const keystone = new KeystoneService(this.state);
    const cinder = new CinderService(this.state, tokens);
    const nova = new NovaService(this.state, tokens);
    this.front = new HttpFront(
      { keystone: (r) => keystone.handle(r), cinder: (r) => cinder.handle(r), nova: (r) => nova.handle(r) },
      (method, path, body) => handleControl(this, method, path, body),
    );
  }

  /**
   * Starts Keystone, Cinder and Nova, each on its own port (free ports unless given).
   * @param host @default '127.0.0.1'
   */
  async listen(host = '127.0.0.1', ports: Partial<Record<Service, number>> = {}): Promise<OpenStackUrls> {
    const urls = await this.front.listen(host, ports);
    this.state.urls = urls;
    this.listening = { keystoneUrl: `${urls.keystone}/v3`, cinderUrl: urls.cinder, novaUrl: urls.nova };
    return this.listening;
  }

  /** The URLs once listening (throws before). */
  get urls(): OpenStackUrls {
    if (!this.listening) throw new Error('OpenStackSimulator is not listening');
    return this.listening;
  }

  /** Stops the servers and cancels every pending transition. */
  async close(): Promise<void> {
    this.state.close();
    await this.front.close();
  }

  /** Every request answered (control API excluded), in order. */
  requests(): RequestLogEntry[] {
    return this.front.log.list();
  }

  clearRequests(): void {
    this.front.log.clear();
  }

  // ── Keystone ────────────────────────────────────────────────────────────────────────────

  /** Adds a project in the Default domain; returns its id. */
  addProject(p: ProjectSpec): string {
    return addProject(this.state, p);
  }

  /** Adds a user with role assignments `{ <project name|id>: roles[] }`; returns its id. */
  addUser(u: UserSpec): string {
    return addUser(this.state, u);
  }

  /** Adds an application credential (authenticates by id+secret or name+user+secret); returns its id. */
  addApplicationCredential(a: AppCredSpec): string {
    return addApplicationCredential(this.state, a);
  }

  /** A valid password-method token for the user, scoped to `project` (unscoped without); `id` fixes its value. */
  issueToken(t: { user: string; project?: string; ttlMs?: number; id?: string }): string {
    return issueToken(this.state, t);
  }

  /** Makes a token expired now (Cinder/Nova then answer 401, Keystone validation 404). */
  expireToken(token: string): void {
    const t = this.state.tokens.get(token);
    if (!t) throw new NotFoundError('token not found');
    t.expiresAt = Date.now() * 1000;
  }

  /**
   * Revokes every token of a user, as Keystone does when the user's password changes or the
   * user is disabled; returns how many. (Cinder/Nova still trust a revoked token they validated
   * within `tokenCacheMs`, like keystonemiddleware.)
   */
  revokeUserTokens(user: string): number {
    const u = this.state.requireUser(user);
    let n = 0;
    for (const t of this.state.tokens.values()) {
      if (t.userId === u.id && !t.revoked) {
        t.revoked = true;
        n++;
      }
    }
    return n;
  }

  // ── Seeding ─────────────────────────────────────────────────────────────────────────────

  /** Adds a volume type, e.g. `{ name: 'multiattach', extraSpecs: { multiattach: '<is> True' } }`. */
  addVolumeType(t: VolumeTypeSpec): string {
    return addVolumeType(this.state, t);
  }

  /** Stores a volume as created (default `available`); returns its id. */
  seedVolume(v: SeedVolumeSpec): string {
    return seedVolume(this.state, v);
  }

  /** Stores a server (default vm_state `active`); returns its id. */
  seedServer(s: SeedServerSpec): string {
    return seedServer(this.state, s);
  }

  /** Attaches instantly, as a completed Nova attach leaves it; returns the Cinder attachment id. */
  attachNow(serverId: string, volumeId: string, o: AttachNowOptions = {}): string {
    return attachNow(this.state, serverId, volumeId, o);
  }

  /** Stores a snapshot of a volume (default `available`); returns its id. */
  seedSnapshot(s: SeedSnapshotSpec): string {
    return seedSnapshot(this.state, s);
  }

  /**
   * Enforces Cinder quotas for a project (name or id): creates, snapshots and extends past them
   * answer 413 overLimit as Cinder does. Unset limits (or -1) stay unlimited; `null` clears all.
   */
  setQuota(project: string, limits: QuotaLimits | null): void {
    const id = this.state.requireProject(project).id;
    if (limits === null) this.state.quotas.delete(id);
    else this.state.quotas.set(id, { ...this.state.quotas.get(id), ...limits });
  }

  /** Stores a Cinder user message; returns its id. */
  seedUserMessage(m: SeedMessageSpec): string {
    return seedUserMessage(this.state, m);
  }

  /** The raw stored volume (a copy; undefined once deleted). */
  volume(id: string): Volume | undefined {
    const v = this.state.volumes.get(id);
    return v === undefined ? undefined : structuredClone(v);
  }

  /** The raw stored server with its BDMs (a copy; undefined once deleted). */
  server(id: string): Server | undefined {
    const s = this.state.servers.get(id);
    return s === undefined ? undefined : structuredClone(s);
  }

  /** Seeds the demo cloud (demo.ts) and returns its credentials and ids. */
  seedDemo(): DemoCredentials {
    return seedDemo(this, this.state.opts.region);
  }

  // ── Timing and failures ─────────────────────────────────────────────────────────────────

  /** Changes transition delays from now on; returns the full set. */
  setDelays(d: Partial<Delays>): Delays {
    for (const [k, v] of Object.entries(d))
      if (k in this.state.delays && typeof v === 'number') this.state.delays[k as keyof Delays] = v;
    return { ...this.state.delays };
  }

  /**
   * The next attach (Nova's, Cinder attachment update, or legacy os-attach) of this volume (or of
   * any volume) fails at the connect step: attachment `error_attaching` and a Cinder user message
   * `update attachment:An unknown error occurred.`; with Nova, the rollback then deletes the
   * attachment (volume `available` again) unless `rollback: false`.
   */
  failNextAttach(volumeId?: string, o: { rollback?: boolean } = {}): void {
    this.state.faults.failNextAttach({ ...(volumeId !== undefined ? { volumeId } : {}), rollback: o.rollback ?? true });
  }

  /** The next extend of this (or any) volume ends in `error_extending` with the EXTEND_VOLUME message. */
  failNextExtend(volumeId?: string): void {
    this.state.faults.failNextExtend(volumeId);
  }

  /** The next Nova detach of this (or any) volume stays `detaching` forever (the BDM stays too). */
  stickNextDetach(volumeId?: string): void {
    this.state.faults.stickNextDetach(volumeId);
  }

  /**
   * The next Nova detach of this (or any) volume fails in nova-compute as nova-26/06 recorded:
   * Cinder's attachment is deleted (volume `available`), but the BDM stays, so Nova keeps listing
   * the attachment; the `detach_volume` instance action's `compute_detach_volume` event ends
   * `Error` (message `Error`; admins see the recorded traceback, and `details: "AttributeError"`
   * at 2.84). A later detach answers 400 (Cinder: not in-use), a re-attach 400 (already attached).
   */
  failNextDetach(volumeId?: string): void {
    this.state.faults.failNextDetach(volumeId);
  }

  /**
   * Failure modes made at once (nova/failure-modes.ts, README "Failure modes"): a Nova detach
   * stuck in `detaching`; a Nova detach that fails after Cinder let go (a dangling BDM, as
   * nova-26/06 recorded; its end state comes after `detachMs`); a server deleted while Cinder keeps
   * its attachments; a shelve-offload (volumes `reserved`).
   */
  stuckDetach(serverId: string, volumeId: string): void {
    stuckDetach(this.state, serverId, volumeId);
  }

  danglingBdm(serverId: string, volumeId: string): void {
    danglingBdm(this.state, serverId, volumeId);
  }

  deleteServerKeepingAttachments(serverId: string): void {
    deleteServerKeepingAttachments(this.state, serverId);
  }

  shelveOffload(serverId: string): void {
    shelveOffload(this.state, serverId);
  }

  /** The next volume create (of that name, or any) ends in `error` with a scheduler user message. */
  failNextCreate(name?: string): void {
    this.state.faults.failNextCreate(name);
  }

  /** A service answers 503 for the next `count` requests and/or for `forMs` (until `available()` without either). */
  unavailable(o: OutageSpec): void {
    this.front.setOutage(o);
  }

  /** Ends injected outages (of one service, or all). */
  available(service?: Service): void {
    this.front.clearOutage(service);
  }

  /** Every answer of `service` (of all when omitted) waits `ms` first. */
  setLatency(ms: number, service?: Service): void {
    this.front.setLatency(ms, service);
  }
}
