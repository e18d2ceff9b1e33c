/**
 * What `scripts/build-graphiql.ts` writes beside the bundle and the server reads at start-up:
 * the content-hashed file names of the entry points, so the page can link them and the files
 * can be cached forever.
 */

/** File name of the manifest inside the assets folder. */
export const MANIFEST_FILE = 'manifest.json';

export interface GraphiQLManifest {
  /** Bundle file names (no folder), content-hashed. */
  files: {
    script: string;
    style: string;
    /** Monaco's web workers: the core editor, JSON (variables/headers) and GraphQL language. */
    editorWorker: string;
    jsonWorker: string;
    graphqlWorker: string;
  };
  /** npm versions bundled, for the record (shown nowhere, read by humans and tests). */
  versions: Record<string, string>;
}
