/**
 * The GraphQL over HTTP audit suite (graphql-http `serverAudits`) against our /graphql.
 * Every MUST passes; SHOULD/MAY results are listed below, deliberate deviations documented in
 * docs/conformance.md.
 */
import { serverAudits } from 'graphql-http';
import type { NomadSimulator } from '../../simulators/nomad';
import { disposeAll, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';

let sim: NomadSimulator;
let gw: GatewayUnderTest;

beforeAll(async () => {
  sim = await startNomad();
  seedVolumes(sim, 1);
  gw = await startGatewayFor([{ id: 'east', url: sim.url }]);
});
afterAll(disposeAll);

const audits = serverAudits({ url: () => gw.gateway.url, fetchFn: fetch });

describe('GraphQL over HTTP audits', () => {
  for (const audit of audits) {
    it(audit.name, async () => {
      const result = await audit.fn();
      if (audit.name.startsWith('MUST')) {
        expect({ id: audit.id, status: result.status, reason: 'reason' in result ? result.reason : undefined }).toEqual(
          { id: audit.id, status: 'ok', reason: undefined },
        );
      } else {
        // Recorded, not required: see docs/conformance.md.
        expect(['ok', 'warn', 'notice', 'error']).toContain(result.status);
        results.push({ id: audit.id, name: audit.name, status: result.status });
      }
    });
  }
});

const results: Array<{ id: string; name: string; status: string }> = [];
afterAll(() => {
  const notOk = results.filter((r) => r.status !== 'ok');
  // Printed so a reader of the test log sees the deviations the docs describe.
  if (notOk.length > 0)
    console.log(
      `graphql-http SHOULD/MAY audits not ok (${notOk.length}/${results.length}):\n${notOk.map((r) => `  ${r.id} ${r.status}: ${r.name}`).join('\n')}`,
    );
});
