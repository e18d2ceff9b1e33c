/**
 * Nomad's own part of a snapshot's input, parsed by Nomad: the plugin, its parameters and CSI
 * secrets of a create, a listing's plugin and secrets, and a delete's secrets. Errors name fields
 * relative to the input the backend was given (`plugin`, `filter.plugin`); the resolver layer
 * places them under the argument.
 */
import type { DeleteSnapshotOptions, SnapshotListQuery, SnapshotSpec } from '../../contract/call-inputs';
import { BadUserInputError, InputField } from '../../contract/errors';
import { checkIdentifier } from '../../contract/input';
import { headerKeyValueList, keyValueList, ownPart, type KeyValueInput } from '../../contract/input-parts';
import type { KeyValue } from '../../contract/model';
import { NOMAD_IDENTIFIERS } from '../ids';
import { checkCsiSecrets } from '../wire/csi-secrets';

const plugin = (v: string | null | undefined, at: InputField): string | undefined =>
  v === null || v === undefined ? undefined : checkIdentifier(NOMAD_IDENTIFIERS.rules, 'plugin', v, at);

/** CSI secrets at `field` of the input: header text, then Nomad's own header rules. */
function secrets(list: readonly KeyValueInput[] | null | undefined, field: string): KeyValue[] {
  const at = new InputField(field);
  return checkCsiSecrets(headerKeyValueList(list, at), at);
}

/** A listing's own arguments as the caller gives them: the filter (its volume aside) and the plugin secrets. */
interface ListInput {
  filter?: { plugin?: string | null } | null;
  secrets?: readonly KeyValueInput[] | null;
}

/** A listing's plugin (undefined: the volume's) and secrets. */
export function listInput(q: SnapshotListQuery): { pluginId?: string; secrets: KeyValue[] } {
  const l = ownPart<ListInput>(q.own, new InputField('')) ?? {};
  return {
    pluginId: plugin(l.filter?.plugin, new InputField('filter.plugin')),
    secrets: secrets(l.secrets, 'secrets'),
  };
}

/** The field that names a listing's plugin, for the message when neither it nor a volume is given. */
export const LIST_PLUGIN_FIELD = 'filter.plugin';

/** A create's own fields as the caller gives them (`CreateVolumeSnapshotInput` but its neutral fields). */
interface CreateInput {
  plugin?: string | null;
  parameters?: readonly KeyValueInput[] | null;
  secrets?: readonly KeyValueInput[] | null;
  force?: boolean | null;
}

/** A checked snapshot create: its plugin (undefined: the volume's), parameters and secrets. */
export interface NomadSnapshot {
  pluginId?: string;
  parameters: KeyValue[];
  secrets: KeyValue[];
}

/**
 * A create as Nomad takes it. Nomad snapshots have no description, and `force` is Cinder's (Nomad
 * snapshots in-use volumes as the plugin allows): both refused, not dropped.
 */
export function snapshotInput(spec: SnapshotSpec): NomadSnapshot {
  const c = ownPart<CreateInput>(spec.own, new InputField('')) ?? {};
  const parsed = {
    pluginId: plugin(c.plugin, new InputField('plugin')),
    parameters: keyValueList(c.parameters, new InputField('parameters')),
  };
  const checkedSecrets = headerKeyValueList(c.secrets, new InputField('secrets'));
  if (spec.description !== undefined)
    throw BadUserInputError.atField('description', () => 'Nomad snapshots have no description');
  if (c.force)
    throw BadUserInputError.atField(
      'force',
      () => 'force is an OpenStack option; Nomad snapshots in-use volumes as the plugin allows',
    );
  return { ...parsed, secrets: checkCsiSecrets(checkedSecrets, new InputField('secrets')) };
}

/** A delete's plugin secrets. */
export function deleteInput(opts: DeleteSnapshotOptions): KeyValue[] {
  const d = ownPart<{ secrets?: readonly KeyValueInput[] | null }>(opts.own, new InputField('')) ?? {};
  return secrets(d.secrets, 'secrets');
}
