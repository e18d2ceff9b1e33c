/**
 * The benchmark's GraphQL (schema v2). Each asks for the same data as its schema v1 form, so
 * figures before and after the v2 change compare:
 * - `volume(id)` with its attachments' states (v1 `capacityBytes` is `sizeBytes`);
 * - `volumes(first: 100)` with attachments and their allocations (v1 `NomadAllocation { id jobId nodeId }`
 *   is `VolumeAllocationConsumer { allocationId jobId node { id } }`);
 * - OpenStack `volumes(first: 100)` with attachments and their servers (v1 `sizeGiB` is in
 *   `CinderVolumeDetails`; v1 `OpenStackServer { id name status }` is `VolumeServerConsumer { serverId name status }`).
 */

/** Variables: `id`, a volume's global id. */
export const ONE_VOLUME = `query($id: ID!) { volume(id: $id) { id name status sizeBytes attachments { state } } }`;

export const NOMAD_LIST = `{ volumes(first: 100) { nodes { id name status sizeBytes attachments { state access consumer { ... on VolumeAllocationConsumer { allocationId jobId node { id } } } } } } }`;

export const OPENSTACK_LIST = `{ volumes(first: 100) { nodes { id name status details { ... on CinderVolumeDetails { sizeGiB } } attachments { state device consumer { ... on VolumeServerConsumer { serverId name status } } } } } }`;

/**
 * The plain list of 100 (one backend call on either backend without a watcher): the end-to-end
 * list scenario and the list's CPU-per-request figure. Valid on schema v1 and v2 alike, so older
 * commits run it unchanged (bench/cpu-per-request.ts).
 */
export const PLAIN_LIST = `{ volumes(first: 100) { nodes { id name status } } }`;
