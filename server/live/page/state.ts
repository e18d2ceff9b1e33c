/**
 * The live status page's table as data: rows from the `volumes` list, changed by each
 * `volumeChanged` event. Pure (no DOM), bundled into the page by scripts/build-live.ts and
 * unit-tested in Node.
 */

/** A `VolumeConsumer` as the page selects it (`__typename` tells which). */
export interface LiveConsumer {
  __typename: string;
  allocationId?: string | null;
  jobId?: string | null;
  taskGroup?: string | null;
  nodeName?: string | null;
  serverId?: string | null;
  name?: string | null;
  hostName?: string | null;
  /**
   * The page's own mark (never sent by the gateway): an HTTP read answered this server consumer
   * without a name (Nova did not tell), so there is no name to wait for and the id is shown.
   */
  nameUnavailable?: boolean;
}

/** Shown for a server whose name is still being read: never the bare UUID. */
export const NAME_LOADING = '…';

export interface LiveAttachment {
  id: string;
  state: string;
  consumer: LiveConsumer | null;
}

export interface LiveVolume {
  id: string;
  backend: { id: string };
  namespace: string | null;
  nativeId: string;
  name: string | null;
  status: string;
  /** Null when the read failed (the field failed alone). */
  attachments: LiveAttachment[] | null;
}

export interface LiveOmission {
  backend: { id: string };
  reason: string;
  code: string | null;
  message: string | null;
}

/** A backend as the list query selects it: the caller's namespace there, named when the backend says. */
export interface LiveBackend {
  id: string;
  callerNamespace: { id: string; name: string | null } | null;
}

/** A `VolumeChangeEvent` as the page selects it. */
export interface LiveEvent {
  type: string;
  cursor: string;
  observedAt: string;
  volumeId: string | null;
  volume: LiveVolume | null;
  previousStatus: string | null;
  attachment: LiveAttachment | null;
  changedFields: string[];
  omittedBackends: LiveOmission[];
}

export interface LiveRow {
  volume: LiveVolume;
  /** When the last event changed it (ms since the epoch), for the highlight. */
  changedAt?: number;
  /** The last event's type. */
  lastEvent?: string;
}

/** Event types after which the attachment the event names is gone. */
const GONE = new Set(['DETACHED', 'RELEASED']);

/** Who holds an attachment, the same across the gateway's ATTACHING and the watcher's ATTACHED. */
export function consumerKey(c: LiveConsumer | null): string {
  if (!c) return '';
  if (c.allocationId) return `alloc:${c.allocationId}`;
  if (c.serverId) return `server:${c.serverId}`;
  return `host:${c.hostName ?? ''}`;
}

/** A short human label for a consumer. */
export function consumerLabel(c: LiveConsumer | null): string {
  if (!c) return 'unknown';
  if (c.__typename === 'VolumeAllocationConsumer') {
    const job = [c.jobId, c.taskGroup].filter(Boolean).join('/') || c.allocationId || 'allocation';
    return c.nodeName ? `${job} on ${c.nodeName}` : job;
  }
  if (c.__typename === 'VolumeServerConsumer') {
    if (c.name) return `server ${c.name}`;
    return c.nameUnavailable && c.serverId ? `server ${c.serverId}` : `server ${NAME_LOADING}`;
  }
  return `host ${c.hostName ?? '(hidden)'}`;
}

/** A Nova server consumer whose name the event could not carry (events never read Nova). */
const unnamed = (c: LiveConsumer | null): c is LiveConsumer & { serverId: string } =>
  c?.__typename === 'VolumeServerConsumer' && !c.name && !!c.serverId && !c.nameUnavailable;

/** An HTTP read's volume with its unnamed server consumers marked: the read was the name's only source. */
function settled(v: LiveVolume): LiveVolume {
  if (!lacksNames(v)) return v;
  return {
    ...v,
    attachments: (v.attachments ?? []).map((a) =>
      unnamed(a.consumer) ? { ...a, consumer: { ...a.consumer, nameUnavailable: true } } : a,
    ),
  };
}

/** True when a volume shows a server consumer without its name: the page then re-reads that volume over HTTP. */
export function lacksNames(v: LiveVolume | undefined): boolean {
  return (v?.attachments ?? []).some((a) => unnamed(a.consumer));
}

const same = (a: LiveAttachment, b: LiveAttachment): boolean =>
  a.id === b.id || (consumerKey(a.consumer) !== '' && consumerKey(a.consumer) === consumerKey(b.consumer));

/** The attachments after an attachment-level event. */
export function mergeAttachment(list: LiveAttachment[], type: string, a: LiveAttachment): LiveAttachment[] {
  const rest = list.filter((x) => !same(x, a));
  if (GONE.has(type)) return rest;
  const at = list.findIndex((x) => same(x, a));
  if (at < 0) return [...rest, a];
  const out = [...list];
  out.splice(at, 1, a);
  return out.filter((x, i) => i === at || !same(x, a));
}

/** The volumes on the page, by global id, in a stable order (backend as listed, namespace, native id). */
export class LiveTable {
  private readonly rows = new Map<string, LiveRow>();
  private readonly backendOrder: string[] = [];
  /** Server names seen in lists and re-reads (server id → name), to name consumers that events leave unnamed. */
  private readonly serverNames = new Map<string, string>();
  /** Namespace names by backend, then namespace id (OpenStack project id → project name). */
  private readonly namespaceNames = new Map<string, Map<string, string>>();

