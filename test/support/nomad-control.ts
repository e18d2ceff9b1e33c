/** The Nomad simulator's HTTP control API, for tests whose simulator is driven over the wire. */

/** Places an allocation claiming `volumeId` (write, single-node-writer) in `namespace` through `POST /_sim/allocations`; answers the allocation id. */
export async function claimOverHttp(
  nomadUrl: string,
  namespace: string,
  volumeId: string,
  jobId: string,
): Promise<string> {
  const res = await fetch(`${nomadUrl}/_sim/allocations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      namespace,
      jobId,
      nodeId: 'node-1111',
      volumes: [{ volumeId, mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' }],
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}
