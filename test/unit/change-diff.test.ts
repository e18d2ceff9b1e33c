/** Watcher deltas → typed changes: the same rules for every backend. */
import { changesOf } from '../../subscriptions/events/diff';
import { cinderVolume, serverAttachment } from '../support/model';

const at = '2026-11-24T10:02:00.000Z';

describe('changesOf', () => {
  it('should report a new volume as CREATED and a gone one as DELETED with its last state', () => {
    const v = cinderVolume('a');
    expect(changesOf({ before: null, after: v, observedAt: at }).map((c) => c.type)).toEqual(['CREATED']);
    const [gone] = changesOf({ before: v, after: null, observedAt: at });
    expect(gone).toMatchObject({ type: 'DELETED', volume: v, previousStatus: 'AVAILABLE', backend: 'os', scope: 'p1' });
  });

  it('should report a status move as STATUS_CHANGED with the previous status and the changed fields', () => {
    const before = cinderVolume('a');
    const after = cinderVolume('a', { status: 'ATTACHING', backendStatus: 'attaching' });
    expect(changesOf({ before, after, observedAt: at })).toEqual([
      expect.objectContaining({ type: 'STATUS_CHANGED', previousStatus: 'AVAILABLE', changedFields: ['status', 'backendStatus'], attachment: null, keys: {} }),
    ]);
  });

  it('should report nothing when nothing the model shows changed', () => {
    expect(changesOf({ before: cinderVolume('a'), after: cinderVolume('a'), observedAt: at })).toEqual([]);
  });

  it('should report attachments arriving, changing state and going away, keyed by consumer and server', () => {
    const base = cinderVolume('a');
    const attaching = cinderVolume('a', { status: 'IN_USE', backendStatus: 'in-use' });
    attaching.attachments = [serverAttachment(attaching, 'srv-1', { state: 'ATTACHING' })];
    const arrived = changesOf({ before: base, after: attaching, observedAt: at });
    expect(arrived.map((c) => c.type)).toEqual(['STATUS_CHANGED', 'ATTACHING']);
    expect(arrived[1]).toMatchObject({ keys: { consumer: 'srv-1', server: 'srv-1' }, previousAttachmentState: null });
    expect(arrived[1]!.attachmentId).toEqual(expect.any(String));

    const attached = { ...attaching, attachments: [serverAttachment(attaching, 'srv-1')] };
    expect(changesOf({ before: attaching, after: attached, observedAt: at })).toEqual([
      expect.objectContaining({ type: 'ATTACHED', previousAttachmentState: 'ATTACHING', changedFields: ['state'] }),
    ]);
    const detached = changesOf({ before: attached, after: base, observedAt: at });
    expect(detached.map((c) => c.type)).toEqual(['STATUS_CHANGED', 'DETACHED']);
    expect(detached[1]!.attachment).toMatchObject({ state: 'DETACHED', consumerId: 'srv-1' });
  });

  it('should report Nomad claims as CLAIMED and RELEASED, keyed by allocation and node', () => {
    const v = cinderVolume('n');
    const claim = { ...serverAttachment(v, 'alloc-1'), consumer: { __typename: 'VolumeAllocationConsumer' as const, allocationId: 'alloc-1', name: null, namespace: 'default', jobId: 'web', jobType: 'service', taskGroup: 'g', nodeId: 'node-1', nodeName: null, clientStatus: 'running', desiredStatus: 'run', createdAt: null, updatedAt: null } };
    const claimed = changesOf({ before: v, after: { ...v, attachments: [claim] }, observedAt: at });
    expect(claimed).toEqual([expect.objectContaining({ type: 'CLAIMED', keys: { consumer: 'alloc-1', node: 'node-1' } })]);
    expect(changesOf({ before: { ...v, attachments: [claim] }, after: v, observedAt: at }).map((c) => c.type)).toEqual(['RELEASED']);
  });
});

describe('changesOf, a Nomad claim released in two steps', () => {
  it('should report DETACHING while the claim is being released and RELEASED once it is gone, not RELEASED twice', () => {
    const v = cinderVolume('n');
    const consumer = { __typename: 'VolumeAllocationConsumer' as const, allocationId: 'alloc-1', name: null, namespace: 'default', jobId: 'web', jobType: 'service', taskGroup: 'g', nodeId: 'node-1', nodeName: null, clientStatus: 'complete', desiredStatus: 'stop', createdAt: null, updatedAt: null };
    const claim = { ...serverAttachment(v, 'alloc-1'), consumer };
    const releasing = { ...claim, state: 'DETACHING' as const };
    expect(changesOf({ before: { ...v, attachments: [claim] }, after: { ...v, attachments: [releasing] }, observedAt: at }).map((c) => c.type)).toEqual(['DETACHING']);
    expect(changesOf({ before: { ...v, attachments: [releasing] }, after: v, observedAt: at }).map((c) => c.type)).toEqual(['RELEASED']);
  });
});
