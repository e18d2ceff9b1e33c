/**
 * Helpers for the OpenStack simulator tests: raw HTTP calls (undici `request`), the recorded
 * transcripts of test/fixtures/recorded parsed into status/headers/body, and a "shape" that
 * masks ids, times, tokens and hosts so a simulator answer can be compared with a recording
 * key-for-key (order included) and value-for-value otherwise.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import type { OpenStackSimulator, OpenStackSimulatorOptions, OpenStackUrls } from '../../simulators/openstack';
import { FAST, OS } from '../support/constants';
import { openStackSimulator } from '../support/harness';

export interface RawResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  text: string;
  json: any;
}

export interface CallOptions {
  token?: string;
  /** `volume 3.27`, `compute 2.79`… (OpenStack-API-Version). */
  mv?: string;
  body?: string | object;
  headers?: Record<string, string>;
}

/** One HTTP call; headers lower-cased (repeated ones joined with ", "). */
export async function call(url: string, method: string, opts: CallOptions = {}): Promise<RawResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token !== undefined) headers['x-auth-token'] = opts.token;
  if (opts.mv !== undefined) headers['openstack-api-version'] = opts.mv;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await request(url, { method: method as 'GET', headers, body });
  const text = await res.body.text();
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, statusText: res.statusText ?? '', headers: out, text, json };
}

export interface Recorded {
  title: string;
  status: number;
  reason: string;
  headers: Record<string, string>;
  body: string;
  json: any;
}

const RECORDED = path.resolve(__dirname, '../fixtures/recorded');

