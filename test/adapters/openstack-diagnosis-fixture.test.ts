/**
 * The OpenStack contract fixture's diagnosis part (adapters/openstack/testing/contract-fixture.ts):
 * each kind `make` makes through the simulator's control API is found by the backend's own checks
 * at once (the fixture's thresholds are 0), on the volume as the service credential reads it.
 */
import type { DiagnosisContext } from '../../adapters/contract/diagnosis';
import type { ContractBackend } from '../contract/fixture';
import { contractFixture } from '../../adapters/openstack/testing/contract-fixture';

let b: ContractBackend;
beforeAll(async () => {
  b = await contractFixture.start();
});
afterAll(() => b.stop());

const ctx = (now: number): DiagnosisContext => ({ now, operationRunning: () => false, firstSeen: () => now });

it('should declare the three OpenStack kinds, and make each so that the checks find it', async () => {
  const d = b.diagnosis!;
  expect([...d.kinds].sort()).toEqual(['ATTACHMENT_DRIFT', 'ERROR_STATE', 'STUCK_TRANSITION']);
  const facet = b.backend.diagnosis!;
  expect(b.backend.capabilities.has('VOLUME_DIAGNOSIS')).toBe(true);
  for (const kind of d.kinds) {
    const ref = await d.make(kind);
    const volume = await b.backend.getVolume(ref, d.service);
    const facts = await facet.readFacts!(d.service);
    const found = facet.checkVolume(volume!, facts, ctx(Date.now() + 1)).map((f) => f.kind);
    expect({ kind, found }).toEqual({ kind, found: [kind] });
  }
});
