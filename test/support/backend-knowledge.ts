/**
 * How test/architecture/backend-knowledge.test.ts finds backend knowledge outside the backends'
 * folders: the folders, the core files, and the words, names and import paths that belong to one
 * backend.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { files, importStatements, root } from './source-imports';

/** The folders of `adapters/` that are no backend's: the contract and the HTTP infrastructure. */
export const NEUTRAL_ADAPTER_FOLDERS = new Set(['contract', 'http']);

/** The backend folders: every folder of `adapters/` but the neutral ones (a new `adapters/<kind>/` is one by being there). */
export const BACKEND_FOLDERS = readdirSync(join(root, 'adapters'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && !NEUTRAL_ADAPTER_FOLDERS.has(e.name))
  .map((e) => e.name);

/** The top-level folders where a backend has a folder of its own (`<top>/<kind>/`). */
export const BACKEND_TOPS = ['adapters', 'schema', 'resolvers', 'simulators'] as const;

/** The backend folder an import lands in (`adapters/<kind>/…`), or null. */
export const backendFolderOf = (spec: string): string | null => {
  const m = /^adapters\/([^/]+)\//.exec(spec);
  return m && BACKEND_FOLDERS.includes(m[1]!) ? m[1]! : null;
};

/** Whether `f` is in one of a backend's own folders (`adapters/<kind>/`, `schema/<kind>/` …). */
export const inBackendFolder = (f: string, tops: readonly string[] = BACKEND_TOPS): boolean =>
  tops.some((top) => BACKEND_FOLDERS.some((b) => f.startsWith(`${top}/${b}/`)));

/** The registrations (server/kinds/): the one place outside the backend folders that imports their parts. */
export const REGISTRATION = 'server/kinds/';

/**
 * Browser code served by the gateway that is a client of the public schema, as the README's
 * examples are: the /live page selects the backends' consumer types as any client does.
 */
export const CLIENT_CODE: readonly string[] = ['server/live/page/'];

/**
 * Source text without comments, and SDL without descriptions: both may name a backend's word to
 * document a mapping; the rules are about the names clients and code use.
 */
export function code(file: string): string {
  const text = readFileSync(join(root, file), 'utf8');
  if (file.endsWith('.graphql'))
    return text
      .replace(/"""[\s\S]*?"""/g, '')
      .replace(/"(?:[^"\\\n]|\\.)*"/g, '""')
      .replace(/^\s*#.*$/gm, '');
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/**
 * Credential headers the modules declare (`header: '…'` in a backend folder), plus the two the
 * gateway has always used, so the rule has words even before every module declares its own.
 */
export function credentialHeaders(): string[] {
  const declared = BACKEND_FOLDERS.flatMap((b) =>
    files(`adapters/${b}`).flatMap((f) =>
      [...code(f).matchAll(/\bheader:\s*['"`](X-[A-Za-z0-9-]+)['"`]/g)].map((m) => m[1]!),
    ),
  );
  return [...new Set(['X-Nomad-Token', 'X-Auth-Token', ...declared].map((h) => h.toLowerCase()))];
}

const sdlFiles = (dir: string): string[] =>
  existsSync(join(root, dir))
    ? readdirSync(join(root, dir))
        .filter((n) => n.endsWith('.graphql'))
        .map((n) => join(dir, n))
    : [];
const declaredTypes = (f: string): string[] =>
  [...code(f).matchAll(/^\s*(?:type|union|interface|enum|input|scalar)\s+([A-Za-z_]\w*)/gm)].map((m) => m[1]!);

/**
 * Backend type names: those declared in a backend's SDL (`schema/<backend>/`: its detail types,
 * consumer types and inputs), and those still declared in the core SDL under a kind's name.
 */
export function backendTypeNames(): string[] {
  const backendSdl = BACKEND_FOLDERS.flatMap((b) => sdlFiles(join('schema', b)));
  const kindNamed = sdlFiles('schema')
    .flatMap(declaredTypes)
    .filter((n) => BACKEND_FOLDERS.some((b) => n.toLowerCase().startsWith(b)));
  return [...new Set([...backendSdl.flatMap(declaredTypes), ...kindNamed])];
}

/**
 * The core files: TypeScript under the contract root (`adapters/` but its backend folders),
 * `server/` (but the registrations and the /live page's client code), `domain/`, `resolvers/` (but
 * its backend folders), `subscriptions/`, `schema/` (but its backend folders, with the core SDL),
 * and `codegen.ts`; without `skip`, files the rules do not cover yet.
 */
export function coreFiles(skip: readonly string[] = []): string[] {
  const outside = (f: string): boolean =>
    !inBackendFolder(f) && !f.startsWith(REGISTRATION) && !CLIENT_CODE.some((c) => f.startsWith(c));
  return [
    ...['adapters', 'server', 'domain', 'resolvers', 'subscriptions', 'schema'].flatMap((d) => files(d)),
    ...sdlFiles('schema'),
    'codegen.ts',
  ].filter((f) => outside(f) && !skip.includes(f));
}

const escape = (w: string): string => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every backend kind literal, credential header name and backend `__typename` in `scope`, as `file: word`. */
export function backendWordViolations(scope: readonly string[]): string[] {
  const kinds = BACKEND_FOLDERS;
  const typenames = backendTypeNames();
  // In TypeScript a kind or a type name counts as a quoted literal ('NOMAD', "nomad", `NovaServer`);
  // in SDL as a word (an enum value, a field's type).
  const tsKind = new RegExp(`(['"\`])(${kinds.map(escape).join('|')})\\1`, 'gi');
  const tsType = new RegExp(`(['"\`])(${typenames.map(escape).join('|')})\\1`, 'g');
  const sdlWord = new RegExp(
    `\\b(${[...kinds.map((k) => k.toUpperCase()), ...typenames].map(escape).join('|')})\\b`,
    'g',
  );
  // Without its `x-`, so a pattern (`/^x-(nomad-token|auth-token)/`) counts as the name does.
  const header = new RegExp(
    credentialHeaders()
      .map((h) => escape(h.replace(/^x-/, '')))
      .join('|'),
    'gi',
  );
  return scope.flatMap((f) => {
    const text = code(f);
    const words = f.endsWith('.graphql')
      ? [...text.matchAll(sdlWord)].map((m) => m[1]!)
      : [...[...text.matchAll(tsKind)].map((m) => m[2]!), ...[...text.matchAll(tsType)].map((m) => m[2]!)];
    return [...words, ...[...text.matchAll(header)].map((m) => m[0])].map((w) => `${f}: ${w}`);
  });
}

/**
 * The words a backend's own names are made of: each kind (`nomad`: `NomadVolumeDetails`,
 * `RegisterNomadVolumeInput`, `nomadModule`) and the services a kind's types and texts are named
 * after, which no folder name gives (OpenStack's: `CinderVolumeDetails`,
 * `UpdateNovaVolumeAttachmentInput`, Keystone tokens).
 */
export const backendWords = (): string[] => [...BACKEND_FOLDERS, 'cinder', 'nova', 'keystone'];

/** Whether identifier `id` has `word` as one or more of its camel-case (or snake-case) parts. */
export function namesWord(id: string, word: string): boolean {
  const low = id.toLowerCase();
  for (let i = low.indexOf(word); i >= 0; i = low.indexOf(word, i + 1)) {
    const starts = i === 0 || /[A-Z]/.test(id[i]!) || /[_$0-9]/.test(id[i - 1]!);
    const after = id[i + word.length];
    if (starts && (after === undefined || /[A-Z0-9_$]/.test(after))) return true;
  }
  return false;
}

/** String literals (quotes included) of TypeScript source without comments. */
const STRING = /'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g;

/** Identifiers of a TypeScript file that name a backend word ({@link backendWords}), as `file: identifier`. */
export function identifierViolations(scope: readonly string[]): string[] {
  const words = backendWords();
  return scope
    .filter((f) => f.endsWith('.ts'))
    .flatMap((f) => {
      const ids = new Set(
        [
          ...code(f)
            .replace(STRING, "''")
            .matchAll(/[A-Za-z_$][\w$]*/g),
        ].map((m) => m[0]),
      );
      return [...ids].filter((id) => words.some((w) => namesWord(id, w))).map((id) => `${f}: ${id}`);
    });
}

/**
 * A path into a backend's folder (`adapters/<kind>/`, `resolvers/<kind>`, `schema/<kind>/` …,
 * relative or not), or null.
 */
export function backendPath(spec: string): string | null {
  const m = new RegExp(
    `(?:^|/)(${BACKEND_TOPS.join('|')})/(${BACKEND_FOLDERS.map(escape).join('|')})(?=$|[/#'"\`])`,
  ).exec(spec);
  return m ? `${m[1]}/${m[2]}` : null;
}

/**
 * String literals of a TypeScript file that name a backend: a kind's or service's name as a word
 * (`'Cinder volume actions'`; "memory" only capitalized, the common word being everyone's), or a
 * path into a backend's folder (`'../../adapters/nomad/model#…'`), as `file: literal`.
 */
export function stringViolations(scope: readonly string[]): string[] {
  const words = backendWords().map((w) =>
    w === 'memory' ? /(?<![A-Za-z])Memory(?![A-Za-z])/ : new RegExp(`(?<![A-Za-z])${w}(?![A-Za-z])`, 'i'),
  );
  const names = (s: string): boolean => words.some((w) => w.test(s)) || backendPath(s) !== null;
  return scope
    .filter((f) => f.endsWith('.ts'))
    .flatMap((f) =>
      [...code(f).matchAll(STRING)]
        .map((m) => m[0])
        .filter(names)
        .map((s) => `${f}: ${s.length > 80 ? `${s.slice(0, 77)}…` : s}`),
    );
}

/** Imports of a backend's folder (static, dynamic or `require`) in `scope`, as `file → spec`. */
export function backendImportViolations(scope: readonly string[]): string[] {
  return scope
    .filter((f) => f.endsWith('.ts'))
    .flatMap((f) => {
      const required = [...code(f).matchAll(/\brequire\(\s*(['"`])([^'"`]+)\1\s*\)/g)].map((m) => m[2]!);
      const specs = [...importStatements(f).map(({ spec }) => spec), ...required];
      return specs.filter((spec) => backendPath(spec) !== null).map((spec) => `${f} → ${spec}`);
    });
}
