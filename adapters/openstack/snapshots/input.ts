/**
 * OpenStack's own part of a snapshot's input: a create's `force` (snapshot an in-use volume).
 * Nomad's options (a plugin, its parameters and secrets) are refused, not dropped. Errors name
 * fields relative to the input the backend was given; the resolver layer places them.
 */
import type { DeleteSnapshotOptions, SnapshotListQuery, SnapshotSpec } from '../../contract/call-inputs';
import { BadUserInputError, inputField } from '../../contract/errors';
import { ownPart, type KeyValueInput } from '../../contract/input-parts';

const noSecrets = (secrets: readonly KeyValueInput[] | null | undefined, field: string): void => {
  if (secrets?.length) throw BadUserInputError.atField(field, () => 'secrets are a Nomad option');
};

/** Refuses a listing's Nomad arguments: a plugin (`filter.plugin`) and plugin secrets. */
export function checkListInput(q: SnapshotListQuery): void {
  const l = ownPart<{ filter?: { plugin?: string | null } | null; secrets?: readonly KeyValueInput[] | null }>(
    q.own,
    inputField(''),
  );
  noSecrets(l?.secrets, 'secrets');
  const plugin = l?.filter?.plugin;
  if (plugin !== null && plugin !== undefined)
    throw BadUserInputError.atField(
      'filter.plugin',
      () => 'a plugin is a Nomad notion; OpenStack snapshots list by project',
    );
}

/** A create's own fields as the caller gives them (`CreateVolumeSnapshotInput` but its neutral fields). */
interface CreateInput {
  plugin?: string | null;
  parameters?: readonly KeyValueInput[] | null;
  secrets?: readonly KeyValueInput[] | null;
  force?: boolean | null;
}

/** Whether to snapshot an in-use volume. @default false */
export function snapshotForce(spec: SnapshotSpec): boolean {
  const c = ownPart<CreateInput>(spec.own, inputField('')) ?? {};
  noSecrets(c.secrets, 'secrets');
  if ((c.plugin !== null && c.plugin !== undefined) || c.parameters?.length)
    throw BadUserInputError.atField('', () => 'plugin and parameters are Nomad options');
  return c.force === true;
}

/** Refuses a delete's plugin secrets. */
export function checkDeleteInput(opts: DeleteSnapshotOptions): void {
  noSecrets(ownPart<{ secrets?: readonly KeyValueInput[] | null }>(opts.own, inputField(''))?.secrets, 'secrets');
}
