/**
 * Helpers for the Nomad simulator tests: raw HTTP calls (undici `request`, which sends no
 * Accept-Encoding, so bodies arrive as the simulator wrote them) and fixture loading.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { NomadSimulator, type NomadSimulatorOptions } from '../../simulators/nomad';

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

export const MGMT = 'root-secret';

/** A simulator with a management token, one node, an EBS-like and a hostpath plugin. */
export async function startSim(opts: NomadSimulatorOptions = {}): Promise<{ sim: NomadSimulator; url: string }> {
  const sim = new NomadSimulator(opts);
  sim.addToken({ secret: MGMT, management: true });
  sim.addNode({ id: 'fb2170a8-257d-3c64-b14d-bc06cc94e34c', name: 'client-1' });
  sim.addNode({ id: '5c5830d0-cc64-11ef-a293-4f03e55969ea', name: 'client-2' });
  sim.addPlugin({
    id: 'aws-ebs0',
    provider: 'ebs.csi.aws.com',
    version: 'v1.38.1',
    controllerRequired: true,
    controllersHealthy: 1,
    topology: { 'topology.ebs.csi.aws.com/zone': 'us-east-1a' },
  });
  sim.addPlugin({ id: 'hostpath', provider: 'hostpath.csi.k8s.io', version: 'v1.14.0', controllerRequired: false });
  const url = await sim.listen();
  return { sim, url };
}

export const NODE1 = 'fb2170a8-257d-3c64-b14d-bc06cc94e34c';
export const NODE2 = '5c5830d0-cc64-11ef-a293-4f03e55969ea';

/** Keys of an object, in order. */
export function keys(o: unknown): string[] {
  return Object.keys(o as object);
}

