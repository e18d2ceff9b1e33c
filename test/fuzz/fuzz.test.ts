/**
 * Short fuzz mode, part of `npm test`: a few thousand hostile HTTP requests against a real
 * gateway in this process and real simulators (test/fuzz/run.ts). Each property fails with its
 * shrunk counterexample and the command that replays it. Seed: random, printed; FUZZ_SEED
 * replays. Long mode: test/fuzz/long.ts. docs/reliability.md ("Fuzzing") describes both.
 */
import { runProperty } from './run';
import { fuzzSettings } from './settings';

const settings = fuzzSettings('short');
const replay = 'npx jest test/fuzz/fuzz.test.ts';

describe(`fuzz (short mode, seed ${settings.seed})`, () => {
  beforeAll(() => {
    // Printed even when everything passes, so any run can be replayed.
    console.log(`fuzz seed ${settings.seed} (replay with FUZZ_SEED=${settings.seed})`);
  });

  for (const name of settings.only) {
    it(
      `should stay safe under ${settings.runs[name]} generated "${name}" requests`,
      async () => {
        const report = await runProperty(name, settings, replay);
        if (!report.ok) throw new Error(report.text);
        console.log(report.text);
        expect(report.stats.requests).toBeGreaterThan(0);
      },
      settings.timeLimitMs + 60_000,
    );
  }
});
