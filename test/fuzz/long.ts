/**
 * Long fuzz mode (`npm run fuzz`): every property with many more runs (FUZZ_RUNS, default 50,000
 * in all) and larger documents. When a property fails, its report is printed and the property
 * goes on with the same seed and the found kinds ignored, so one run lists every distinct
 * kind of finding with its own shrunk counterexample. Exit status 1 when anything was found.
 *
 *   node --import tsx test/fuzz/long.ts
 *   FUZZ_SEED=123 FUZZ_ONLY=arguments node --import tsx test/fuzz/long.ts
 */
import { runProperty } from './run';
import { fuzzSettings } from './settings';

async function main(): Promise<void> {
  const base = fuzzSettings('long');
  console.log(`fuzz (long): seed ${base.seed}, properties ${base.only.join(', ')}, runs ${JSON.stringify(base.runs)}`);
  let failed = false;
  for (const name of base.only) {
    const ignore = new Set(base.ignore);
    for (let round = 0; round < 10; round++) {
      const report = await runProperty(name, { ...base, ignore }, 'node --import tsx test/fuzz/long.ts');
      console.log(`\n${report.text}`);
      if (report.ok) break;
      failed = true;
      // Keep looking past what was found; stop when nothing new turns up.
      const fresh = report.kinds.filter((k) => !ignore.has(k));
      if (base.path || fresh.length === 0) break;
      for (const k of fresh) ignore.add(k);
      console.log(`(continuing "${name}" with ${[...ignore].join(', ')} ignored)`);
    }
  }
  console.log(failed ? '\nfuzz: findings above' : '\nfuzz: no findings');
  // Pools of a gateway that could not stop may keep the loop alive: the verdict is in.
  process.exit(failed ? 1 : 0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
