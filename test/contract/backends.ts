/**
 * The backends the contract suite runs over: every registered kind (server/kinds/), each by the
 * contract fixture beside its backend (`adapters/<kind>/testing/contract-fixture.ts`, what
 * test/contract/fixture.ts describes): a real backend built the way the server builds it, talking
 * HTTP to its simulator or (memory) holding its data itself. A new kind is here by its registration.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BACKEND_MODULES } from '../../server/kinds';
import type { ContractFixture } from './fixture';

export type { ContractBackend, ContractFixture } from './fixture';

const root = join(__dirname, '..', '..');

/**
 * The contract fixture of a registered kind.
 * @throws Error when the kind has none: every backend runs the contract suite
 */
export function fixtureOf(kind: string): ContractFixture {
  const file = join(root, 'adapters', kind, 'testing', 'contract-fixture.ts');
  if (!existsSync(file))
    throw new Error(
      `backend kind ${kind} has no contract fixture: write adapters/${kind}/testing/contract-fixture.ts (test/contract/fixture.ts)`,
    );
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- each kind's fixture is found by its path, at load
  return (require(file) as { contractFixture: ContractFixture }).contractFixture;
}

/** Every backend the contract suite runs over, one per registered kind, in kind order. */
export const FIXTURES: readonly ContractFixture[] = BACKEND_MODULES.map((m) => fixtureOf(m.kind));
