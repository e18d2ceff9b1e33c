/**
 * Each layer's words stay in it (docs/architecture.md, "Layout"): the backends' wire words (Cinder
 * action keys, snake_case and Nomad wire fields) in `adapters/<backend>/`, GraphQL argument paths in
 * the resolvers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BACKEND_FOLDERS, code } from '../support/backend-knowledge';
import { files, root } from '../support/source-imports';
import { SAMPLER_NAMES } from '../../server/tracing/settings';

/** graphql-transport-ws message types. */
const GRAPHQL_WS_MESSAGES = new Set(['connection_init', 'connection_ack']);
/** Redis's own `INFO` fields, read to tell a failover (the shared stores, not a backend). */
const REDIS_INFO_FIELDS = new Set([
  'run_id',
  'master_replid',
  'master_repl_offset',
  'master_replid2',
  'second_repl_offset',
]);

/** Everything outside the backend folders that speaks the unified model: schema, resolvers, server, the neutral contract. */
function neutralFiles(): string[] {
  const sdl = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory()
        ? e.name === 'generated'
          ? []
          : sdl(join(dir, e.name))
        : e.name.endsWith('.graphql')
          ? [join(dir, e.name)]
          : [],
    );
  const contract = files('adapters').filter((f) => !BACKEND_FOLDERS.some((b) => f.startsWith(`adapters/${b}/`)));
  return [
    ...sdl('schema'),
    ...files('domain'),
    ...files('resolvers'),
    ...files('server'),
    ...files('subscriptions'),
    ...contract,
  ];
}

describe('wire words stay in the backend folders', () => {
  it('should name no Cinder action key (os-…) outside adapters/<backend>/', () => {
    const offending = neutralFiles().flatMap((f) =>
      [...code(f).matchAll(/['"`]os-[a-z_]+/g)].map((m) => `${f}: ${m[0]}`),
    );
    expect(offending).toEqual([]);
  });

  it('should use no snake_case wire field outside adapters/<backend>/', () => {
    // Prometheus metric names (gateway_…) are snake_case by convention, graphql-ws names its
    // messages so (connection_init), Redis its INFO fields (run_id) and OpenTelemetry its samplers
    // (OTEL_TRACES_SAMPLER=parentbased_always_on): none is a backend's word.
    const samplers: ReadonlySet<string> = new Set(SAMPLER_NAMES);
    const offending = neutralFiles().flatMap((f) =>
      [...code(f).matchAll(/\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g)]
        .filter(
          (m) =>
            !m[0].startsWith('gateway_') &&
            !GRAPHQL_WS_MESSAGES.has(m[0]) &&
            !REDIS_INFO_FIELDS.has(m[0]) &&
            !samplers.has(m[0]),
        )
        .map((m) => `${f}: ${m[0]}`),
    );
    expect(offending).toEqual([]);
  });

  it('should use no Nomad wire field outside adapters/nomad/', () => {
    const wire = readFileSync(join(root, 'adapters/nomad/wire/types.ts'), 'utf8');
    const names = new Set(
      [...wire.matchAll(/^\s+([A-Z][A-Za-z]+)\??:/gm)]
        .map((m) => m[1]!)
        .filter((n) => n.length >= 6 && /[a-z][A-Z]/.test(n)),
    );
    expect(names.size).toBeGreaterThan(20);
    const offending = neutralFiles().flatMap((f) => {
      const text = code(f);
      // As a property (read, written or quoted), not a type that shares a CSI name (AccessMode).
      return [...names].filter((n) => new RegExp(`[.'"]${n}\\b|\\b${n}\\??:`).test(text)).map((n) => `${f}: ${n}`);
    });
    expect(offending).toEqual([]);
  });
});

/**
 * Adapters know no GraphQL argument: they name fields relative to the input they were given
 * (`nomad.nativeId`, `cascade`) and the resolver layer places them (`resolvers/input-fields.ts`).
 * So no string in `adapters/` is an argument path: `'input'` or anything naming `input.<field>`.
 */
function argumentPathLiterals(text: string): string[] {
  const literals = [...text.matchAll(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g)].map((m) =>
    m[0].slice(1, -1).replace(/\$\{[^}]*\}/g, ''),
  );
  return literals.filter((l) => l === 'input' || /(^|[^\w$])input\.[A-Za-z_]/.test(l));
}

describe('argument paths stay in the resolvers', () => {
  it('should find argument paths where they are written', () => {
    expect(
      argumentPathLiterals(
        `f(x, 'input.nomad.nativeId'); g('input'); h(\`needs input.sizeBytes \${n}\`); k(\`\${input.volumeId}\`, 'the input', "inputs")`,
      ),
    ).toEqual(['input.nomad.nativeId', 'input', 'needs input.sizeBytes ']);
  });

  it('should have no GraphQL argument path (input.…) in a string under adapters/', () => {
    const offending = files('adapters').flatMap((f) => argumentPathLiterals(code(f)).map((l) => `${f}: ${l}`));
    expect(offending).toEqual([]);
  });
});
