/**
 * Nomad's own part of a volume's input, parsed by Nomad: a create's `nomad` part
 * (`CreateVolumeInput.nomad`, schema/nomad/volume.graphql), the register input (the same fields
 * at its top, plus the provider's id and the plugin context) and a delete's options. Errors name
 * fields relative to the input the backend was given (`nomad.plugin`, `cascade`); the resolver
 * layer places them under the argument (`input.nomad.plugin`).
 */
import type { DeleteVolumeOptions, OwnCreateInput, VolumeListQuery, VolumeSpec } from '../../contract/call-inputs';
import { BadUserInputError, InputField } from '../../contract/errors';
import { byteCount, checkIdentifier, safeIdentifier, safeText, type IdPosition } from '../../contract/input';
import {
  bounded,
  headerKeyValueList,
  keyValueList,
  ownPart,
  topologyList,
  type KeyValueInput,
  type TopologyInput,
} from '../../contract/input-parts';
import type { AccessMode, AttachmentMode, KeyValue, Topology } from '../../contract/model';
import { NOMAD_IDENTIFIERS } from '../ids';
import { checkCsiSecrets } from '../wire/csi-secrets';

/** The create input's field that holds Nomad's part. */
export const CREATE_PART = 'nomad';

/** Nomad's part of a create: required (Nomad needs the caller's id, a plugin and capabilities). */
export const CREATE_INPUT: OwnCreateInput = {
  field: CREATE_PART,
  owner: 'Nomad',
  required: (part) => `a Nomad volume needs ${part} (its id, plugin and capabilities)`,
  check: (spec) => void nomadVolume(spec, 'create'),
};

/** Nomad's part as the caller gives it: `NomadVolumeSpecInput`, or `RegisterNomadVolumeInput`'s own fields. */
export interface NomadVolumeInput {
  nativeId?: string;
  plugin?: string;
  capabilities?: ReadonlyArray<{ accessMode: AccessMode; attachmentMode: AttachmentMode }>;
  mountOptions?: { fsType?: string | null; mountFlags?: readonly string[] | null } | null;
  secrets?: readonly KeyValueInput[] | null;
  parameters?: readonly KeyValueInput[] | null;
  requiredTopologies?: readonly TopologyInput[] | null;
  preferredTopologies?: readonly TopologyInput[] | null;
  /** Create only: a provider snapshot to create from. */
  snapshotId?: string | null;
  /** Create only: a provider volume to clone. */
  cloneId?: string | null;
  /** Register only: the provider's id of the existing volume. */
  externalId?: string | null;
  /** Register only: the plugin context. */
  context?: readonly KeyValueInput[] | null;
}

/** A checked Nomad volume specification: the neutral fields and Nomad's own. */
export interface NomadVolume {
  nativeId: string;
  name: string;
  namespace: string;
  pluginId: string;
  /** Provider id of an existing volume (register only). */
  externalId?: string;
  capacityMin?: number;
  capacityMax?: number;
  capabilities: Array<{ accessMode: AccessMode; attachmentMode: AttachmentMode }>;
  mountOptions?: { fsType?: string; mountFlags: string[] };
  /** Passed to Nomad; never stored or returned by the gateway. */
  secrets: KeyValue[];
  parameters: KeyValue[];
  context?: KeyValue[];
  requiredTopologies?: Topology[];
  preferredTopologies?: Topology[];
  /** Provider snapshot id to create from. */
  snapshotId?: string;
  /** Provider volume id to clone. */
  cloneId?: string;
}

const id = (position: IdPosition, v: string, at: InputField): string =>
  checkIdentifier(NOMAD_IDENTIFIERS.rules, position, v, at);
const optionalId = (position: IdPosition, v: string | null | undefined, at: InputField): string | undefined =>
  v === null || v === undefined ? undefined : id(position, v, at);
const optionalBytes = (v: number | undefined, at: InputField): number | undefined =>
  v === undefined ? undefined : byteCount(v, at);

function mountOptions(m: NomadVolumeInput['mountOptions'], at: InputField): NomadVolume['mountOptions'] {
  if (!m) return undefined;
  return {
    fsType: m.fsType ? safeText(m.fsType, at.inner('.fsType'), 64) : undefined,
    mountFlags: bounded(m.mountFlags ?? [], at.inner('.mountFlags')).map((f, i) =>
      safeText(f, at.inner(`.mountFlags[${i}]`), 256),
    ),
  };
}

/**
 * `spec` as Nomad takes it, after the checks Nomad would otherwise answer with a 500 or silently
 * ignore: the caller chooses the id, Nomad's part is required, Nomad-less fields are refused, and
 * only register takes the provider's volume id (create gets one from the plugin). On a create
 * `spec.own` is the `nomad` part; on a register, the register input itself.
 */
