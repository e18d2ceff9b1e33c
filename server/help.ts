/**
 * `volume-gateway --help`, derived from what the gateway knows: the backend kinds from their
 * modules (server/kinds/) and the setting families from the config definition's sections
 * (server/config-definition.ts), so a new kind or section shows here without editing this text.
 */
import { isSetting, settingLeaves, type SettingsGroup } from '../adapters/contract/settings';
import { BACKEND_MODULES } from './kinds';
import {
  BACKEND_ENV_PREFIX,
  backendSettings,
  BACKENDS_SETTING,
  GATEWAY_SETTINGS,
  SERVER_SETTINGS,
} from './config-definition';
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

/** The help text. */
export function helpText(): string {
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
    'Tracing (OpenTelemetry, docs/tracing.md): off unless OTEL_TRACES_EXPORTER or OTEL_EXPORTER_OTLP_ENDPOINT',
    'is set; then OTLP over http/protobuf (or http/json), W3C traceparent and baggage propagation.',
    row('tracing', [...OTEL_VARIABLES]),
    '',
    'With no backend configured (and NODE_ENV not production), simulated backends with demo data',
    'are started. An unknown GATEWAY_*, WS_*, MAX_* … variable or config-file key stops start-up.',
    "See docs/configuration.md (every setting, its default and meaning); the config file's JSON",
    'Schema is config.schema.json.',
  ].join('\n');
}
