/**
 * Cinder user messages (`GET /v3/{p}/messages`, ≥ 3.3): the records the volume manager writes
 * when an asynchronous operation fails (cinder/message/message_field.py), shown as
 * `"<action>:<detail>"` with event id `VOLUME_VOLUME_<action>_<detail>` and a 30-day guarantee.
 */
import { nowMicros } from '../clock';
import { uuid } from '../ids';
import type { UserMessage } from '../model';
import type { SimState } from '../state';

export type MessagePart = readonly [string, string];

export const Action = {
  SCHEDULE_ALLOCATE_VOLUME: ['001', 'schedule allocate volume'],
  ATTACH_VOLUME: ['002', 'attach volume'],
  COPY_VOLUME_TO_IMAGE: ['003', 'copy volume to image'],
  UPDATE_ATTACHMENT: ['004', 'update attachment'],
  COPY_IMAGE_TO_VOLUME: ['005', 'copy image to volume'],
  UNMANAGE_VOLUME: ['006', 'unmanage volume'],
  EXTEND_VOLUME: ['007', 'extend volume'],
} as const satisfies Record<string, MessagePart>;

export const Detail = {
  UNKNOWN_ERROR: ['001', 'An unknown error occurred.'],
  NO_BACKEND_AVAILABLE: ['003', 'Could not find any available weighted backend.'],
  VOLUME_ATTACH_MODE_INVALID: ['005', "Volume's attach mode is invalid."],
  NOTIFY_COMPUTE_SERVICE_FAILED: ['009', 'Compute service failed to extend volume.'],
  DRIVER_FAILED_EXTEND: ['010', 'Volume Driver failed to extend volume.'],
} as const satisfies Record<string, MessagePart>;

/** Message retention (Cinder's `message_ttl`, 30 days). */
const TTL_US = 2_592_000 * 1_000_000;

export interface MessageSpec {
  projectId: string;
  resourceUuid: string | null;
  action: MessagePart;
  detail: MessagePart;
  requestId: string;
  resourceType?: string;
}

export function createMessage(state: SimState, spec: MessageSpec): UserMessage {
  const now = nowMicros();
  const m: UserMessage = {
    id: uuid(),
    projectId: spec.projectId,
    requestId: spec.requestId,
    resourceType: spec.resourceType ?? 'VOLUME',
    resourceUuid: spec.resourceUuid,
    eventId: `VOLUME_${spec.resourceType ?? 'VOLUME'}_${spec.action[0]}_${spec.detail[0]}`,
    userMessage: `${spec.action[1]}:${spec.detail[1]}`,
    messageLevel: 'ERROR',
    createdAt: now,
    expiresAt: now + TTL_US,
  };
  state.messages.set(m.id, m);
  return m;
}
