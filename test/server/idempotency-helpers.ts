/**
 * What the idempotency tests share: the create mutation, and reading a refusal, the simulators'
 * request logs and an operation's end.
 */
import { waitOperation, type GatewayUnderTest } from '../support/harness';

/** createVolume, answering the volume and its operation. */
export const CREATE =
  'mutation($i: CreateVolumeInput!) { createVolume(input: $i) { volume { id namespace name } operation { id kind } } }';

/** Waits `ms`: a poll's step. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** The first error's extensions (a failed create answers no data). */
export const failure = (res: { body: any }): Record<string, unknown> => {
  expect(res.body.data).toBeNull();
  return res.body.errors[0].extensions;
};
/** Requests `sim` saw that match `method` and end with `suffix`. */
export const count = (requests: Array<{ method: string; path: string }>, method: string, suffix: string): number =>
  requests.filter((r) => r.method === method && r.path.endsWith(suffix)).length;

/** Reads `volumeOperation(id)` until it is terminal (at most 15 s); its last state. */
export async function finalState(gw: GatewayUnderTest, id: string, headers: Record<string, string>): Promise<string> {
  return (await waitOperation(gw, id, headers)).state;
}
