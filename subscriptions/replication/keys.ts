/**
 * The live path's Redis keys (docs/scaling.md, "Redis keys"). Every one starts with
 * `<prefix>{live}:`: the `{live}` hash tag puts the whole live path in one Redis Cluster slot, so
 * the event log's fenced append can read a lease and write the stream in one script.
 */

/** The key of one part of the live path: `<prefix>{live}:<parts joined by ':'>`. */
export const liveKey = (prefix: string, ...parts: string[]): string => `${prefix}{live}:${parts.join(':')}`;
