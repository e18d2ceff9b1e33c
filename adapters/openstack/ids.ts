/**
 * What OpenStack accepts in each identifier position. Cinder volume, snapshot and attachment ids
 * and Nova server ids are dashed uuid4s that the services generate (the Cinder and Nova API
 * references; test/fixtures/recorded/); nothing else can name one. Keystone project ids are
 * `uuid4().hex` (32 hex digits) in the SQL resource backend; up to 64 characters of
 * `[A-Za-z0-9_-]` are accepted here, the width of Keystone's id column, so hand-made ids such as
 * `default` still pass.
 */
import { BadUserInputError, type InputPlace } from '../contract/errors';
import { defineIdentifierScheme, type IdentifierScheme } from '../contract/ids';
import type { IdentifierRule } from '../contract/input';

/** A dashed UUID in any case (Cinder and Nova compare ids case-insensitively). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PROJECT = /^[A-Za-z0-9_-]{1,64}$/;

const uuid = (what: string): IdentifierRule => ({
  test: (v) => UUID.test(v),
  expects: `an OpenStack ${what} id (a UUID such as 3f2a…-…)`,
});

/** OpenStack's identifier scheme: UUIDs and project ids; snapshots are scoped by project, like volumes. */
export const OPENSTACK_IDENTIFIERS: IdentifierScheme = {
  rules: {
    namespace: {
      test: (v) => PROJECT.test(v),
      expects: 'an OpenStack project id (1 to 64 letters, digits, "_" and "-")',
    },
    volume: uuid('volume'),
    snapshot: uuid('snapshot'),
    server: uuid('server'),
    attachment: uuid('attachment'),
    consumer: uuid('attachment'),
  },
  snapshotScope: 'namespace',
};

defineIdentifierScheme('OPENSTACK', OPENSTACK_IDENTIFIERS);

/**
 * A caller-given OpenStack id, checked and lower-cased (Cinder and Nova store them lower-case);
 * anything but a UUID is BAD_USER_INPUT naming `argument`, before any call.
 */
export function checkedUuid(value: string, argument: InputPlace): string {
  if (!UUID.test(value))
    throw BadUserInputError.at(
      argument,
      (a) => `${a} must be an OpenStack UUID (got ${JSON.stringify(value.slice(0, 80))})`,
    );
  return value.toLowerCase();
}
