/**
 * What scripts/build-live.ts writes beside the live page's bundle and the server reads at
 * start-up: the content-hashed names of its script and styles.
 */

/** File name of the manifest inside the assets folder. */
export const LIVE_MANIFEST_FILE = 'manifest.json';

export interface LiveManifest {
  /** Bundle file names (no folder), content-hashed. */
  files: { script: string; style: string };
  /** npm versions bundled, for the record. */
  versions: Record<string, string>;
}
