/**
 * A gateway child process exporting its spans (OTLP/HTTP JSON, batches every 100 ms) to a real
 * receiver of its own, over a Nomad simulator (`east`, with a service token: its watcher runs) and
 * an OpenStack simulator (`os`, with a service user: its watcher polls every 100-200 ms while
 * anyone subscribes), probing both every 200 ms.
 */
import type { NomadSimulator } from '../../simulators/nomad';
import { MGMT, OS, type OpenStackUnderTest } from '../support/harness';
import { startGatewayProcess } from '../support/gateway-process';
import { spansIn, startOtlpReceiver, type OtlpReceiver, type OtlpSpan } from '../support/otlp-receiver';

export interface TracedGateway {
  otlp: OtlpReceiver;
  gateway: ReturnType<typeof startGatewayProcess>;
  /** Its GraphQL URL. */
  url: string;
  /** Every span received so far. */
  spans(): OtlpSpan[];
  /** Stops the gateway, then the receiver. */
  stop(): Promise<void>;
}

/** Starts it with `env` added, and waits until it serves. */
export async function startTracedGateway(
  sim: NomadSimulator,
  os: OpenStackUnderTest,
  env: Record<string, string> = {},
): Promise<TracedGateway> {
  const otlp = await startOtlpReceiver();
  const gateway = startGatewayProcess(
    {
      LOG_LEVEL: 'warn',
      GATEWAY_BACKENDS: `east=nomad@${sim.url},os=openstack@${os.backend().url}`,
      GATEWAY_BACKEND_EAST_TOKEN: MGMT,
      GATEWAY_BACKEND_OS_USERNAME: OS.adminUser,
      GATEWAY_BACKEND_OS_PASSWORD: OS.adminPassword,
      GATEWAY_BACKEND_OS_PROJECT_NAME: 'demo',
      GATEWAY_BACKEND_OS_WATCH_FAST_MS: '100',
      GATEWAY_BACKEND_OS_WATCH_SLOW_MS: '200',
      READINESS_PROBE_INTERVAL_MS: '200',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      ...env,
    },
    { withoutInheritedOtel: true },
  );
  const url = await gateway.serving();
  return {
    otlp,
    gateway,
    url,
    spans: () => otlp.requests.flatMap(spansIn),
    stop: async () => {
      await gateway.stop();
      otlp.close();
    },
  };
}
