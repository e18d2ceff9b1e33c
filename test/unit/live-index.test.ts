/** The subscriber index narrows by key; `matches` is exact (changes made by diff.ts from model volumes). */
import { changesOf } from '../../subscriptions/events/diff';
import type { ChangeEvent } from '../../subscriptions/events';
import { SubscriberIndex, matches } from '../../subscriptions/live/subscribers';
import type { Interest } from '../../subscriptions/live/spec';
import { cinderVolume, serverAttachment } from '../support/model';

const ev = (c: ReturnType<typeof changesOf>[number], seq = 1): ChangeEvent => ({ ...c, cursor: String(seq) });

describe('SubscriberIndex', () => {
  const v = cinderVolume('a');
  const volumeEvent = ev(changesOf({ before: null, after: v, observedAt: '2026-11-24T10:00:00Z' })[0]!);
  const attached = ev(
    changesOf({
      before: v,
      after: { ...v, attachments: [serverAttachment(v, 'srv-1')] },
      observedAt: '2026-11-24T10:01:00Z',
    })[0]!,
    2,
  );
  const sub = (interest: Interest) => ({ interest });

  it('finds subscribers by backend, volume id and any-backend, and drops them on delete', () => {
    const idx = new SubscriberIndex<{ interest: Interest }>();
    const any = sub({ field: 'volumeChanged', filter: {} });
    const east = sub({ field: 'volumeChanged', filter: { backends: new Set([volumeEvent.backend]) } });
    const other = sub({ field: 'volumeChanged', filter: { backends: new Set(['elsewhere']) } });
    const byId = sub({ field: 'volumeChanged', filter: { volumeIds: new Set([volumeEvent.volumeId]) } });
    const node = sub({ field: 'attachmentChanged', target: { kind: 'node', id: 'n1' } });
    for (const s of [any, east, other, byId, node]) idx.add(s);
    expect([...idx.candidates(volumeEvent)].sort()).toEqual([any, east, byId].sort());
    expect(idx.countFor(volumeEvent.backend)).toBe(4);
    expect(idx.delete(east)).toBe(true);
    expect(idx.delete(east)).toBe(false);
    expect(idx.size).toBe(4);
    expect(idx.candidates(volumeEvent).has(east)).toBe(false);
  });

  it('matches filters exactly: namespace, types; attachment targets only attachment changes', () => {
    expect(matches({ field: 'volumeChanged', filter: { namespace: volumeEvent.scope } }, volumeEvent)).toBe(true);
    expect(matches({ field: 'volumeChanged', filter: { namespace: 'other' } }, volumeEvent)).toBe(false);
    expect(matches({ field: 'volumeChanged', filter: { types: new Set(['DELETED']) } }, volumeEvent)).toBe(false);
    expect(
      matches(
        {
          field: 'attachmentChanged',
          target: { kind: 'volume', id: volumeEvent.volumeId, backend: volumeEvent.backend },
        },
        volumeEvent,
      ),
    ).toBe(false);
    expect(attached.type).toBe('ATTACHED');
    expect(matches({ field: 'attachmentChanged', target: { kind: 'server', id: 'srv-1' } }, attached)).toBe(true);
    expect(matches({ field: 'attachmentChanged', target: { kind: 'server', id: 'srv-2' } }, attached)).toBe(false);
    expect(matches({ field: 'attachmentChanged', target: { kind: 'consumer', id: 'srv-1' } }, attached)).toBe(true);
  });

  it('finds attachment subscribers by server and consumer key', () => {
    const idx = new SubscriberIndex<{ interest: Interest }>();
    const server = sub({ field: 'attachmentChanged', target: { kind: 'server', id: 'srv-1' } });
    const otherServer = sub({ field: 'attachmentChanged', target: { kind: 'server', id: 'srv-2' } });
    idx.add(server);
    idx.add(otherServer);
    expect([...idx.candidates(attached)]).toEqual([server]);
    expect(idx.candidates(volumeEvent).size).toBe(0);
  });
});
