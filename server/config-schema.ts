/**
 * The config file's JSON Schema (the file `GATEWAY_CONFIG` or `--config` names), generated from
 * the config definition (server/config-definition.ts) and the backend modules. Committed as
 * `config.schema.json`; `npm run config:schema` writes it, `npm run config:schema:check` (in
 * `npm test`) fails when it is stale. Editors validate and complete a config file that names it
 * in `"$schema"`.
 */
import { COMMON_BACKEND_SETTINGS } from '../adapters/contract/module';
import { isSetting, type JsonSchema, type Setting, type SettingsGroup } from '../adapters/contract/settings';
import { BACKEND_MODULES } from './kinds';
import { BACKEND_ENV_PREFIX, BACKENDS_SETTING, backendSettings, GATEWAY_SETTINGS } from './config-definition';

/** The committed schema, relative to the repository root. */
export const CONFIG_SCHEMA_PATH = 'config.schema.json';

/** A setting's schema: its rule's, with its description (env name and computed default included) and default. */
function settingSchema(s: Setting<unknown>, envPrefix: string): JsonSchema {
  const notes = [
    s.env !== undefined ? `Env \`${envPrefix}${s.env}\`.` : '',
    s.defaultNote !== undefined ? `Default: ${s.defaultNote}.` : '',
  ].filter(Boolean);
  return {
    ...s.rule.schema,
    description: [s.doc, ...notes].join(' '),
    ...(s.default !== undefined && s.defaultNote === undefined ? { default: s.default } : {}),
  };
}

/** A group's object schema, its file settings only; undefined when it has none (an environment-only group). */
function groupSchema(group: SettingsGroup, envPrefix = ''): JsonSchema | undefined {
  const properties: Record<string, JsonSchema> = {};
  for (const [key, node] of Object.entries(group)) {
    const schema = isSetting(node)
      ? node.file
        ? settingSchema(node, envPrefix)
        : undefined
      : groupSchema(node, envPrefix);
    if (schema) properties[key] = schema;
  }
  return Object.keys(properties).length === 0 ? undefined : { type: 'object', additionalProperties: false, properties };
}

/** One backend entry, one shape per kind: the common keys and the kind's own, `kind` fixed. */
function backendEntrySchema(): JsonSchema {
  return {
    oneOf: BACKEND_MODULES.map((m) => {
      const schema = groupSchema(backendSettings(m), BACKEND_ENV_PREFIX)!;
      schema.properties!.kind = {
        const: m.kind,
        description: `${m.displayName} (${COMMON_BACKEND_SETTINGS.kind.doc})`,
      };
      return { ...schema, required: ['id', 'kind', ...(m.needsUrl ? ['url'] : [])] };
    }),
  };
}

/** The config file's JSON Schema. */
export function configSchema(): JsonSchema & { $schema: string; title: string } {
  const top = groupSchema(GATEWAY_SETTINGS)!;
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title:
      'volume-gateway config file (GATEWAY_CONFIG or --config); generated from server/config-definition.ts by npm run config:schema',
    ...top,
    properties: {
      ...top.properties,
      backends: {
        type: 'array',
        description: `${BACKENDS_SETTING.doc} Env \`${BACKENDS_SETTING.env}\`.`,
        items: backendEntrySchema(),
      },
    },
  };
}

/** The committed file's text. */
export const configSchemaText = (): string => `${JSON.stringify(configSchema(), null, 2)}\n`;
