/**
 * The memory backend's errors. Calls fail with the contract's typed errors (`contract/errors.ts`);
 * only a bad setting or data file, found at start-up or on reload, has its own class.
 */

/**
 * A setting or the data file is wrong; `setting` names the setting or the path in the file.
 * Same shape and name as the server's `ConfigError`, which adapters may not import (the layering
 * test): the start-up path reports both alike.
 */
export class MemoryConfigError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`);
    this.name = 'ConfigError';
  }
}
