/** The `hive-gateway` CLI, unmodified, as a child process serving a supergraph of this gateway and the compute subgraph. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedPortUrl, type GatewayUnderTest } from '../support/harness';
import { until } from '../support/until';
import type { ComputeSubgraph } from './compute-subgraph';
import { composeSupergraph } from './supergraph';

const ROOT = join(__dirname, '..', '..');
const HIVE_BIN = join(ROOT, 'node_modules', '@graphql-hive', 'gateway', 'dist', 'bin.js');

/** A running hive-gateway. */
export interface HiveProcess {
  /** Its GraphQL endpoint. */
  url: string;
  /** Its stdout and stderr so far. */
  log(): string;
  /** SIGTERM (SIGKILL after 10 s), then removes the supergraph file. */
  stop(): Promise<void>;
}

/**
 * Composes the supergraph from `gw`'s own SDL (`_service { sdl }`) and `compute`, starts
 * hive-gateway on it with `config` (a `gateway.config.ts` path), and waits for its healthcheck.
 */
export async function startHiveGateway(
  gw: GatewayUnderTest,
  compute: ComputeSubgraph,
  config: string,
): Promise<HiveProcess> {
  const sdl = (await gw.gql('{ _service { sdl } }')).body.data._service.sdl as string;
  const composed = composeSupergraph([
    { name: 'volumes', url: gw.gateway.url, typeDefs: sdl },
    { name: 'compute', url: compute.url, typeDefs: compute.typeDefs },
  ]);
  expect(composed.errors).toEqual([]);
  const work = mkdtempSync(join(tmpdir(), 'hive-gateway-test-'));
  writeFileSync(join(work, 'supergraph.graphql'), composed.supergraphSdl!);

  const port = new URL(await closedPortUrl()).port;
  const hive = spawn(
    process.execPath,
    [HIVE_BIN, 'supergraph', join(work, 'supergraph.graphql'), '-c', config, '--host', '127.0.0.1', '--port', port],
    {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let log = '';
  hive.stdout.on('data', (d: Buffer) => (log += d.toString()));
  hive.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const stop = async (): Promise<void> => {
    if (hive.exitCode === null) {
      const exited = new Promise((r) => hive.once('exit', r));
      hive.kill('SIGTERM');
      let fuse: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (fuse = setTimeout(r, 10_000)))]);
      clearTimeout(fuse);
      if (hive.exitCode === null) hive.kill('SIGKILL');
    }
    rmSync(work, { recursive: true, force: true });
  };
  try {
    await until(
      async () => {
        if (hive.exitCode !== null) throw new Error(`hive-gateway exited ${hive.exitCode}:\n${log}`);
        return fetch(`http://127.0.0.1:${port}/healthcheck`).then(
          (r) => r.ok,
          () => false,
        );
      },
      'hive-gateway to listen',
      60_000,
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return { url: `http://127.0.0.1:${port}/graphql`, log: () => log, stop };
}
