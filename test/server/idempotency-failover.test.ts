/**
 * Idempotency keys through a Redis Sentinel failover that lost the tail (issue 30): two gateways on
 * a primary watched by three real sentinels, the OpenStack simulator behind them. Gateway A
 * creates with a key while the replica is cut off, so its claim and result live only on the
 * primary; the primary dies and the cut-off replica is promoted without them. The issue-17 rules
 * must hold as after a restart: A finds its own write missing from the new primary's history,
 * replaces the marker and writes its keys back; B, which lost nothing of its own, refuses keys it
 * does not hold until it has seen that; A writes back the operation record it finished in the
 * tail; a retry on B answers A's first result, and nothing is created twice.
 */
import {
  disposeAll,
  startGatewayFor,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';
import { startSentinelSet, type SentinelSetUnderTest } from '../support/redis-sentinel';
import { until } from '../support/until';
import { count, CREATE, finalState } from './idempotency-helpers';

describe('idempotency keys through a Sentinel failover that lost the tail', () => {
  let set: SentinelSetUnderTest;
  let os: OpenStackUnderTest;
  let a: GatewayUnderTest;
  let b: GatewayUnderTest;
  let auth: Record<string, string>;
  /** Volume creates the simulator received. */
  const posts = (): number =>
    count(
      os.sim.requests().filter((r) => r.service === 'cinder'),
      'POST',
      '/volumes',
    );

  beforeAll(async () => {
    [set, os] = await Promise.all([startSentinelSet(), startOpenStack({ delays: { createMs: 30 } })]);
    const options = {
      operationOptions: { pollMs: 20, maxPollMs: 50 },
      redis: {
        sentinel: {
          sentinels: set.sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })),
          masterName: set.masterName,
          tls: false,
        },
        keyPrefix: 'failover:',
      },
    };
    a = await startGatewayFor([os.backend('os')], options);
    b = await startGatewayFor([os.backend('os')], options);
    auth = { 'x-auth-token': os.demoToken };
  }, 90_000);
  afterAll(async () => {
    await disposeAll();
    await set?.stop();
  });

  it('should write back the lost key, refuse unknown keys meanwhile, and answer a retry on the other gateway with the first result', async () => {
    const input = (key: string, name: string) => ({ i: { backend: 'os', name, sizeGiB: 1, idempotencyKey: key } });
    expect((await a.gql(CREATE, input('before', 'kept-volume'), auth)).body.errors).toBeUndefined();
    await set.cutOffReplicas();
    const first = await a.gql(CREATE, input('in-tail', 'tail-volume'), auth);
    expect(first.body.errors).toBeUndefined();
    const created = posts();
    // Finished before the primary dies, so only the tail holds its final record: A's running drive
    // no longer writes it, and it comes back only from A's write-back of what Redis lost (before
    // that write-back, the kill raced the operation's end and this test failed whenever the end won).
    expect(await finalState(a, first.body.data.createVolume.operation.id, auth)).toBe('SUCCEEDED');
    const from = await set.primaryPort();
    await set.nodes.find((n) => n.port === from)!.kill();
    await set.failedOver(from);
    // Until A's write-back is in, B must not run the create again: refused (retryable) or answered.
    let answered: any = null;
    const refusals: unknown[] = [];
    await until(
      async () => {
        const r = await b.gql(CREATE, input('in-tail', 'tail-volume'), auth);
        if (r.body.errors) refusals.push({ ...r.body.errors[0].extensions, message: r.body.errors[0].message });
        else answered = r.body.data;
        return answered !== null;
      },
      () => `B to answer the retry (refusals: ${JSON.stringify(refusals.slice(-2))})`,
      45_000,
      250,
    );
    expect(answered.createVolume.volume.id).toBe(first.body.data.createVolume.volume.id);
    expect(posts()).toBe(created);
    // Refused while Redis fails over and until the key is back (retryable), or answered with the id
    // created when the operation record is not back yet: never a second create.
    for (const r of refusals)
      expect([r, 'BACKEND_UNAVAILABLE or the first id']).toEqual(
        expect.arrayContaining([
          expect.objectContaining(
            (r as any).code === 'NOT_FOUND'
              ? { createdId: first.body.data.createVolume.volume.id }
              : { code: 'BACKEND_UNAVAILABLE', retryable: true },
          ),
        ]),
      );
    // A key nobody holds: refused while the replicas recover (the loss window), never created twice.
    const fresh = await b.gql(CREATE, input('after', 'new-volume'), auth);
    expect(fresh.body.errors?.[0]?.extensions).toMatchObject({
      code: 'BACKEND_UNAVAILABLE',
      retryAfterSeconds: expect.any(Number),
    });
    expect(posts()).toBe(created);
  }, 120_000);
});
