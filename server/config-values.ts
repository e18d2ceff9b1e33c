/**
 * The rules only the gateway's own settings need (browser origins); the shared rules and the one
 * error type are the contract's (adapters/contract/settings.ts), so backend modules use the same.
 * Imports nothing of the gateway, so every config module can use it without a cycle.
 */
import { ConfigError, type Rule } from '../adapters/contract/settings';

/**
 * A list of browser origins (scheme://host[:port], no path or trailing slash) or `*`, from a
 * comma-separated string or a list. @throws ConfigError naming `setting`
 */
export function originList(value: unknown, setting: string): string[] {
  const list = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(list)) throw new ConfigError(setting, 'must be a list of origins (or a comma-separated string)');
  return list.map((o: unknown) => {
    const t = typeof o === 'string' ? o.trim() : o;
    if (t === '*') return t;
    let u: URL | undefined;
    try {
      u = typeof t === 'string' ? new URL(t) : undefined;
    } catch {
      u = undefined;
    }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.origin !== t) {
      throw new ConfigError(
        setting,
        `${JSON.stringify(o)} is not an origin: scheme://host[:port] without path or trailing slash, e.g. https://app.example.com, or *`,
      );
    }
    return t;
  });
}

/** Browser origins: in the file a list (or a comma-separated string), in the environment comma-separated. */
export const origins: Rule<string[]> = {
  parse: originList,
  schema: {
    anyOf: [{ type: 'array', items: { type: 'string', pattern: '^(\\*|https?://[^/]+)$' } }, { type: 'string' }],
  },
};
