/**
 * OpenStack's own part of a volume's input, parsed here: a create's `cinder` part
 * (`CreateVolumeInput.cinder`, schema/openstack/cinder-volume.graphql) and a delete's options.
 * Errors name fields relative to the input the backend was given (`cinder.snapshotId`,
 * `secrets`); the resolver layer places them under the argument.
 */
import type { DeleteVolumeOptions, OwnCreateInput, VolumeListQuery } from '../../contract/call-inputs';
import { BadUserInputError, inputField, type InputField } from '../../contract/errors';
import { checkGlobalIdParts, decodeGlobalId, type GlobalIdKind } from '../../contract/ids';
import { safeText } from '../../contract/input';
import { ownPart, type KeyValueInput } from '../../contract/input-parts';
import { checkedUuid } from '../ids';

/** The create input's field that holds OpenStack's part. */
export const CREATE_PART = 'cinder';

/** OpenStack's part of a create: optional (a plain create needs only a size). */
export const CREATE_INPUT: OwnCreateInput = {
  field: CREATE_PART,
  owner: 'OpenStack',
  check: (spec, backend) => void cinderPart(spec.own, backend),
};

/** OpenStack's part of a create as the caller gives it (`CinderVolumeSpecInput`). */
interface CinderPartInput {
  volumeType?: string | null;
  availabilityZone?: string | null;
  /** A Cinder snapshot's global id. */
  snapshotId?: string | null;
  /** A Cinder volume's global id. */
  sourceVolumeId?: string | null;
}

/** OpenStack's part of a create, checked: names bounded, sources as Cinder ids. */
export interface CinderPart {
  volumeType?: string;
  availabilityZone?: string;
  snapshotId?: string;
  sourceVolumeId?: string;
}

const text = (v: string | null | undefined, at: InputField): string | undefined =>
  v === null || v === undefined ? undefined : safeText(v, at, 255);

/** The Cinder id a global id of this backend names; another backend's object cannot be a source here. */
function cinderId(
  backend: string,
  id: string | null | undefined,
  kind: GlobalIdKind,
  at: InputField,
): string | undefined {
  if (id === null || id === undefined) return undefined;
  const p = decodeGlobalId(id, kind, at);
  if (p.backend !== backend)
    throw BadUserInputError.at(
      at,
      (a) =>
        `${a} names a ${kind.toLowerCase()} of backend "${p.backend}"; a volume of backend "${backend}" is made from its own`,
    );
  return checkedUuid(checkGlobalIdParts(p, 'OPENSTACK', at).nativeId, at);
}

/** The `cinder` part of a create on `backend` (absent: none of its options). */
export function cinderPart(own: unknown, backend: string): CinderPart {
  const at = inputField(CREATE_PART);
  const c = ownPart<CinderPartInput>(own, at) ?? {};
  return {
    volumeType: text(c.volumeType, at.inner('.volumeType')),
    availabilityZone: text(c.availabilityZone, at.inner('.availabilityZone')),
    snapshotId: cinderId(backend, c.snapshotId, 'Snapshot', at.inner('.snapshotId')),
    sourceVolumeId: cinderId(backend, c.sourceVolumeId, 'Volume', at.inner('.sourceVolumeId')),
  };
}

/** A delete's own options as the caller gives them (`DeleteVolumeInput` but its id). */
interface DeleteInput {
  secrets?: readonly KeyValueInput[] | null;
  cascade?: boolean | null;
  force?: boolean | null;
}

/** A delete's Cinder options; Nomad's plugin secrets are refused, not dropped. */
export function deleteOptions(opts: DeleteVolumeOptions): { cascade: boolean; force: boolean } {
  const d = ownPart<DeleteInput>(opts.own, inputField('')) ?? {};
  if (d.secrets?.length)
    throw BadUserInputError.atField('secrets', () => 'secrets are a Nomad option; OpenStack deletes need none');
  return { cascade: d.cascade === true, force: d.force === true };
}

/** Whether a listing asks for a plugin's volumes (`filter.plugin`): a Nomad notion no Cinder volume matches. */
export function listsByPlugin(q: VolumeListQuery): boolean {
  const l = ownPart<{ filter?: { plugin?: string | null } | null }>(q.own, inputField(''));
  return l?.filter?.plugin !== null && l?.filter?.plugin !== undefined;
}
