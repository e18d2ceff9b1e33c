/**
 * Helpers for the Nomad simulator tests: raw HTTP calls (undici `request`, which sends no
 * Accept-Encoding, so bodies arrive as the simulator wrote them) and fixture loading.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import type { NomadSimulator, NomadSimulatorOptions } from '../../simulators/nomad';
import { NODE1 } from '../support/constants';
import { nomadSimulator } from '../support/harness';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
}

export interface CallOptions {
  token?: string;
  body?: string | object;
  headers?: Record<string, string>;
}

/** One HTTP call; returns status, lower-cased headers and the body text. */
export async function call(base: string, method: string, p: string, opts: CallOptions = {}): Promise<RawResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token !== undefined) headers['x-nomad-token'] = opts.token;
  let body: string | undefined;
  if (opts.body !== undefined) body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  const res = await request(base + p, { method: method as 'GET', headers, body });
  const text = await res.body.text();
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return { status: res.statusCode, headers: out, text };
}

/** Parses JSON the test cares about structurally (not for exact big integers). */
export function json<T = any>(r: RawResponse): T {
  return JSON.parse(r.text) as T;
}

const FIXTURES = path.resolve(__dirname, '../fixtures/upstream/nomad');

/** Loads `test/fixtures/upstream/nomad/<name>` (a copy of the shared fixtures). */
export function fixture<T = any>(name: string): T {
  return JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8')) as T;
}

export { MGMT, NODE1, NODE2 } from '../support/constants';

/** The harness's standard simulator ({@link nomadSimulator}: ACLs on, its tokens, nodes and plugins), listening. */
export async function startSim(opts: NomadSimulatorOptions = {}): Promise<{ sim: NomadSimulator; url: string }> {
  const sim = nomadSimulator(opts);
  const url = await sim.listen();
  return { sim, url };
}

/**
 * {@link startSim} with the wire tests' volumes: volume-id1 with every optional field set (mount
 * options, a secret, context, capabilities, topologies) and a write claim by one allocation on NODE1;
 * volume-id2 with its ids and plugin alone.
 */
export async function startWireSim(): Promise<{ sim: NomadSimulator; url: string }> {
  const { sim, url } = await startSim();
  sim.seedVolume({
    ID: 'volume-id1',
    Name: 'volume id1',
    PluginID: 'aws-ebs0',
    ExternalID: 'vol-abcdef',
    Capacity: 10737418240,
    RequestedCapacityMin: 10737418240,
    RequestedCapacityMax: 21474836480,
    MountOptions: { FSType: 'ext4', MountFlags: ['noatime'] },
    Secrets: { token: 'hunter2' },
    Context: { partition: '0' },
    RequestedCapabilities: [
      { AttachmentMode: 'file-system', AccessMode: 'single-node-writer' },
      { AttachmentMode: 'block-device', AccessMode: 'single-node-writer' },
    ],
    RequestedTopologies: { Required: [{ Segments: { 'topology.ebs.csi.aws.com/zone': 'us-east-1a' } }] },
  });
  sim.seedVolume({ ID: 'volume-id2', Name: 'volume id2', PluginID: 'aws-ebs0', ExternalID: 'vol-123456' });
  sim.placeAllocation({
    id: 'a8198d79-cfdb-6593-a999-1e9adabcba2e',
    jobId: 'example',
    taskGroup: 'cache',
    nodeId: NODE1,
    volumes: [{ volumeId: 'volume-id1', mode: 'write' }],
  });
  return { sim, url };
}

/** Keys of an object, in order. */
export function keys(o: unknown): string[] {
  return Object.keys(o as object);
}
