/** The live status page's pure logic (server/live/page/state.ts, connection.ts) and its operations against the schema. */
import { parse, validate } from 'graphql';
import { backoffMs, describeClose, errorCodes, FATAL_CLOSE_CODES } from '../../server/live/page/connection';
import { LIST_QUERY, SUBSCRIPTION } from '../../server/live/page/queries';
import {
  consumerLabel,
  coverage,
  LiveTable,
  mergeAttachment,
  type LiveAttachment,
  type LiveEvent,
  type LiveVolume,
} from '../../server/live/page/state';
import { buildGatewaySchema } from '../../server/schema';

const server = (id: string, name = 'ci-worker-1') => ({ __typename: 'VolumeServerConsumer', serverId: id, name });
const vol = (over: Partial<LiveVolume> = {}): LiveVolume => ({
  id: 'v1',
  backend: { id: 'openstack' },
  namespace: 'p',
  nativeId: 'n1',
  name: 'ci-scratch',
  status: 'AVAILABLE',
  attachments: [],
  ...over,
});
const event = (over: Partial<LiveEvent>): LiveEvent => ({
  type: 'UPDATED',
  cursor: 'c',
  observedAt: '2025-01-01T00:00:00Z',
  volumeId: 'v1',
  volume: null,
  previousStatus: null,
  attachment: null,
  changedFields: [],
  omittedBackends: [],
  ...over,
});

describe('live page table', () => {
  it('should validate its list query and subscription against the gateway schema', () => {
    const schema = buildGatewaySchema();
    expect(validate(schema, parse(LIST_QUERY)).map((e) => e.message)).toEqual([]);
    expect(validate(schema, parse(SUBSCRIPTION)).map((e) => e.message)).toEqual([]);
  });

  it('should move an attachment from ATTACHING (gateway, before the volume shows it) to ATTACHED (watcher)', () => {
    const t = new LiveTable();
    t.replace([vol()]);
    const pending: LiveAttachment = { id: 'a-pending', state: 'ATTACHING', consumer: server('s1') };
    expect(t.apply(event({ type: 'ATTACHING', volume: vol(), attachment: pending }), 1000)).toBe('v1');
    expect(t.get('v1')).toMatchObject({ changedAt: 1000, lastEvent: 'ATTACHING', volume: { attachments: [pending] } });
    // The watcher's attachment has its own id; the same consumer makes it the same attachment.
    const done: LiveAttachment = { id: 'a-real', state: 'ATTACHED', consumer: server('s1') };
    t.apply(
      event({
        type: 'ATTACHED',
        volume: vol({ status: 'IN_USE', attachments: [done] }),
        attachment: done,
        previousStatus: 'AVAILABLE',
      }),
      2000,
    );
    expect(t.get('v1')!.volume).toMatchObject({ status: 'IN_USE', attachments: [done] });
    t.apply(
      event({ type: 'DETACHED', volume: vol({ status: 'AVAILABLE', attachments: [done] }), attachment: done }),
      3000,
    );
    expect(t.get('v1')!.volume.attachments).toEqual([]);
  });

  it('should add created volumes in order, drop deleted ones, and ignore SUBSCRIBED', () => {
    const t = new LiveTable();
    t.replace([
      vol({ id: 'a', backend: { id: 'nomad-east' }, nativeId: 'z' }),
      vol({ id: 'b', nativeId: 'b', name: 'b' }),
    ]);
    expect(t.apply(event({ type: 'SUBSCRIBED', volumeId: null }), 1)).toBeUndefined();
    t.apply(event({ type: 'CREATED', volumeId: 'c', volume: vol({ id: 'c', nativeId: 'a', name: 'a' }) }), 1);
    expect(t.list().map((r) => r.volume.id)).toEqual(['a', 'c', 'b']);
    t.apply(event({ type: 'DELETED', volumeId: 'b' }), 2);
    expect(t.list().map((r) => r.volume.id)).toEqual(['a', 'c']);
    // An event for a volume the page never saw and without its state changes nothing.
    expect(t.apply(event({ type: 'RELEASED', volumeId: 'x' }), 3)).toBeUndefined();
  });

  it('should keep the attachments it knows when an event carries a volume whose attachments failed to read', () => {
    const t = new LiveTable();
    const a: LiveAttachment = {
      id: 'a',
      state: 'ATTACHED',
      consumer: {
        __typename: 'VolumeAllocationConsumer',
        allocationId: 'al',
        jobId: 'ci-runner',
        taskGroup: 'build',
        nodeName: 'east-client-1',
      },
    };
    t.replace([vol({ attachments: [a] })]);
    t.apply(event({ type: 'UPDATED', volume: vol({ name: 'renamed', attachments: null }) }), 1);
    expect(t.get('v1')!.volume).toMatchObject({ name: 'renamed', attachments: [a] });
    expect(consumerLabel(a.consumer)).toBe('ci-runner/build on east-client-1');
    expect(mergeAttachment([a], 'RELEASED', { ...a, state: 'DETACHED' })).toEqual([]);
  });

  it('should describe coverage and connection failures', () => {
    expect(coverage([])).toBe('all backends');
    expect(coverage([{ backend: { id: 'openstack' }, reason: 'NO_CREDENTIAL', code: null, message: null }])).toBe(
      'not covered: openstack (NO_CREDENTIAL)',
    );
    expect(errorCodes([{ message: 'old', extensions: { code: 'CURSOR_EXPIRED' } }])).toEqual(['CURSOR_EXPIRED']);
    expect(errorCodes({ code: 4401 })).toEqual([]);
    expect(describeClose({ code: 4403, reason: 'Forbidden' })).toBe('socket closed 4403 Forbidden');
    expect(FATAL_CLOSE_CODES.has(4401)).toBe(true);
    expect(backoffMs(0, () => 1)).toBe(500);
    expect(backoffMs(3, () => 1)).toBe(4000);
    expect(backoffMs(50, () => 0)).toBe(12_000);
  });
});
