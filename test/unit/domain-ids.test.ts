import { decodeGlobalId } from '../../adapters/contract/ids';
import type { Attachment, VolumeRef } from '../../adapters/contract/model';
import { attachmentId, consumerId, volumeId } from '../../domain/ids';

describe('domain ids, kept per model object', () => {
  const ref: VolumeRef = { backend: 'lab', namespace: 'default', nativeId: 'vol-0001' };
  const attachment = { volume: ref, consumerId: 'vol-0001-att-0' } as Attachment;

  it('should give each object the id its parts encode, the same on every call', () => {
    expect(decodeGlobalId(volumeId(ref), 'Volume')).toEqual({
      kind: 'Volume',
      backend: 'lab',
      scope: 'default',
      nativeId: 'vol-0001',
    });
    expect(decodeGlobalId(attachmentId(attachment), 'Attachment')).toMatchObject({
      nativeId: 'vol-0001',
      subId: 'vol-0001-att-0',
    });
    expect(decodeGlobalId(consumerId(attachment), 'Consumer')).toMatchObject({
      nativeId: 'vol-0001',
      subId: 'vol-0001-att-0',
    });
    expect(volumeId(ref)).toBe(volumeId(ref));
  });

  it('should give equal objects equal ids and different objects their own', () => {
    expect(volumeId({ ...ref })).toBe(volumeId(ref));
    expect(volumeId({ ...ref, nativeId: 'vol-0002' })).not.toBe(volumeId(ref));
    expect(attachmentId({ ...attachment, consumerId: 'other' })).not.toBe(attachmentId(attachment));
    // An attachment's id and its consumer's differ (a client cache keys them apart).
    expect(consumerId(attachment)).not.toBe(attachmentId(attachment));
  });

  it('should keep the remembered id out of sight: not in keys, JSON, copies or equality', () => {
    const seen: VolumeRef = { backend: 'lab', namespace: 'default', nativeId: 'vol-0003' };
    const id = volumeId(seen);
    expect(Object.keys(seen)).toEqual(['backend', 'namespace', 'nativeId']);
    expect(JSON.stringify(seen)).toBe('{"backend":"lab","namespace":"default","nativeId":"vol-0003"}');
    expect(seen).toStrictEqual({ backend: 'lab', namespace: 'default', nativeId: 'vol-0003' });
    // A changed copy never inherits the id.
    expect(volumeId({ ...seen, nativeId: 'vol-0004' })).not.toBe(id);
  });

  it('should answer for a frozen object too, computing each time', () => {
    const frozen = Object.freeze({ backend: 'lab', namespace: 'default', nativeId: 'vol-0001' });
    expect(volumeId(frozen)).toBe(volumeId(ref));
    expect(Object.getOwnPropertySymbols(frozen)).toEqual([]);
  });
});
