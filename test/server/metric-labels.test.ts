/**
 * Operation names an attacker chooses must not fill the metric labels (issue 17, item 12).
 * Against a real gateway over HTTP, with a Nomad simulator (ACLs on; anonymous callers may read
 * `default`, so anonymous calls get real answers) and an OpenStack simulator: only trusted
 * documents and callers whose credential a backend accepted get a label of their own.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadHttpEdgeConfig } from '../../server/http/config';
import { MAX_OPERATION_LABELS } from '../../server/operation-labels';
import {
  MGMT,
  disposeAll,
  seedVolumes,
  startGatewayFor,
  startNomad,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';

/** More names than there are label slots. */
const FLOOD = MAX_OPERATION_LABELS + 20;
const LIST = (name: string): string => `query ${name} { volumes(first: 1) { nodes { id } } }`;
const ANONYMOUS: Record<string, string> = {};
const REJECTED = { 'x-nomad-token': 'junk-token-0000', 'x-auth-token': 'junk-keystone-token' };

let nomadUrl: string;
let os: OpenStackUnderTest;

/** The operation series in /metrics: sample lines of both operation metrics, and the distinct `operation` values. */
async function series(g: GatewayUnderTest): Promise<{ lines: number; names: Set<string> }> {
  const text = await fetch(g.gateway.url.replace('/graphql', '/metrics')).then((r) => r.text());
  const lines = text.split('\n').filter((l) => l.startsWith('gateway_graphql_operation'));
  return {
    lines: lines.length,
    names: new Set(lines.map((l) => /operation="([^"]*)"/.exec(l)?.[1]).filter((n): n is string => n !== undefined)),
  };
}

/** Sends `FLOOD` operations with fresh random names, 8 at a time; each must have run (200, no refusal). */
async function flood(gw: GatewayUnderTest, headers: Record<string, string>): Promise<void> {
  const names = Array.from({ length: FLOOD }, () => `R12_${randomBytes(6).toString('hex')}`);
  for (let i = 0; i < names.length; i += 8) {
    const answers = await Promise.all(names.slice(i, i + 8).map((n) => gw.gql(LIST(n), undefined, headers)));
    for (const a of answers) expect(a.status).toBe(200);
  }
}

/** A gateway of its own (label slots are per process) whose `other` series exist already: what must not grow is the set of names. */
async function freshGateway(headers: Record<string, string>): Promise<GatewayUnderTest> {
  const gw = await startGatewayFor([{ id: 'east', url: nomadUrl }, os.backend('os')]);
  await gw.gql(LIST('WarmUp'), undefined, headers);
  return gw;
}

/** Real callers, with a Nomad token and a Keystone token, still get labels of their own. */
async function expectRealCallersLabelled(gw: GatewayUnderTest): Promise<void> {
  const nomad = await gw.gql(LIST('RealNomadCaller'), undefined, { 'x-nomad-token': MGMT });
  expect(nomad.body.errors).toBeUndefined();
  const cinder = await gw.gql(
    'query RealCinderCaller { volumes(first: 1, filter: { backends: ["os"] }) { nodes { id } } }',
    undefined,
    { 'x-auth-token': os.demoToken },
  );
  expect(cinder.body.errors).toBeUndefined();
  const { names } = await series(gw);
  expect(names).toContain('RealNomadCaller');
  expect(names).toContain('RealCinderCaller');
}

beforeAll(async () => {
  const nomad = await startNomad({ acl: { enabled: true, anonymousRead: ['default'] } });
  seedVolumes(nomad, 2);
  nomadUrl = nomad.url;
  os = await startOpenStack();
});
afterAll(disposeAll);

describe('operation names as metric labels', () => {
  it(`should add no series for ${FLOOD} random names from an anonymous client, though the backend answered it, and still label real callers after`, async () => {
    const gw = await freshGateway(ANONYMOUS);
    const probe = await gw.gql(LIST('AnonymousProbe'), undefined, ANONYMOUS);
    // Nomad let the anonymous caller read `default`: real data, yet no credential was shown.
    expect(probe.body.data.volumes.nodes.length).toBeGreaterThan(0);
    const before = await series(gw);
    await flood(gw, ANONYMOUS);
    const after = await series(gw);
    expect(after).toEqual(before);
    expect([...after.names].filter((n) => n.startsWith('R12_'))).toEqual([]);
    await expectRealCallersLabelled(gw);
  });

  it(`should add no series for ${FLOOD} random names from a client whose tokens the backends reject, and still label real callers after`, async () => {
    const gw = await freshGateway(REJECTED);
    const probe = await gw.gql(LIST('RejectedProbe'), undefined, REJECTED);
    expect(probe.body.errors.map((e: any) => e.extensions.code)).toContain('UNAUTHENTICATED');
    const before = await series(gw);
    await flood(gw, REJECTED);
    const after = await series(gw);
    expect(after).toEqual(before);
    await expectRealCallersLabelled(gw);
  });
});

describe('trusted documents', () => {
  it("should give a trusted document's operation its own label, even from an anonymous client", async () => {
    const body = 'query TrustedBackends { storageBackends { id } }';
    const sha = createHash('sha256').update(body).digest('hex');
    const path = join(mkdtempSync(join(tmpdir(), 'labels-')), 'manifest.json');
    writeFileSync(
      path,
      JSON.stringify({
        format: 'apollo-persisted-query-manifest',
        version: 1,
        operations: [{ id: sha, name: 'TrustedBackends', type: 'query', body }],
      }),
    );
    const trusted = await startGatewayFor([{ id: 'east', url: nomadUrl }], {
      http: { trustedDocuments: loadHttpEdgeConfig({ TRUSTED_DOCUMENTS: path }, {}).trustedDocuments },
    });
    const res = await fetch(trusted.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ documentId: sha }),
    });
    expect(res.status).toBe(200);
    expect((await res.json()).data.storageBackends).toEqual([{ id: 'east' }]);
    expect((await series(trusted)).names).toContain('TrustedBackends');
  });
});
