/**
 * A backend's own options are parsed by the backend, which names fields relative to the input it
 * was given; the resolver layer places them under the argument. Clients see the argument paths
 * in `extensions.argument` and in the message, as they always have, for Nomad and OpenStack.
 */
import type { NomadSimulator } from '../../simulators/nomad';
import {
  disposeAll,
  MGMT,
  seedVolumes,
  startGatewayFor,
  startNomad,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';

const gid = (parts: unknown[]): string => Buffer.from(JSON.stringify(parts)).toString('base64url');
const CAPABILITIES = [{ accessMode: 'SINGLE_NODE_WRITER', attachmentMode: 'FILE_SYSTEM' }];

describe('backend option errors name argument paths', () => {
  let sim: NomadSimulator;
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;
  let nomad: Record<string, string>;
  let member: Record<string, string>;

  beforeAll(async () => {
    sim = await startNomad();
    seedVolumes(sim, 1);
    os = await startOpenStack();
    gw = await startGatewayFor([{ id: 'east', url: sim.url }, os.backend('os')]);
    nomad = { 'x-nomad-token': MGMT };
    member = { 'x-auth-token': os.demoToken };
  });
  afterAll(disposeAll);

  /** The first error's message and argument, for `query` with `variables`. */
  const refusal = async (
    query: string,
    variables: Record<string, unknown>,
    headers: Record<string, string>,
  ): Promise<{ message: string; argument: string }> => {
    const res = await gw.gql(query, variables, headers);
    const err = res.body.errors?.[0];
    expect(err?.extensions?.code).toBe('BAD_USER_INPUT');
    return { message: err.message, argument: err.extensions.argument };
  };
  const CREATE = `mutation($i: CreateVolumeInput!) { createVolume(input: $i) { volume { id } } }`;
  const DELETE = `mutation($i: DeleteVolumeInput!) { deleteVolume(input: $i) { deletedId } }`;
  const SNAPSHOT = `mutation($i: CreateVolumeSnapshotInput!) { createVolumeSnapshot(input: $i) { snapshot { id } } }`;
  const nomadVolume = (): string => gid(['Volume', 'east', 'default', 'vol-000']);
  const osVolume = (): string => gid(['Volume', 'os', os.demo, os.sim.seedVolume({ project: 'demo', name: 'kept' })]);

  it('should place Nomad’s fields under input', async () => {
    const nomadPart = { nativeId: 'n1', plugin: 'aws-ebs0', capabilities: CAPABILITIES };
    expect(
      await refusal(CREATE, { i: { backend: 'east', name: 'n1', description: 'd', nomad: nomadPart } }, nomad),
    ).toEqual({
      message: 'Nomad volumes have no description or metadata; use input.nomad.parameters or input.nomad.context',
      argument: 'input.description',
    });
    expect(
      await refusal(
        CREATE,
        { i: { backend: 'east', name: 'n1', nomad: { ...nomadPart, secrets: [{ key: 'k', value: 'a,b' }] } } },
        nomad,
      ),
    ).toEqual({
      message: 'input.nomad.secrets[0].value must hold no ",": Nomad splits X-Nomad-CSI-Secrets on it',
      argument: 'input.nomad.secrets[0].value',
    });
    expect(
      await refusal(
        CREATE,
        { i: { backend: 'east', name: 'n1', sizeBytes: 2048, maxSizeBytes: 1024, nomad: nomadPart } },
        nomad,
      ),
    ).toEqual({
      message: 'input.sizeBytes must not exceed the maximum size',
      argument: 'input.sizeBytes',
    });
    expect(await refusal(DELETE, { i: { volumeId: nomadVolume(), cascade: true } }, nomad)).toEqual({
      message: 'cascade and force are OpenStack options; Nomad has no such delete',
      argument: 'input.cascade',
    });
    expect(await refusal(SNAPSHOT, { i: { volumeId: nomadVolume(), name: 's', force: true } }, nomad)).toEqual({
      message: 'force is an OpenStack option; Nomad snapshots in-use volumes as the plugin allows',
      argument: 'input.force',
    });
    expect(await refusal(SNAPSHOT, { i: { volumeId: nomadVolume(), name: 's', plugin: '..' } }, nomad)).toEqual({
      message: 'input.plugin must not be "." or contain ".." (a dot segment would change the backend path)',
      argument: 'input.plugin',
    });
    expect(sim.requests().filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('should place OpenStack’s fields under input, and a listing’s under its arguments', async () => {
    expect(await refusal(CREATE, { i: { backend: 'os', name: 'x' } }, member)).toEqual({
      message:
        'creating an OpenStack volume needs input.sizeBytes or input.sizeGiB (or input.cinder.snapshotId or sourceVolumeId)',
      argument: 'input.sizeBytes',
    });
    expect(
      await refusal(
        CREATE,
        { i: { backend: 'os', name: 'x', cinder: { snapshotId: gid(['Snapshot', 'os', os.demo, 'not-a-uuid']) } } },
        member,
      ),
    ).toEqual({
      message: 'input.cinder.snapshotId (native id) must be an OpenStack snapshot id (a UUID such as 3f2a…-…)',
      argument: 'input.cinder.snapshotId (native id)',
    });
    // A part of the id that is no identifier is placed under input as well (it was named `cinder.snapshotId (scope)`).
    expect(
      await refusal(
        CREATE,
        {
          i: {
            backend: 'os',
            name: 'x',
            cinder: { snapshotId: gid(['Snapshot', 'os', '..', '3f2a0000-0000-4000-8000-000000000001']) },
          },
        },
        member,
      ),
    ).toEqual({
      message:
        'input.cinder.snapshotId (scope) must not be "." or contain ".." (a dot segment would change the backend path)',
      argument: 'input.cinder.snapshotId (scope)',
    });
    expect(await refusal(DELETE, { i: { volumeId: osVolume(), secrets: [{ key: 'k', value: 'v' }] } }, member)).toEqual(
      { message: 'secrets are a Nomad option; OpenStack deletes need none', argument: 'input.secrets' },
    );
    expect(
      await refusal(
        SNAPSHOT,
        { i: { volumeId: osVolume(), name: 's', parameters: [{ key: 'k', value: 'v' }] } },
        member,
      ),
    ).toEqual({ message: 'plugin and parameters are Nomad options', argument: 'input' });
    expect(
      await refusal(
        `mutation($i: MigrateCinderVolumeInput!) { migrateCinderVolume(input: $i) { operation { id } } }`,
        { i: { volumeId: osVolume() } },
        { 'x-auth-token': os.adminToken },
      ),
    ).toEqual({
      message: 'migrating needs input.host or input.cluster',
      argument: 'input.host',
    });
    expect(
      await refusal(`{ volumeSnapshots(backend: "os", filter: { plugin: "aws-ebs0" }) { nodes { id } } }`, {}, member),
    ).toEqual({
      message: 'a plugin is a Nomad notion; OpenStack snapshots list by project',
      argument: 'filter.plugin',
    });
  });
});
