/**
 * Issue 18, item 7: defaults declared once. A setting's default is in the config definition (or in
 * a constant of the part it configures, which the definition refers to); the code that builds that
 * part without the setting takes the same value, never a literal of its own
 * (`o.maxQueued ?? 1000`, `o.region ?? 'RegionOne'`).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { settingLeaves, type SettingsGroup } from '../../adapters/contract/settings';
import { COMMON_BACKEND_SETTINGS } from '../../adapters/contract/module';
import { BACKEND_MODULES } from '../../server/kinds';
import { GATEWAY_SETTINGS } from '../../server/config-definition';

const root = join(__dirname, '..', '..');

function files(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const p = join(dir, name);
    if (name === 'generated') return [];
    return statSync(join(root, p)).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** The last key of every setting of `group` that has a default. */
const keysWithDefaults = (group: SettingsGroup): Set<string> =>
  new Set(
    settingLeaves(group)
      .filter((l) => l.setting.default !== undefined)
      .map((l) => l.path.split('.').pop()!),
  );

/**
 * `file: x.key ?? literal` for each key of `keys` read with a literal fallback (a number or a
 * quoted string). `?? 0` is left alone: it is the neutral value of an unset option, not a default.
 */
function literalDefaults(
  scope: readonly string[],
  keys: ReadonlySet<string>,
  source = (f: string) => readFileSync(join(root, f), 'utf8'),
): string[] {
  return scope.flatMap((f) =>
    [...source(f).matchAll(/\.(\w+)\s*\?\?\s*(-?[\d_.]+|'[^']*'|"[^"]*")/g)]
      .filter((m) => keys.has(m[1]!) && m[2] !== '0')
      .map((m) => `${f}: ${m[0]}`),
  );
}

describe('setting defaults are declared once', () => {
  it("should give no gateway setting a literal default where it is read outside the definition (server/, domain/, subscriptions/, resolvers/, the contract's folders)", () => {
    const keys = keysWithDefaults(GATEWAY_SETTINGS);
    expect([...keys]).toEqual(
      expect.arrayContaining(['maxConcurrentReads', 'shutdownGraceMs', 'maxQueued', 'watcherWaitMs', 'accessTtlMs']),
    );
    const scope = ['server', 'domain', 'subscriptions', 'resolvers', 'adapters/contract', 'adapters/http'].flatMap(
      files,
    );
    expect(literalDefaults(scope, keys)).toEqual([]);
  });

  it("should give no backend setting a literal default in its backend's folder", () => {
    const offending = BACKEND_MODULES.flatMap((m) => {
      const folder = `adapters/${m.kind}`;
      expect({ folder, exists: existsSync(join(root, folder)) }).toEqual({ folder, exists: true });
      return literalDefaults(files(folder), keysWithDefaults({ ...COMMON_BACKEND_SETTINGS, ...m.settings }));
    });
    expect(offending).toEqual([]);
  });

  it('should find a literal default (the rule can fail)', () => {
    const sample =
      'const a = o.maxQueued ?? 1000;\nconst b = o.region ?? "RegionOne";\nconst c = o.headersTimeoutMs ?? 0;\nconst d = o.other ?? 5;\n';
    expect(literalDefaults(['sample.ts'], new Set(['maxQueued', 'region', 'headersTimeoutMs']), () => sample)).toEqual([
      'sample.ts: .maxQueued ?? 1000',
      'sample.ts: .region ?? "RegionOne"',
    ]);
  });
});