/** The exchange titled `### <title>` in `test/fixtures/recorded/<file>`. */
export function recorded(file: string, title: string): Recorded {
  const text = readFileSync(path.join(RECORDED, file), 'utf8');
  const start = text.indexOf(`### ${title}\n`);
  if (start < 0) throw new Error(`no exchange "${title}" in ${file}`);
  const next = text.indexOf('\n### ', start + 4);
  const section = text.slice(start, next < 0 ? undefined : next);
  const status = /\*\*HTTP\/1\.1 (\d+) ([^*]+?)\*\*/.exec(section);
  if (!status) throw new Error(`no status line in "${title}"`);
  const blocks = [...section.slice(status.index).matchAll(/```(?:json)?\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const headers: Record<string, string> = {};
  for (const line of (blocks[0] ?? '').split('\n')) {
    const i = line.indexOf(': ');
    if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 2);
  }
  const raw = (blocks[1] ?? '').replace(/\n+$/, '');
  const body = raw === '(empty body)' ? '' : raw;
  let json: unknown;
  try {
    json = body === '' ? undefined : JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { title, status: Number(status[1]), reason: status[2]!.replace(/\s*\(.*$/, '').trim(), headers, body, json };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HEX = /^[0-9a-f]{32}$/;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z?$/;

/** Masks volatile values: ids, times, tokens, URLs' host:port and ids; keeps keys and order. */
export function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shape);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === 'audit_ids' ? '<audit-ids>' : shape(x)]));
  if (typeof v !== 'string') return v;
  if (UUID.test(v)) return '<uuid>';
  if (HEX.test(v)) return '<hex>';
  if (/^[0-9a-f]{56}$/.test(v)) return '<host-id>';
  if (TIME.test(v)) return v.endsWith('Z') ? '<timeZ>' : v.includes('.') ? '<time.us>' : '<time>';
  if (v.startsWith('gAAAAA')) return '<token>';
  if (/^req-/.test(v)) return '<request-id>';
  return v
    .replace(/^https?:\/\/[^/]+/, '<base>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/[0-9a-f]{32}/g, '<hex>');
}

/** The key order of an object. */
export function keys(o: unknown): string[] {
  return Object.keys(o as object);
}

/**
 * Asserts a simulator answer against a recording: status, the named headers, and the body —
 * JSON compared after `shape()` including key order, anything else byte for byte.
 */
export function expectRecorded(
  res: RawResponse,
  rec: Recorded,
  headerNames: string[] = ['content-type', 'openstack-api-version', 'vary'],
): void {
  expect({ title: rec.title, status: res.status }).toEqual({ title: rec.title, status: rec.status });
  for (const h of headerNames)
    expect({ title: rec.title, header: h, value: res.headers[h] }).toEqual({
      title: rec.title,
      header: h,
      value: rec.headers[h],
    });
  if (rec.json === undefined) {
    expect({ title: rec.title, body: res.text.trimEnd() }).toEqual({ title: rec.title, body: rec.body });
    return;
  }
  expect({ title: rec.title, body: JSON.stringify(shape(res.json)) }).toEqual({
    title: rec.title,
    body: JSON.stringify(shape(rec.json)),
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export { FAST } from '../support/constants';

/** The connector in the cinder-21 recordings (os-initialize_connection, os-terminate_connection, attachments). */
export const CONNECTOR = {
  initiator: 'iqn.1993-08.org.debian:01:realcinder',
  ip: '127.0.0.1',
  platform: 'x86_64',
  host: 'fakehost',
  os_type: 'linux',
  multipath: false,
  do_local_attach: false,
};

export interface Cloud {
  sim: OpenStackSimulator;
  urls: OpenStackUrls;
  /** Project ids by name. */
  p: { demo: string; other: string; admin: string };
  /** Tokens: demo member, other member, admin (project admin), demo reader. */
  t: { demo: string; other: string; admin: string; reader: string };
  /** `${cinderUrl}/v3/<project>` for demo / other / admin. */
  cinder: { demo: string; other: string; admin: string };
  nova: string;
}

/**
 * The harness's standard simulator ({@link openStackSimulator}: projects demo/other/admin, users
 * demo/other/admin/viewer) with tokens for them. Pools as recorded (`real-cinder@fake#fake`) and
 * no extra volume types, so admin views and `GET /types` match the transcripts.
 */
export async function startCloud(opts: OpenStackSimulatorOptions = {}): Promise<Cloud> {
  const { sim, projects: p } = openStackSimulator({
    pools: ['real-cinder@fake#fake', 'real-cinder@fake2#fake2'],
    volumeTypes: [],
    delays: FAST,
    ...opts,
  });
  const urls = await sim.listen();
  const t = {
    demo: sim.issueToken({ user: OS.demoUser, project: 'demo' }),
    other: sim.issueToken({ user: OS.otherUser, project: 'other' }),
    admin: sim.issueToken({ user: OS.adminUser, project: 'admin' }),
    reader: sim.issueToken({ user: OS.viewerUser, project: 'demo' }),
  };
  const c = (id: string): string => `${urls.cinderUrl}/v3/${id}`;
  return {
    sim,
    urls,
    p,
    t,
    cinder: { demo: c(p.demo), other: c(p.other), admin: c(p.admin) },
    nova: `${urls.novaUrl}/v2.1`,
  };
}

/**
 * A server booted from a volume, as in nova-26/00: a bootable 1 GiB volume of project demo with the
 * image's metadata, and a demo server with it as its root volume. Returns both ids.
 */
export function seedBootedServer(
  c: Cloud,
  names: { server: string; volume: string },
): { server: string; bootVol: string } {
  const bootVol = c.sim.seedVolume({
    project: 'demo',
    name: names.volume,
    size: 1,
    bootable: true,
    image_metadata: { min_disk: '0', min_ram: '0', disk_format: 'raw', container_format: 'bare' },
  });
  return { server: c.sim.seedServer({ project: 'demo', name: names.server, rootVolumeId: bootVol }), bootVol };
}

/** The request id a Nova answer names, in both of its headers. */
export function requestIdOf(res: RawResponse): string {
  expect(res.headers['x-compute-request-id']).toBe(res.headers['x-openstack-request-id']);
  return res.headers['x-openstack-request-id']!;
}
