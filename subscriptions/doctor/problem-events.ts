/**
 * The doctor's changes as the event log carries them (PROBLEM_OPENED, PROBLEM_UPDATED,
 * PROBLEM_RESOLVED), for `volumeProblemChanged`. The volume is the watcher's, or a stub with the
 * problem's ref when the view lacks it: subscribers' access is checked on its scope, and the
 * event primes no loader with it.
 */
import { encodeGlobalId } from '../../adapters/contract/ids';
import type { Volume } from '../../adapters/contract/model';
import type { ChangeInput } from '../events';
import type { ProblemChange } from './backend-doctor';

const stub = (p: ProblemChange['problem']): Volume => ({
  __typename: 'Volume',
  ref: p.volume,
  name: p.volume.nativeId,
  status: 'UNKNOWN',
  backendStatus: null,
  sizeBytes: null,
  createdAt: null,
  updatedAt: null,
  complete: false,
  attachments: [],
  details: { __typename: '' },
});

export function problemChangeInput(c: ProblemChange, volume: Volume | undefined): ChangeInput {
  const p = c.problem;
  return {
    type: `PROBLEM_${c.type}`,
    backend: p.backend,
    scope: p.scope,
    volumeId: encodeGlobalId({ kind: 'Volume', backend: p.backend, scope: p.scope, nativeId: p.volume.nativeId }),
    volume: volume ?? stub(p),
    attachment: null,
    attachmentId: null,
    previousStatus: null,
    previousAttachmentState: null,
    changedFields: [],
    observedAt: c.at,
    keys: {},
    problem: p,
  };
}