export function nomadVolume(spec: VolumeSpec, how: 'register' | 'create'): NomadVolume {
  const at = new InputField(how === 'create' ? CREATE_PART : '');
  const field = (sub: string): string => at.inner(`.${sub}`).path;
  const n = ownPart<NomadVolumeInput>(spec.own, at);
  if (!n) throw BadUserInputError.atField(at.path, (name) => `Nomad volumes need their Nomad part (${name(at.path)})`);
  if (!n.nativeId)
    throw BadUserInputError.atField(
      field('nativeId'),
      (name) => `Nomad volumes need an id chosen by the caller (${name(field('nativeId'))})`,
    );
  const nativeId = id('volume', n.nativeId, at.inner('.nativeId'));
  const capabilities = [...bounded(n.capabilities ?? [], at.inner('.capabilities'))];
  if (capabilities.length === 0)
    throw BadUserInputError.at(at.inner('.capabilities'), (a) => `${a} needs at least one capability`);
  if (!n.plugin)
    throw BadUserInputError.atField(
      field('plugin'),
      (name) => `Nomad volumes need a plugin (${name(field('plugin'))})`,
    );
  const pluginId = id('plugin', n.plugin, at.inner('.plugin'));
  const parsed = {
    mountOptions: mountOptions(n.mountOptions, at.inner('.mountOptions')),
    // Stored with the volume and later merged with header secrets: one rule for both.
    secrets: checkCsiSecrets(headerKeyValueList(n.secrets, at.inner('.secrets')), at.inner('.secrets')),
    parameters: keyValueList(n.parameters, at.inner('.parameters')),
    requiredTopologies: topologyList(n.requiredTopologies, at.inner('.requiredTopologies')),
    preferredTopologies: topologyList(n.preferredTopologies, at.inner('.preferredTopologies')),
    snapshotId: optionalId('snapshot', n.snapshotId, at.inner('.snapshotId')),
    cloneId: optionalId('volume', n.cloneId, at.inner('.cloneId')),
  };
  const externalId =
    n.externalId === null || n.externalId === undefined
      ? undefined
      : safeIdentifier(n.externalId, at.inner('.externalId'));
  const context = how === 'register' ? keyValueList(n.context, at.inner('.context')) : undefined;
  if (spec.description !== undefined || (spec.metadata?.length ?? 0) > 0) {
    const wrong = spec.description !== undefined ? 'description' : 'metadata';
    throw BadUserInputError.atField(
      wrong,
      (name) =>
        `Nomad volumes have no description or metadata; use ${name(field('parameters'))} or ${name(field('context'))}`,
    );
  }
  if (how === 'register' && !externalId)
    throw BadUserInputError.atField(
      field('externalId'),
      (name) => `registering needs the provider volume id (${name(field('externalId'))})`,
    );
  if (how === 'create' && externalId !== undefined) {
    throw BadUserInputError.atField(
      field('externalId'),
      (name) => `the plugin chooses the provider volume id on create; ${name(field('externalId'))} is for registering`,
    );
  }
  const min = optionalBytes(spec.capacityMinBytes, new InputField('sizeBytes'));
  const max = optionalBytes(spec.capacityMaxBytes, new InputField('maxSizeBytes'));
  if (min !== undefined && max !== undefined && max > 0 && max < min)
    throw BadUserInputError.atField('maxSizeBytes', (name) => `${name('maxSizeBytes')} is below ${name('sizeBytes')}`);
  return {
    nativeId,
    name: spec.name,
    namespace: spec.namespace,
    pluginId,
    externalId,
    capacityMin: min,
    capacityMax: max,
    capabilities,
    context,
    ...parsed,
  };
}

/** A delete's own options as the caller gives them (`DeleteVolumeInput` but its id). */
interface DeleteInput {
  secrets?: readonly KeyValueInput[] | null;
  cascade?: boolean | null;
  force?: boolean | null;
}

/** A delete's CSI secrets (merged over the stored ones); OpenStack's cascade and force are refused, not dropped. */
export function deleteSecrets(opts: DeleteVolumeOptions): KeyValue[] {
  const d = ownPart<DeleteInput>(opts.own, new InputField('')) ?? {};
  const secretsAt = new InputField('secrets');
  const secrets = headerKeyValueList(d.secrets, secretsAt);
  if (d.cascade || d.force) {
    const wrong = d.cascade ? 'cascade' : 'force';
    throw BadUserInputError.atField(wrong, () => 'cascade and force are OpenStack options; Nomad has no such delete');
  }
  return checkCsiSecrets(secrets, secretsAt);
}

/** A listing's own arguments as the caller gives them: the filter's fields but the neutral ones. */
interface ListInput {
  filter?: { plugin?: string | null } | null;
}

/** The plugin a listing keeps (`filter.plugin`); undefined for all. */
export function listPlugin(q: VolumeListQuery): string | undefined {
  const l = ownPart<ListInput>(q.own, new InputField(''));
  return optionalId('plugin', l?.filter?.plugin, new InputField('filter.plugin'));
}
