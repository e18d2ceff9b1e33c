/**
 * `volume-gateway --help`, derived from what the gateway knows: the backend kinds and their examples
 * from their modules (server/kinds/), the setting families and the defaults from the config
 * definition (server/config-definition.ts), the paths from their routes, so a new kind or section
 * shows here without editing this text. The docs are named where this package is installed, which
 * is where they are: package.json names no web home to link to.
 */
import { join } from 'node:path';
import { isSetting, settingLeaves, type SettingsGroup } from '../adapters/contract/settings';
import { BACKEND_MODULES } from './kinds';
import {
  BACKEND_ENV_PREFIX,
  backendSettings,
  BACKENDS_SETTING,
  DEFAULT_HOST,
  DEMO_HOST,
  GATEWAY_SETTINGS,
  SERVER_SETTINGS,
} from './config-definition';
import { API_SCHEMA_PATH } from './api-schema';
import { HTTP_SETTINGS } from './http/config';
import { MANAGEMENT_PATHS } from './http/management';
import { packageRoot } from './package-root';
import { POSSIBLE_TYPES_PATH } from './possible-types';
import { OTEL_VARIABLES } from './tracing/settings';

const WIDTH = 100;
const LABEL = 14;

/** `label` then `items` joined by ", ", wrapped at {@link WIDTH} under a hanging indent. */
function row(label: string, items: string[]): string {
  const indent = ' '.repeat(2 + LABEL);
  const lines: string[] = [];
  let line = `  ${label.padEnd(LABEL - 1)} `;
  for (const [i, item] of items.entries()) {
    const piece = i < items.length - 1 ? `${item},` : item;
    if (line.trim().length > label.length && line.length + 1 + piece.length > WIDTH) {
      lines.push(line.trimEnd());
      line = indent;
    }
    line += line.endsWith(' ') ? piece : ` ${piece}`;
  }
  lines.push(line.trimEnd());
  return lines.join('\n');
}

/** A section's settings by variable, or by file key when it has none. */
const names = (group: SettingsGroup, path: string): string[] =>
  settingLeaves(group, path).map(({ path: key, setting }) => setting.env ?? `"${key}" (file)`);

/** A shell word: as it is when the shell leaves it alone, else in single quotes. */
const shellWord = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`);

/** `env` as a command line's prefix, then the command and what it does below it. */
const example = (env: Readonly<Record<string, string>>, args: string, says: string): string[] => [
  `  ${[...Object.entries(env).map(([k, v]) => `${k}=${shellWord(v)}`), 'volume-gateway', args].filter(Boolean).join(' ')}`,
  `      ${says}`,
];

/** The paths served, each with what it is. */
function paths(): string[] {
  return [
    `Listens on ${SERVER_SETTINGS.host.env}:${SERVER_SETTINGS.port.env}: ${DEFAULT_HOST}:${SERVER_SETTINGS.port.default} by default, ${DEMO_HOST}:${SERVER_SETTINGS.port.default} in demo mode.`,
    '',
    'Paths:',
    '  /graphql                      GraphQL over HTTP (POST, GET), graphql-ws, SSE and multipart',
    '                                subscriptions; GraphiQL for a browser',
    `  ${API_SCHEMA_PATH.padEnd(29)} the API schema (SDL), also with introspection off (${HTTP_SETTINGS.schemaSdl.env})`,
    `  ${POSSIBLE_TYPES_PATH.padEnd(29)} unions' and interfaces' members, for client caches`,
    '  /live                         the live status page',
    '  /healthz, /readyz             liveness and readiness (GET or HEAD)',
    '  /metrics                      Prometheus metrics',
    `  ${SERVER_SETTINGS.managementPort.env} serves ${MANAGEMENT_PATHS.join(', ')} on a second port too, plain HTTP.`,
  ];
}

/** The examples: one gateway per kind that has one, a file, the demo. */
const examples = (): string[] => [
  'Examples:',
  ...BACKEND_MODULES.flatMap((m) => (m.helpExample ? example(m.helpExample.env, '', m.helpExample.says) : [])),
  ...example({}, '--config gateway.json', 'backends and settings from a file (config.schema.json is its JSON Schema)'),
  ...example({}, '', 'the demo: simulated backends with demo data, on loopback'),
];

/** The help text. */
export function helpText(): string {
  const root = packageRoot();
  const top = Object.fromEntries(Object.entries(SERVER_SETTINGS).filter(([key]) => key !== '$schema'));
  const sections = Object.entries(GATEWAY_SETTINGS).filter(([, node]) => !isSetting(node)) as Array<
    [string, SettingsGroup]
  >;
  const perBackend = [
    ...new Set(
      BACKEND_MODULES.flatMap((m) =>
        settingLeaves(backendSettings(m)).flatMap(({ setting }) => (setting.env ? [setting.env] : [])),
      ),
    ),
  ];
  return [
    'Usage: volume-gateway [--config FILE] [--help] [--version]',
    '',
    `GraphQL gateway for block-storage volumes: ${BACKEND_MODULES.map((m) => m.displayName).join(', ')}.`,
    '',
    'Options:',
    '  --config FILE   JSON configuration file (also: GATEWAY_CONFIG)',
    '  --help          show this help',
    '  --version       print the version',
    '',
    ...paths(),
    '',
    ...examples(),
    '',
    `Backends: ${BACKENDS_SETTING.env}=id=kind[@URL],… or the file's "backends" list; any number, of any kinds.`,
    ...BACKEND_MODULES.map(
      (m) =>
        `  ${m.kind.padEnd(LABEL - 1)} ${m.displayName}${m.needsUrl ? ' (needs @URL)' : ''}; callers send ${m.credential.header}[-<backend id>]: ${m.credential.describe}`,
    ),
    row('per backend', [`${BACKEND_ENV_PREFIX} + ${perBackend[0]}`, ...perBackend.slice(1)]),
    ...BACKEND_MODULES.flatMap((m) => (m.nativeEnv?.help ? [m.nativeEnv.help] : [])),
    '',
    "Settings by family (the config file's sections); the environment wins over the file:",
    row('gateway', names(top, '')),
    ...sections.map(([key, group]) => row(key, names(group, key))),
    '',
    'Tracing (OpenTelemetry; tracing.md in the docs below): off unless OTEL_TRACES_EXPORTER,',
    'OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; then OTLP over',
    'http/protobuf (or http/json), W3C traceparent and baggage propagation.',
    row('tracing', [...OTEL_VARIABLES]),
    '',
    'With no backend configured (and NODE_ENV not production), simulated backends with demo data',
    'are started. An unknown GATEWAY_*, WS_*, MAX_* … variable or config-file key stops start-up.',
    '',
    'Documentation, installed with the gateway:',
    `  ${join(root, 'README.md')}`,
    `  ${join(root, 'docs')}/`,
    '    configuration.md (every setting, its default and meaning), clients.md, federation.md,',
    '    tracing.md, tls.md, scaling.md, troubleshooting.md …',
    `  ${join(root, 'config.schema.json')}: the config file's JSON Schema`,
  ].join('\n');
}
