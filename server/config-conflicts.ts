/**
 * Settings that are each valid but cannot go together (issue 27, item 3): refused at start as
 * configuration errors (exit code 2) naming both, instead of a stack trace later (`EADDRINUSE`)
 * or a protection silently off. Pairs checked where they are read: TLS certificate and key
 * (server/http/tls-config.ts), the headers and request timeouts (server/http/config.ts), the
 * breaker's open times (server/resilience-config.ts), an OpenStack watcher's intervals, and
 * trusted documents' id requirement without the list (server/http/config.ts); here the pairs
 * across sections.
 */
import type { SettingSource } from '../adapters/contract/settings';
import { ConfigError, settingName } from '../adapters/contract/settings';
import { GATEWAY_SETTINGS } from './config-definition';

/** What the checks read of the configuration as loaded. */
export interface ConflictInputs {
  port: number;
  managementPort?: number;
  corsCredentials: boolean;
  wsAllowedOrigins: readonly string[];
}

/** @throws ConfigError naming one setting of the pair as it was given, and the other in its message */
export function checkConflicts(c: ConflictInputs, env: NodeJS.ProcessEnv, file: Record<string, unknown>): void {
  const src: SettingSource = { env, file, path: '' };
  const name = (dotted: string): string => settingName(GATEWAY_SETTINGS, dotted, src);
  if (c.managementPort !== undefined && c.managementPort !== 0 && c.managementPort === c.port) {
    throw new ConfigError(
      name('managementPort'),
      `is ${c.port}, the same port as ${name('port')}: the management port must be another one (or unset)`,
    );
  }
  // Browser origins are one list for every transport (server/http/origin.ts): with credentials a wildcard there would grant them to every site.
  if (c.corsCredentials && c.wsAllowedOrigins.includes('*')) {
    throw new ConfigError(
      name('http.cors.credentials'),
      `cannot be true with the origin "*" in ${name('ws.allowedOrigins')}: browser origins are one list for every transport (CORS too), so list them (browsers refuse credentials with a wildcard)`,
    );
  }
}
