import { decodeGlobalId } from '../../adapters/contract/ids';
import type { Attachment, VolumeRef } from '../../adapters/contract/model';
import { attachmentId, consumerId, volumeId } from '../../domain/ids';

describe('domain ids, kept per model object', () => {
  const ref: VolumeRef = { backend: 'lab', namespace: 'default', nativeId: 'vol-0001' };
  const attachment = { volume: ref, consumerId: 'vol-0001-att-0' } as Attachment;

  it('should give each object the id its parts encode, the same on every call', () => {
    expect(decodeGlobalId(volumeId(ref), 'Volume')).toEqual({ kind: 'Volume', backend: 'lab', scope: 'default', nativeId: 'vol-0001' });
    expect(decodeGlobalId(attachmentId(attachment), 'Attachment')).toMatchObject({ nativeId: 'vol-0001', subId: 'vol-0001-att-0' });
    expect(decodeGlobalId(consumerId(attachment), 'Consumer')).toMatchObject({ nativeId: 'vol-0001', subId: 'vol-0001-att-0' });
    expect(volumeId(ref)).toBe(volumeId(ref));
  });

  it('should give equal objects equal ids and different objects their own', () => {
    expect(volumeId({ ...ref })).toBe(volumeId(ref));
    expect(volumeId({ ...ref, nativeId: 'vol-0002' })).not.toBe(volumeId(ref));
    expect(attachmentId({ ...attachment, consumerId: 'other' })).not.toBe(attachmentId(attachment));
    // An attachment's id and its consumer's differ (a client cache keys them apart).
    expect(consumerId(attachment)).not.toBe(attachmentId(attachment));
  });
});
