import { encodeGlobalId } from '../../adapters/contract/ids';
import { DEMO_OPENSTACK_TOKEN } from '../../simulators/openstack/demo-backend';
import { startGatewayProcess as startDemoProcess } from '../support/gateway-process';

describe('process lifecycle', () => {
  it('should finish an in-flight request on SIGTERM, then exit 0', async () => {
    const { child, output, exited, waitFor } = startDemoProcess({ LOG_FORMAT: 'json' });
    try {
      // The "gateway started" log line (with the backends' URLs) follows the "ready at" banner.
      await waitFor(/gateway started/);
      const out = output();
      const url = /ready at (\S+)/.exec(out)![1]!;
      const simUrl = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(
        out
          .split('\n')
          .find((l) => l.includes('gateway started'))!
          .replace(/.*"backends":\[/, ''),
      )![1]!;
      // Slow the backend down so the request is still in flight when the signal arrives.
      await fetch(`${simUrl}/_sim/latency`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ms: 800 }),
      });
      const inFlight = fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ volumes(first: 2) { nodes { nativeId } } }' }),
      }).then((r) => r.json());
      await new Promise((r) => setTimeout(r, 200));
      child.kill('SIGTERM');
      const body = await inFlight;
      expect(body.errors).toBeUndefined();
      expect(body.data.volumes.nodes).toHaveLength(2);
      const [code] = await exited;
      expect(code).toBe(0);
      expect(output()).toContain('"msg":"shutting down"');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it("should stop a tracked operation's poller on SIGTERM and still exit 0", async () => {
    const { child, output, exited, waitFor } = startDemoProcess({ LOG_FORMAT: 'json' });
    try {
      await waitFor(/Keystone at/);
      const out = output();
      const url = /ready at (\S+)/.exec(out)![1]!;
      const keystone = new URL(/Keystone at (\S+)/.exec(out)![1]!);
      // Demo region: db-data (…02) on server db-1 (…01). Its detach will stay `detaching`.
      const projectId = 'c0bcf3baf0154b5bb4dd2f8ed959cdd6';
      const volumeId = 'd0000000-0000-4000-8000-000000000002';
      const stuck = await fetch(`${keystone.origin}/_sim/faults/detach`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ volumeId }),
      });
      expect(stuck.status).toBe(200);
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-auth-token': DEMO_OPENSTACK_TOKEN },
        body: JSON.stringify({
          query:
            'mutation($v: ID!, $s: ID!) { detachVolume(input: { volumeId: $v, target: { server: { serverId: $s } } }) { operation { id state } } }',
          variables: {
            v: encodeGlobalId({ kind: 'Volume', backend: 'openstack', scope: projectId, nativeId: volumeId }),
            s: 'a0000000-0000-4000-8000-000000000001',
          },
        }),
      });
      const body = await res.json();
      expect(body.errors).toBeUndefined();
      expect(['PENDING', 'RUNNING']).toContain(body.data.detachVolume.operation.state);
      child.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
      expect(output()).toContain('"msg":"shutting down"');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
