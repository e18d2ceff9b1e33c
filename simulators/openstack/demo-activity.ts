/**
 * Demo activity on the simulated region: a worker server attaches a scratch volume through Nova's
 * API (`POST /v2.1/servers/{id}/os-volume_attachments`) with the demo user's token, and detaches
 * it (`DELETE …/{volumeId}`) at the next step, as a user or an orchestration tool would. Server
 * and volume are the activity's own (`ci-worker-1`, `ci-scratch` in project `demo`), so the demo
 * data the README shows never changes under it.
 */
import type { DemoTarget } from './demo';

const vol = (n: number): string => `d0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const srv = (n: number): string => `a0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** Ids of the activity's server and volume (fixed, beside the demo's). */
export const ACTIVITY_IDS = {
  serverId: srv(5),
  serverName: 'ci-worker-1',
  volumeId: vol(11),
  volumeName: 'ci-scratch',
} as const;

export interface NovaActivity {
  /** Attaches the volume when the server has no attachment of it, else detaches it. Returns what it asked Nova for. */
  step(signal?: AbortSignal): Promise<'attach' | 'detach'>;
}

/** Failure of one Nova call, with the status and Nova's fault text. */
export class NovaActivityError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'NovaActivityError';
  }
}

/**
 * Seeds the activity's server and volume into the demo project (`seedDemo` first) and returns
 * its step, which speaks HTTP to Nova at `novaUrl` (what `listen()` resolved) with `token`.
 */
export function seedNovaActivity(
  sim: Pick<DemoTarget, 'seedServer' | 'seedVolume'>,
  o: { project: string; novaUrl: string; token: string },
): NovaActivity {
  sim.seedServer({ project: o.project, name: ACTIVITY_IDS.serverName, id: ACTIVITY_IDS.serverId });
  sim.seedVolume({
    project: o.project,
    name: ACTIVITY_IDS.volumeName,
    size: 1,
    description: 'attached and detached every few seconds by the demo activity',
    id: ACTIVITY_IDS.volumeId,
  });
  const base = `${o.novaUrl}/v2.1/servers/${ACTIVITY_IDS.serverId}/os-volume_attachments`;
  const call = async (method: string, url: string, signal?: AbortSignal, body?: unknown): Promise<unknown> => {
    const res = await fetch(url, {
      method,
      headers: {
        'x-auth-token': o.token,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
    const text = await res.text();
    if (!res.ok)
      throw new NovaActivityError(res.status, `Nova ${method} answered ${res.status}: ${text.slice(0, 200)}`);
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  };
  return {
    async step(signal) {
      // Read first, as a user would: someone may have attached or detached it by hand meanwhile.
      const list = (await call('GET', base, signal)) as { volumeAttachments?: Array<{ volumeId?: string }> };
      const attached = (list.volumeAttachments ?? []).some((a) => a.volumeId === ACTIVITY_IDS.volumeId);
      if (attached) {
        await call('DELETE', `${base}/${ACTIVITY_IDS.volumeId}`, signal);
        return 'detach';
      }
      await call('POST', base, signal, { volumeAttachment: { volumeId: ACTIVITY_IDS.volumeId } });
      return 'attach';
    },
  };
}
