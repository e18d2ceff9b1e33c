/** Demo mode's own settings (environment only; ignored outside demo mode): server/demo-activity.ts reads them. */
import { integer, oneOf, setting } from '../adapters/contract/settings';

export const DEMO_SETTINGS = {
  activity: setting({
    env: 'DEMO_ACTIVITY',
    file: false,
    rule: oneOf(['0', '1'], 'must be 0 (off) or 1 (on)'),
    default: '1',
    doc: 'Demo mode only: the simulated backends change by themselves so live views show events at once; 0 turns it off.',
  }),
  activityIntervalMs: setting({
    env: 'DEMO_ACTIVITY_INTERVAL_MS',
    file: false,
    rule: integer(100, 3_600_000),
    default: 5_000,
    doc: 'Time between two demo activity steps, ms.',
  }),
} as const;
