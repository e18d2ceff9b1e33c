/**
 * The config error and number rule backend modules parse their settings with. Here, in the
 * contract, so a backend folder never imports `server/`; server/config-values.ts re-exports both.
 */

/** Configuration is wrong; `setting` names the variable or file key. */
export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`);
    this.name = 'ConfigError';
  }
}

/** A number from `min` to `max` (a whole one unless `integer` is false); strings are parsed. */
export function numberSetting(value: unknown, setting: string, min: number, max: number, integer = true): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
    throw new ConfigError(setting, `must be a ${integer ? 'whole ' : ''}number from ${min} to ${max} (got ${JSON.stringify(value)})`);
  }
  return n;
}
