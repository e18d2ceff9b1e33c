/**
 * Monaco runs its language services in web workers and asks `MonacoEnvironment.getWorker` for
 * them. GraphiQL's own setup files load the workers from esm.sh or rely on a bundler's worker
 * syntax; here they are separate bundles on the gateway's origin whose hashed URLs the server
 * passes in the page config.
 *
 * @param {{ editor: string, json: string, graphql: string }} urls
 */
export function installMonacoWorkers(urls) {
  globalThis.MonacoEnvironment = {
    getWorker(_workerId, label) {
      if (label === 'json') return new Worker(urls.json, { name: 'json' });
      if (label === 'graphql') return new Worker(urls.graphql, { name: 'graphql' });
      return new Worker(urls.editor, { name: 'editor' });
    },
  };
}
