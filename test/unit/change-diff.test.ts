/** Watcher deltas → typed changes: the same rules for every backend. */
import { defineCarriedDetails } from '../../adapters/contract/details';
import { changesOf } from '../../subscriptions/events/diff';
import { Transitions } from '../../subscriptions/events/transitions';
import type { Attachment } from '../../adapters/contract/model';
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
      expect.objectContaining({
        type: 'STATUS_CHANGED',
        previousStatus: 'AVAILABLE',
        changedFields: ['status', 'backendStatus'],
        attachment: null,
        keys: {},
      }),
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
    const claim = {
      ...serverAttachment(v, 'alloc-1'),
      consumer: {
        __typename: 'VolumeAllocationConsumer' as const,
        claim: true as const,
        allocationId: 'alloc-1',
        name: null,
        namespace: 'default',
        jobId: 'web',
        jobType: 'service',
        taskGroup: 'g',
        nodeId: 'node-1',
        nodeName: null,
        clientStatus: 'running',
        desiredStatus: 'run',
        createdAt: null,
        updatedAt: null,
      },
    };
    const claimed = changesOf({ before: v, after: { ...v, attachments: [claim] }, observedAt: at });
    expect(claimed).toEqual([
      expect.objectContaining({ type: 'CLAIMED', keys: { consumer: 'alloc-1', node: 'node-1' } }),
    ]);
    // Gone in one read: the DETACHING it went through first (docs/subscriptions.md, "One event per transition").
    expect(changesOf({ before: { ...v, attachments: [claim] }, after: v, observedAt: at }).map((c) => c.type)).toEqual([
      'DETACHING',
      'RELEASED',
    ]);
  });
});

describe('changesOf, a Nomad claim released in two steps', () => {
  it('should report DETACHING while the claim is being released and RELEASED once it is gone, not RELEASED twice', () => {
    const v = cinderVolume('n');
    const consumer = {
      __typename: 'VolumeAllocationConsumer' as const,
      claim: true as const,
      allocationId: 'alloc-1',
      name: null,
      namespace: 'default',
      jobId: 'web',
      jobType: 'service',
      taskGroup: 'g',
      nodeId: 'node-1',
      nodeName: null,
      clientStatus: 'complete',
      desiredStatus: 'stop',
      createdAt: null,
      updatedAt: null,
    };
    const claim = { ...serverAttachment(v, 'alloc-1'), consumer };
    const releasing = { ...claim, state: 'DETACHING' as const };
    expect(
      changesOf({
        before: { ...v, attachments: [claim] },
        after: { ...v, attachments: [releasing] },
        observedAt: at,
      }).map((c) => c.type),
    ).toEqual(['DETACHING']);
    expect(
      changesOf({ before: { ...v, attachments: [releasing] }, after: v, observedAt: at }).map((c) => c.type),
    ).toEqual(['RELEASED']);
  });

  it('should send the same sequence when one read finds the claim gone (blocking queries see volume writes only): DETACHING, STATUS_CHANGED, RELEASED', () => {
    const v = cinderVolume('n', { status: 'AVAILABLE' });
    const claim = {
      ...serverAttachment(v, 'alloc-1'),
      state: 'ATTACHED' as const,
      consumer: {
        __typename: 'VolumeAllocationConsumer' as const,
        claim: true as const,
        allocationId: 'alloc-1',
        name: null,
        namespace: 'default',
        jobId: 'web',
        jobType: 'service',
        taskGroup: 'g',
        nodeId: 'node-1',
        nodeName: null,
        clientStatus: 'running',
        desiredStatus: 'run',
        createdAt: null,
        updatedAt: null,
      },
    };
    const held = { ...v, status: 'IN_USE' as const, attachments: [claim] };
    const changes = changesOf({ before: held, after: v, observedAt: at });
    expect(changes.map((c) => [c.type, c.previousAttachmentState, c.attachment?.state ?? null])).toEqual([
      ['DETACHING', 'ATTACHED', 'DETACHING'],
      ['STATUS_CHANGED', null, null],
      ['RELEASED', 'DETACHING', 'DETACHED'],
    ]);
    // Two steps seen, as the event stream sees them: the same three types in the same order.
    const releasing = { ...held, attachments: [{ ...claim, state: 'DETACHING' as const }] };
    const stepwise = [
      ...changesOf({ before: held, after: releasing, observedAt: at }),
      ...changesOf({ before: releasing, after: v, observedAt: at }),
    ];
    expect(stepwise.map((c) => c.type)).toEqual(changes.map((c) => c.type));
    // A deleted volume's claims are RELEASED only (Nomad refuses to deregister a claimed volume without -force).
    expect(changesOf({ before: held, after: null, observedAt: at }).map((c) => c.type)).toEqual([
      'DELETED',
      'RELEASED',
    ]);
  });
});

