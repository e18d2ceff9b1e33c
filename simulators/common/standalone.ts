/** Runs a simulator as its own process: start it, stop it on SIGINT/SIGTERM, exit 1 on a start failure. */
export function runStandalone(start: () => Promise<{ close(): Promise<void> }>): void {
  start()
    .then((sim) => {
      const stop = (): void => {
        void sim.close().then(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    })
    .catch((e: unknown) => {
      process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
      process.exit(1);
    });
}
