/**
 * Attachments to hosts. A volume may be attached to several hosts at once, to each once; servers
 * and nodes are other backends' consumers and are refused as unsupported.
 */
import type { Accepted } from '../../contract/call-answers';
import type { AttachTarget, DetachTarget } from '../../contract/call-inputs';
import type { CallOptions } from '../../contract/call-options';
import { UnsupportedByBackendError } from '../../contract/errors';
import type { Attachment, VolumeRef } from '../../contract/model';
import { blockingStatus, existing, newId, now, transition, type MemoryContext } from '../context';
import { attachmentModel } from '../data/store';
import { conflict, notFound } from '../errors';

export function attachVolume(
  ctx: MemoryContext,
  ref: VolumeRef,
  target: AttachTarget,
  o: CallOptions,
): Promise<Accepted<Attachment | null>> {
  return ctx.faults.call(o, () => {
    if (target.kind !== 'host')
      throw new UnsupportedByBackendError(
        ctx.backend,
        'attaching to servers',
        'it attaches hosts (give a host connector)',
      );
    ctx.access.authorize(ref.namespace, true, o);
    const d = existing(ctx, ref);
    const host = target.connector.host;
    const held = blockingStatus(ctx, d);
    if (held)
      throw conflict(
        ctx.backend,
        `volume ${ref.namespace}/${ref.nativeId} is ${held.toLowerCase()}; attach it when that ends`,
      );
    if ((d.attachments ?? []).some((a) => a.host === host))
      throw conflict(ctx.backend, `volume ${ref.namespace}/${ref.nativeId} is already attached to host "${host}"`);
    const a = { id: newId('att'), host, readOnly: target.readOnly ?? false, device: null, attachedAt: null };
    const pending = transition(
      ctx,
      ref,
      'ATTACHING',
      (cur) => ({ ...cur!, attachments: [...(cur!.attachments ?? []), { ...a, state: 'ATTACHING' as const }] }),
      (cur) => ({
        ...cur,
        attachments: (cur.attachments ?? []).map((x) => (x.id === a.id ? { ...a, attachedAt: now() } : x)),
      }),
    );
    const after = ctx.store.volumeData(ref.namespace, ref.nativeId)?.attachments?.find((x) => x.id === a.id);
    return { result: after ? attachmentModel({ ...ref, backend: ctx.backend }, after) : null, pending };
  });
}

export function detachVolume(
  ctx: MemoryContext,
  ref: VolumeRef,
  target: DetachTarget,
  o: CallOptions,
): Promise<Accepted<void>> {
  return ctx.faults.call(o, () => {
    if (target.kind !== 'hostAttachment')
      throw new UnsupportedByBackendError(
        ctx.backend,
        `detaching from a ${target.kind}`,
        'it attaches hosts (give the host attachment)',
      );
    ctx.access.authorize(ref.namespace, true, o);
    const d = existing(ctx, ref);
    const id = target.attachmentId;
    if (!(d.attachments ?? []).some((a) => a.id === id))
      throw notFound(ctx.backend, `volume ${ref.namespace}/${ref.nativeId} has no attachment "${id}"`);
    const held = blockingStatus(ctx, d);
    if (held)
      throw conflict(
        ctx.backend,
        `volume ${ref.namespace}/${ref.nativeId} is ${held.toLowerCase()}; detach it when that ends`,
      );
    const pending = transition(
      ctx,
      ref,
      'DETACHING',
      (cur) => ({
        ...cur!,
        attachments: (cur!.attachments ?? []).map((x) => (x.id === id ? { ...x, state: 'DETACHING' as const } : x)),
      }),
      (cur) => ({ ...cur, attachments: (cur.attachments ?? []).filter((x) => x.id !== id) }),
    );
    return { result: undefined, pending };
  });
}