describe('changesOf, one event per transition', () => {
  const claimOf = (v: ReturnType<typeof cinderVolume>, times: string | null) => ({
    ...serverAttachment(v, 'alloc-1'),
    consumer: {
      __typename: 'VolumeAllocationConsumer' as const,
      claim: true as const,
      allocationId: 'alloc-1',
      name: null,
      namespace: 'default',
      jobId: 'web',
      jobType: 'service',
      taskGroup: 'g',
      nodeId: 'node-1',
      nodeName: null,
      clientStatus: 'running',
      desiredStatus: 'run',
      createdAt: times,
      updatedAt: times,
    },
  });

  it('should send nothing when only write stamps and mirrors moved (a Nomad restart re-read, a claim checkpoint)', () => {
    const v = cinderVolume('a', { updatedAt: '2026-11-24T10:00:00Z' });
    const restamped = cinderVolume('a', {
      updatedAt: '2026-11-24T11:00:00Z',
      backendStatus: 'available*',
      details: { ...v.details, cinderStatus: 'OTHER' },
    });
    expect(changesOf({ before: v, after: restamped, observedAt: at })).toEqual([]);
    // A real field change still goes, and lists the stamps that moved with it.
    expect(changesOf({ before: v, after: { ...restamped, name: 'renamed' }, observedAt: at })).toEqual([
      expect.objectContaining({ type: 'UPDATED', changedFields: ['name', 'backendStatus', 'updatedAt', 'details'] }),
    ]);
  });

  it('should send nothing for a claim whose allocation was only updated (same state), and CLAIMED again when its state moves', () => {
    const v = cinderVolume('n');
    const before = { ...v, attachments: [claimOf(v, '2026-11-24T10:00:00Z')] };
    const after = { ...v, attachments: [{ ...claimOf(v, '2026-11-24T11:00:00Z'), backendState: 'running*' }] };
    expect(changesOf({ before, after, observedAt: at })).toEqual([]);
    const pending = { ...v, attachments: [{ ...claimOf(v, null), state: 'ATTACHING' as const }] };
    expect(changesOf({ before: pending, after: before, observedAt: at })).toEqual([
      expect.objectContaining({ type: 'CLAIMED', previousAttachmentState: 'ATTACHING' }),
    ]);
  });

  it("should fold Cinder's reserved → attaching into the attachment's ATTACHING, and detaching into its DETACHING", () => {
    const v = cinderVolume('a');
    const reserved = cinderVolume('a', { status: 'RESERVED', backendStatus: 'reserved' });
    reserved.attachments = [serverAttachment(reserved, 'srv-1', { state: 'ATTACHING', backendState: 'reserved' })];
    const attaching = cinderVolume('a', {
      status: 'ATTACHING',
      backendStatus: 'attaching',
      attachments: [serverAttachment(reserved, 'srv-1', { state: 'ATTACHING', backendState: 'attaching' })],
    });
    expect(changesOf({ before: v, after: reserved, observedAt: at }).map((c) => c.type)).toEqual(['ATTACHING']);
    expect(changesOf({ before: reserved, after: attaching, observedAt: at })).toEqual([]);
    const inUse = cinderVolume('a', {
      status: 'IN_USE',
      backendStatus: 'in-use',
      attachments: [serverAttachment(reserved, 'srv-1')],
    });
    const detaching = cinderVolume('a', {
      status: 'DETACHING',
      backendStatus: 'detaching',
      attachments: [serverAttachment(reserved, 'srv-1', { state: 'DETACHING' })],
    });
    expect(changesOf({ before: inUse, after: detaching, observedAt: at }).map((c) => c.type)).toEqual(['DETACHING']);
    // Without an attachment that says so, the status move is the only news: it is sent.
    expect(
      changesOf({
        before: v,
        after: cinderVolume('a', { status: 'RESERVED', backendStatus: 'reserved' }),
        observedAt: at,
      }).map((c) => c.type),
    ).toEqual(['STATUS_CHANGED']);
  });
});

describe('changesOf, consumers of any backend', () => {
  // A backend the diff has never heard of: its consumer types are its own, and only their neutral
  // part (ConsumerBase: claim, nodeId, serverId) decides the change types and the match keys.
  const v = cinderVolume('x');
  const as = (consumerId: string, consumer: Attachment['consumer']): Attachment => ({
    ...serverAttachment(v, consumerId),
    consumer,
  });

  it("should report a claiming consumer's arrival and going as CLAIMED and RELEASED, keyed by its node", () => {
    const claim = as('job-7', { __typename: 'LabJobConsumer', claim: true, nodeId: 'rack-2' });
    const claimed = changesOf({ before: v, after: { ...v, attachments: [claim] }, observedAt: at });
    expect(claimed).toEqual([
      expect.objectContaining({ type: 'CLAIMED', keys: { consumer: 'job-7', node: 'rack-2' } }),
    ]);
    expect(changesOf({ before: { ...v, attachments: [claim] }, after: v, observedAt: at }).map((c) => c.type)).toEqual([
      'DETACHING',
      'RELEASED',
    ]);
  });

  it('should report an attaching consumer as ATTACHED and DETACHED, keyed by its server', () => {
    const attached = as('vm-3', { __typename: 'LabMachineConsumer', serverId: 'vm-3' });
    expect(changesOf({ before: v, after: { ...v, attachments: [attached] }, observedAt: at })).toEqual([
      expect.objectContaining({ type: 'ATTACHED', keys: { consumer: 'vm-3', server: 'vm-3' } }),
    ]);
    expect(
      changesOf({ before: { ...v, attachments: [attached] }, after: v, observedAt: at }).map((c) => c.type),
    ).toEqual(['DETACHED']);
  });
});

