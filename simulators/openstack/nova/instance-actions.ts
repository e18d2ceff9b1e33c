/**
 * Nova's instance actions and their events (nova-26/05–06; db `action_start`,
 * `action_event_start`, `action_event_finish`): every server operation the API accepts records
 * an action under the request id of the answer that started it; the service that does the work
 * records events (`compute_attach_volume` …). An event's start and finish move the action's
 * `updated_at` (null until the first event starts), and an `Error` result sets the action's
 * `message` to `Error`. Records outlive the server (read with read_deleted from 2.21).
 */
import { nowMicros } from '../clock';
import { requestId } from '../ids';

/** Who started an action: the caller's request context. */
export interface ActionCaller {
  /** `req-<uuid>`, the `X-Openstack-Request-Id` of the answer. */
  requestId: string;
  userId: string;
  projectId: string;
}

/** One event of an action (`instance_actions_events` row). */
export interface InstanceActionEvent {
  /** `<prefix>_<function>`: `compute_attach_volume`, `api_detach_volume` … */
  event: string;
  /** µs since the epoch. */
  startTime: number;
  finishTime: number | null;
  result: 'Success' | 'Error' | null;
  /** `traceback.format_tb` text of the failure (admin only). */
  traceback: string | null;
  /** The host the event ran on (admin only, 2.62); `hostId` is derived from it. */
  host: string;
  /** `exception_to_dict(...)['message']`: a NovaException's message, else the class name (2.84, admin). */
  details: string | null;
}

/** One action (`instance_actions` row). */
export interface InstanceAction {
  /** `create`, `attach_volume`, `detach_volume`, `swap_volume`, `delete` … */
  action: string;
  instanceUuid: string;
  requestId: string;
  userId: string;
  projectId: string;
  startTime: number;
  /** null until an event starts; then the last event start/finish time. */
  updatedAt: number | null;
  /** `Error` once an event failed, else null. */
  message: string | null;
  /** In creation order (the API shows them newest first). */
  events: InstanceActionEvent[];
  /** Creation order across all actions (the `id` tie-breaker of Nova's `created_at, id` order). */
  seq: number;
}

/** An instance as the actions API knows it, including deleted ones. */
export interface ActionInstance {
  id: string;
  projectId: string;
  deleted: boolean;
}

/** A failure to record on an event. */
export interface EventFailure {
  traceback: string;
  details: string;
}

/** The handle an operation keeps to report its one event. */
export interface ActionEventHandle {
  readonly action: InstanceAction;
  readonly event: InstanceActionEvent;
}

export class InstanceActionStore {
  private readonly instances = new Map<string, ActionInstance>();
  private readonly actions = new Map<string, InstanceAction[]>();
  private seq = 0;

  /** Registers an instance (idempotent): its project decides who may read its actions. */
  register(id: string, projectId: string): void {
    if (!this.instances.has(id)) this.instances.set(id, { id, projectId, deleted: false });
  }

  /** The instance record (live or deleted), if Nova ever had it. */
  instance(id: string): ActionInstance | undefined {
    return this.instances.get(id);
  }

  /** The server is gone: its actions stay readable with read_deleted (2.21+). */
  markDeleted(id: string): void {
    const rec = this.instances.get(id);
    if (rec) rec.deleted = true;
  }

  /** `InstanceAction.action_start`: a new action with no events, `updated_at` null. */
  start(instance: { id: string; projectId: string }, action: string, caller: ActionCaller): InstanceAction {
    this.register(instance.id, instance.projectId);
    const a: InstanceAction = {
      action,
      instanceUuid: instance.id,
      requestId: caller.requestId,
      userId: caller.userId,
      projectId: caller.projectId,
      startTime: nowMicros(),
      updatedAt: null,
      message: null,
      events: [],
      seq: ++this.seq,
    };
    const list = this.actions.get(instance.id) ?? [];
    list.push(a);
    this.actions.set(instance.id, list);
    return a;
  }

  /** `action_event_start`: the event begins on `host`; the action's `updated_at` follows. */
  startEvent(action: InstanceAction, event: string, host: string): ActionEventHandle {
    const e: InstanceActionEvent = {
      event,
      startTime: nowMicros(),
      finishTime: null,
      result: null,
      traceback: null,
      host,
      details: null,
    };
    action.events.push(e);
    action.updatedAt = e.startTime;
    return { action, event: e };
  }

  /** `action_event_finish`: Success, or Error with traceback/details (the action's message becomes `Error`). */
  finishEvent(h: ActionEventHandle, failure?: EventFailure): void {
    if (h.event.finishTime !== null) return;
    h.event.finishTime = nowMicros();
    h.event.result = failure ? 'Error' : 'Success';
    if (failure) {
      h.event.traceback = failure.traceback;
      h.event.details = failure.details;
      h.action.message = 'Error';
    }
    h.action.updatedAt = h.event.finishTime;
  }

  /** The instance's actions, newest first (`created_at desc, id desc`). */
  list(instanceId: string): InstanceAction[] {
    return [...(this.actions.get(instanceId) ?? [])].sort((a, b) => b.startTime - a.startTime || b.seq - a.seq);
  }

  /** `action_get_by_request_id`: the newest action of that request on the instance. */
  byRequestId(instanceId: string, reqId: string): InstanceAction | undefined {
    return this.list(instanceId).find((a) => a.requestId === reqId);
  }

  /**
   * What a finished operation leaves when seeded: an action whose one event already succeeded
   * (a fresh request id, times = now).
   */
  recordCompleted(
    instance: { id: string; projectId: string; userId: string },
    action: string,
    event: string,
    host: string,
  ): InstanceAction {
    const a = this.start(instance, action, {
      requestId: requestId(),
      userId: instance.userId,
      projectId: instance.projectId,
    });
    this.finishEvent(this.startEvent(a, event, host));
    return a;
  }
}