  /** Learns the namespace names a list's `storageBackends` gives (the caller's own namespace on each backend). */
  private nameNamespaces(backends: readonly LiveBackend[]): void {
    for (const b of backends) {
      const ns = b.callerNamespace;
      if (!ns?.name) continue;
      const names = this.namespaceNames.get(b.id) ?? new Map<string, string>();
      names.set(ns.id, ns.name);
      this.namespaceNames.set(b.id, names);
    }
  }

  /** What the namespace column shows: the namespace's name when known, else its id. */
  namespaceLabel(v: Pick<LiveVolume, 'backend' | 'namespace'>): string {
    if (v.namespace === null) return '';
    return this.namespaceNames.get(v.backend.id)?.get(v.namespace) ?? v.namespace;
  }

  /**
   * Replaces every row (a fresh list, perhaps under other credentials: names are learnt again),
   * with the namespace names the list's `storageBackends` gives.
   */
  replace(volumes: LiveVolume[], backends: readonly LiveBackend[] = []): void {
    this.rows.clear();
    this.serverNames.clear();
    this.namespaceNames.clear();
    this.nameNamespaces(backends);
    for (const v of volumes) this.put(settled(v), undefined);
  }

  get size(): number {
    return this.rows.size;
  }

  get(id: string): LiveRow | undefined {
    return this.rows.get(id);
  }

  /** Rows in display order. */
  list(): Array<LiveRow> {
    const rank = (b: string): number => this.backendOrder.indexOf(b);
    return [...this.rows.values()].sort(
      (x, y) =>
        rank(x.volume.backend.id) - rank(y.volume.backend.id) ||
        (x.volume.namespace ?? '').localeCompare(y.volume.namespace ?? '') ||
        (x.volume.name ?? x.volume.nativeId).localeCompare(y.volume.name ?? y.volume.nativeId) ||
        x.volume.nativeId.localeCompare(y.volume.nativeId),
    );
  }

  /**
   * Applies one event; returns the id of the row it changed (undefined for SUBSCRIBED or an event
   * without a volume).
   */
  apply(e: LiveEvent, now: number): string | undefined {
    const id = e.volume?.id ?? e.volumeId;
    if (e.type === 'SUBSCRIBED' || !id) return undefined;
    if (e.type === 'DELETED') {
      this.rows.delete(id);
      return id;
    }
    const before = this.rows.get(id);
    const base: LiveVolume | undefined = e.volume
      ? { ...e.volume, attachments: e.volume.attachments ?? before?.volume.attachments ?? null }
      : before?.volume;
    if (!base) return undefined;
    const volume = e.attachment
      ? { ...base, attachments: mergeAttachment(base.attachments ?? [], e.type, e.attachment) }
      : base;
    this.put(volume, { changedAt: now, lastEvent: e.type });
    return id;
  }

  /**
   * Fills the server names a re-read of one volume (`volume(id:)` over HTTP) knows into that row,
   * changing nothing else: events applied since the read was sent stay authoritative for states.
   * Returns whether the row changed.
   */
  fillNames(read: LiveVolume): boolean {
    this.learn(read);
    const row = this.rows.get(read.id);
    if (!row || !lacksNames(row.volume)) return false;
    // Servers the read answered without a name have none to wait for (attachments newer than the read keep waiting).
    const nameless = new Set(
      (read.attachments ?? []).flatMap((a) => (unnamed(a.consumer) ? [a.consumer.serverId] : [])),
    );
    const named = this.named(row.volume, nameless);
    if (named === row.volume) return false;
    this.rows.set(read.id, { ...row, volume: named });
    return true;
  }

  private learn(v: LiveVolume): void {
    for (const a of v.attachments ?? []) {
      const c = a.consumer;
      if (c?.__typename === 'VolumeServerConsumer' && c.serverId && c.name) this.serverNames.set(c.serverId, c.name);
    }
  }

  /**
   * The volume with every unnamed server consumer named from what was learnt, or marked when it is
   * in `nameless` (the same object when nothing changed).
   */
  private named(v: LiveVolume, nameless: ReadonlySet<string> = new Set()): LiveVolume {
    if (!lacksNames(v)) return v;
    let changed = false;
    const attachments = (v.attachments ?? []).map((a) => {
      if (!unnamed(a.consumer)) return a;
      const name = this.serverNames.get(a.consumer.serverId);
      if (name !== undefined) {
        changed = true;
        return { ...a, consumer: { ...a.consumer, name } };
      }
      if (!nameless.has(a.consumer.serverId)) return a;
      changed = true;
      return { ...a, consumer: { ...a.consumer, nameUnavailable: true } };
    });
    return changed ? { ...v, attachments } : v;
  }

  private put(v: LiveVolume, change: Pick<LiveRow, 'changedAt' | 'lastEvent'> | undefined): void {
    if (!this.backendOrder.includes(v.backend.id)) this.backendOrder.push(v.backend.id);
    this.learn(v);
    this.rows.set(v.id, { volume: this.named(v), ...change });
  }
}

/** Coverage line: which backends the page cannot show, and why. */
export function coverage(omitted: LiveOmission[]): string {
  if (omitted.length === 0) return 'all backends';
  return `not covered: ${omitted.map((o) => `${o.backend.id} (${o.reason}${o.code ? ` ${o.code}` : ''})`).join(', ')}`;
}