describe('changesOf, details of any backend', () => {
  it('should make no change of the detail fields a backend declared carried, and UPDATED of the others', () => {
    defineCarriedDetails('LabVolumeDetails', ['revision']);
    const lab = (revision: number, tier: string) => ({
      ...cinderVolume('l'),
      details: { __typename: 'LabVolumeDetails', revision, tier },
    });
    expect(changesOf({ before: lab(1, 'gold'), after: lab(2, 'gold'), observedAt: at })).toEqual([]);
    expect(changesOf({ before: lab(2, 'gold'), after: lab(3, 'silver'), observedAt: at })).toEqual([
      expect.objectContaining({ type: 'UPDATED', changedFields: ['details'] }),
    ]);
  });
});

describe('Transitions', () => {
  const v = cinderVolume('a');
  const reserved = cinderVolume('a', {
    status: 'RESERVED',
    backendStatus: 'reserved',
    attachments: [serverAttachment(v, 'srv-1', { state: 'ATTACHING', backendState: 'reserved' })],
  });
  const attaching = cinderVolume('a', {
    status: 'ATTACHING',
    backendStatus: 'attaching',
    attachments: [serverAttachment(v, 'srv-1', { state: 'ATTACHING', backendState: 'attaching' })],
  });
  const inUse = cinderVolume('a', {
    status: 'IN_USE',
    backendStatus: 'in-use',
    attachments: [serverAttachment(v, 'srv-1')],
  });
  const announced = changesOf({
    before: v,
    after: { ...v, attachments: [serverAttachment(v, 'SRV-1', { state: 'ATTACHING', backendState: null })] },
    observedAt: at,
  });

  it("should send the gateway's ATTACHING once, then the status change from where subscribers last saw it, then ATTACHED", () => {
    const t = new Transitions();
    expect(t.announce(announced).map((c) => c.type)).toEqual(['ATTACHING']);
    expect(t.observe([{ before: v, after: reserved, observedAt: at }])).toEqual([]);
    expect(t.observe([{ before: reserved, after: attaching, observedAt: at }])).toEqual([]);
    const done = t.observe([{ before: attaching, after: inUse, observedAt: at }]);
    expect(done.map((c) => [c.type, c.previousStatus])).toEqual([
      ['STATUS_CHANGED', 'AVAILABLE'],
      ['ATTACHED', 'AVAILABLE'],
    ]);
    expect(t.size).toBe(0);
  });

  it('should send no status change when a folded attach rolls back to where it started, only the attachment going away', () => {
    const t = new Transitions();
    t.announce(announced);
    t.observe([{ before: v, after: reserved, observedAt: at }]);
    expect(t.observe([{ before: reserved, after: v, observedAt: at }]).map((c) => [c.type, c.previousStatus])).toEqual([
      ['DETACHED', 'AVAILABLE'],
    ]);
    expect(t.size).toBe(0);
  });

  it("should fold a reserved volume whose attachment the watcher's read does not show yet (Cinder read before Nova) into the gateway's ATTACHING", () => {
    const t = new Transitions();
    t.announce(announced);
    const cinderOnly = cinderVolume('a', { status: 'RESERVED', backendStatus: 'reserved' });
    expect(t.observe([{ before: v, after: cinderOnly, observedAt: at }])).toEqual([]);
    expect(t.observe([{ before: cinderOnly, after: attaching, observedAt: at }])).toEqual([]);
    expect(
      t.observe([{ before: attaching, after: inUse, observedAt: at }]).map((c) => [c.type, c.previousStatus]),
    ).toEqual([
      ['STATUS_CHANGED', 'AVAILABLE'],
      ['ATTACHED', 'AVAILABLE'],
    ]);
    // Without an announcement the status move is news.
    expect(new Transitions().observe([{ before: v, after: cinderOnly, observedAt: at }]).map((c) => c.type)).toEqual([
      'STATUS_CHANGED',
    ]);
  });

  it('should forget an announcement no watcher confirmed after its time to live', async () => {
    const t = new Transitions({ ttlMs: 20 });
    t.announce(announced);
    expect(t.size).toBe(1);
    await new Promise((r) => setTimeout(r, 40));
    expect(t.observe([]).length).toBe(0);
    expect(t.size).toBe(0);
  });
});
