/**
 * Helpers for the OpenStack watcher tests: a simulator with a backend whose service credential is
 * an admin's (every project) or a demo member's (its own project), a watcher that records what it
 * reports, and raw Cinder/Nova calls as a project member makes them (not through the gateway).
 */
import type { VolumeDelta, WatcherStatus } from '../../adapters/contract/watch';
import { OpenStackBackend, type OpenStackBackendOptions } from '../../adapters/openstack/backend';
import type { OpenStackWatcher, OpenStackWatcherOptions } from '../../adapters/openstack/watch';
import type { Attachment, Volume } from '../../adapters/contract/model';
import { call, startCloud, type Cloud } from '../simulators/openstack-helpers';
import { OS } from '../support/constants';

export type ServiceUser = 'admin' | 'member';

export interface WatchCloud extends Cloud {
  backend: OpenStackBackend;
  /** Watchers made by {@link watch}: `close()` stops them first, even after a failed assertion. */
  watchers: OpenStackWatcher[];
  close(): Promise<void>;
}

const SERVICE_AUTH: Record<ServiceUser, OpenStackBackendOptions['serviceAuth']> = {
  admin: { method: 'password', username: OS.adminUser, password: OS.adminPassword, projectName: 'admin' },
  member: { method: 'password', username: OS.demoUser, password: OS.demoPassword, projectName: 'demo' },
};

/** A simulator and backend `os` whose service credential is `who`'s. */
export async function startWatchCloud(
  who: ServiceUser | null,
  sim: Parameters<typeof startCloud>[0] = {},
  backend: Partial<OpenStackBackendOptions> = {},
): Promise<WatchCloud> {
  const cloud = await startCloud(sim);
  const b = new OpenStackBackend({
    backend: 'os',
    authUrl: cloud.urls.keystoneUrl,
    ...(who ? { serviceAuth: SERVICE_AUTH[who] } : {}),
    ...backend,
  });
  const watchers: OpenStackWatcher[] = [];
  return {
    ...cloud,
    backend: b,
    watchers,
    close: async () => {
      await Promise.all(watchers.map((w) => w.stop()));
      await b.close();
      await cloud.sim.close();
    },
  };
}

export interface Recorder {
  w: OpenStackWatcher;
  deltas: VolumeDelta[];
  statuses: Array<{ status: WatcherStatus; err?: unknown }>;
}

/** A watcher of `c.backend` that keeps every delta and status it reports. */
export function watch(c: WatchCloud, o: Partial<OpenStackWatcherOptions> = {}): Recorder {
  const deltas: VolumeDelta[] = [];
  const statuses: Recorder['statuses'] = [];
  const w = c.backend.createWatcher({
    onDeltas: (d) => deltas.push(...d),
    onStatus: (status, err) => statuses.push({ status, err }),
    fastMs: 30,
    slowMs: 60_000,
    ...o,
  });
  if ('unavailable' in w) throw new Error(w.unavailable);
  c.watchers.push(w as OpenStackWatcher);
  return { w: w as OpenStackWatcher, deltas, statuses };
}

/** Cinder's and Nova's requests in the simulator's log (Keystone's left out). */
export const apiRequests = (c: Cloud): ReturnType<Cloud['sim']['requests']> =>
  c.sim.requests().filter((e) => e.service !== 'keystone');

/** Volume list calls in the simulator's log. */
export const listCalls = (c: Cloud): ReturnType<Cloud['sim']['requests']> =>
  c.sim.requests().filter((e) => e.service === 'cinder' && e.method === 'GET' && e.path.endsWith('/volumes/detail'));

/** Creates a volume in `project` as its member, through Cinder's API; returns its id. */
export async function createVolume(c: Cloud, name: string, project: 'demo' | 'other' = 'demo'): Promise<string> {
  const res = await call(`${c.cinder[project]}/volumes`, 'POST', {
    token: c.t[project],
    body: { volume: { name, size: 1 } },
  });
  if (res.status !== 202) throw new Error(`create answered ${res.status}: ${res.text}`);
  return res.json.volume.id as string;
}

export async function deleteVolume(c: Cloud, id: string): Promise<void> {
  const res = await call(`${c.cinder.demo}/volumes/${id}`, 'DELETE', { token: c.t.demo });
  if (res.status !== 202) throw new Error(`delete answered ${res.status}: ${res.text}`);
}

/** Nova attach of `volumeId` to `serverId`, as the demo member. */
export async function novaAttach(c: Cloud, serverId: string, volumeId: string): Promise<void> {
  const res = await call(`${c.nova}/servers/${serverId}/os-volume_attachments`, 'POST', {
    token: c.t.demo,
    body: { volumeAttachment: { volumeId } },
  });
  if (res.status !== 200 && res.status !== 202) throw new Error(`attach answered ${res.status}: ${res.text}`);
}

export async function novaDetach(c: Cloud, serverId: string, volumeId: string): Promise<void> {
  const res = await call(`${c.nova}/servers/${serverId}/os-volume_attachments/${volumeId}`, 'DELETE', {
    token: c.t.demo,
  });
  if (res.status !== 202) throw new Error(`detach answered ${res.status}: ${res.text}`);
}

/** The deltas of one volume, in order. */
export const deltasOf = (r: Recorder, id: string): VolumeDelta[] =>
  r.deltas.filter((d) => (d.after ?? d.before)!.ref.nativeId === id);

/** The attachment of `v` to server `serverId`, if any. */
export const attachmentTo = (v: Volume | null | undefined, serverId: string): Attachment | undefined =>
  v?.attachments.find((a) => a.consumer.__typename === 'VolumeServerConsumer' && a.consumer.serverId === serverId);
