/**
 * Issue 18's "Done when" grep rule: no backend kind literal, credential header name or backend
 * detail `__typename` outside the backends' folders and their registrations (`server/kinds/`).
 * Issue 28 adds identifiers, strings and import paths: no core file names a backend's word in an
 * identifier (`RegisterNomadVolumeInput`, `nomadResolvers`) or a string (`'Cinder volume actions'`),
 * or imports a backend's folder (`adapters/<kind>/`, `resolvers/<kind>/`, `schema/<kind>/`,
 * `simulators/<kind>/`). The core files are the settled scope (test/support/backend-knowledge.ts,
 * `coreFiles`); README, docs, tests, simulators and the bench may name kinds.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { BACKEND_MODULES } from '../../server/kinds';
import {
  BACKEND_FOLDERS,
  backendImportViolations,
  backendTypeNames,
  backendWordViolations,
  coreFiles,
  credentialHeaders,
  identifierViolations,
  stringViolations,
} from '../support/backend-knowledge';
import { files, root } from '../support/source-imports';

/**
 * Files the rules do not cover yet, each with why. Keep this list short; an entry is a gap to close,
 * not a place to put new code. Empty: every list of kinds is derived from the registrations.
 */
const NOT_YET_COVERED: readonly string[] = [];

/** Every rule's findings in `scope`. */
const backendKnowledge = (scope: readonly string[]): string[] => [
  ...backendWordViolations(scope),
  ...identifierViolations(scope),
  ...stringViolations(scope),
  ...backendImportViolations(scope),
];

/** Besides the core: the files that list what the kinds provide (the demo's parts, the contract suite's fixtures) and must derive it from the registrations. */
const LISTS = [...files('simulators').filter((f) => !f.includes('/', 'simulators/'.length)), ...files('test/contract')];

describe('backend knowledge stays in the backend folders and their registrations', () => {
  it('should have words to look for (kinds, credential headers, backend type names) and files to look in', () => {
    expect(BACKEND_FOLDERS.length).toBeGreaterThanOrEqual(2);
    expect(credentialHeaders().length).toBeGreaterThanOrEqual(2);
    expect(backendTypeNames().length).toBeGreaterThan(5);
    expect(coreFiles().length).toBeGreaterThan(50);
  });

  it('should name no backend kind, credential header or backend __typename in a core file', () => {
    expect(backendWordViolations(coreFiles(NOT_YET_COVERED))).toEqual([]);
  });

  it("should name no backend in a core file's identifiers or strings, and import no backend folder there", () => {
    const scope = coreFiles(NOT_YET_COVERED);
    expect({
      identifiers: identifierViolations(scope),
      strings: stringViolations(scope),
      imports: backendImportViolations([...scope, ...LISTS]),
    }).toEqual({ identifiers: [], strings: [], imports: [] });
  });

  it('should find what main had in core code (the rules can fail)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'arch-'));
    try {
      writeFileSync(join(dir, 'sample.ts'), SAMPLE);
      const f = relative(root, join(dir, 'sample.ts'));
      // Imports are resolved from the file's folder; a require() is as written.
      const resolved = (spec: string): string => relative(root, join(dir, spec));
      expect({
        identifiers: identifierViolations([f]),
        strings: stringViolations([f]),
        imports: backendImportViolations([f]),
      }).toEqual(SAMPLE_FINDINGS(f, resolved));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should leave out of the rules only files that still name a backend (a closed gap leaves the list)', () => {
    for (const f of NOT_YET_COVERED)
      expect({ file: f, named: backendKnowledge([f]).length > 0 }).toEqual({ file: f, named: true });
  });

  it('should register every backend folder, and have a folder for nothing else (codegen maps schema/<kind>/ by its name)', () => {
    const kinds = BACKEND_MODULES.map((m) => m.kind).sort();
    expect([...BACKEND_FOLDERS].sort()).toEqual(kinds);
    const folders = (top: string): string[] =>
      readdirSync(join(root, top), { withFileTypes: true })
        .filter((e) => e.isDirectory() && !['generated', 'common'].includes(e.name))
        .map((e) => e.name);
    expect(
      ['schema', 'resolvers', 'simulators'].flatMap((top) =>
        folders(top)
          .filter((d) => !kinds.includes(d))
          .map((d) => `${top}/${d}`),
      ),
    ).toEqual([]);
    expect(kinds.filter((k) => !existsSync(join(root, 'adapters', k, 'testing', 'contract-fixture.ts')))).toEqual([]);
  });
});

/** What test/architecture's rules found in main's core code (issue 28), one of each kind. */
const SAMPLE = [
  "import { nomadModule } from '../adapters/nomad/module';",
  "import { openstackResolvers } from '../resolvers/openstack';",
  "import type { RegisterNomadVolumeInput } from '../schema/generated/resolvers-types';",
  "const names = { volumeActions: 'Cinder volume actions', serverAttachments: 'Nova servers' };",
  "const mappers = { NomadNode: '../../adapters/nomad/model#NomadNodeRef' };",
  "const demo = () => require('../simulators/openstack/demo-backend');",
  '// Nomad, Cinder and Nova in a comment are documentation.',
  '// The stores kept in the process are InProcess…: "memory" is the memory backend\'s word alone.',
  'class MemoryEventLog {}',
].join('\n');

const SAMPLE_FINDINGS = (f: string, resolved: (spec: string) => string): Record<string, string[]> => ({
  identifiers: ['nomadModule', 'openstackResolvers', 'RegisterNomadVolumeInput', 'NomadNode', 'MemoryEventLog'].map(
    (id) => `${f}: ${id}`,
  ),
  strings: [
    "'../adapters/nomad/module'",
    "'../resolvers/openstack'",
    "'Cinder volume actions'",
    "'Nova servers'",
    "'../../adapters/nomad/model#NomadNodeRef'",
    "'../simulators/openstack/demo-backend'",
  ].map((s) => `${f}: ${s}`),
  imports: [
    resolved('../adapters/nomad/module'),
    resolved('../resolvers/openstack'),
    '../simulators/openstack/demo-backend',
  ].map((spec) => `${f} → ${spec}`),
});
