/** A tracked operation's record for the operation stores' tests. */
import type { OperationRecord } from '../../adapters/contract/model';

/** A PENDING attach on backend `osp`, due in two minutes, with a random id; `over` replaces any field. */
export function operationRecord(over: Partial<OperationRecord> = {}): OperationRecord {
  const now = Date.now();
  return {
    __typename: 'VolumeOperation',
    id: `op-${Math.random().toString(36).slice(2)}`,
    kind: 'ATTACH_VOLUME',
    backend: 'osp',
    scope: 'p',
    targetId: 't',
    state: 'PENDING',
    backendStatus: null,
    failureReason: null,
    createdAt: now,
    updatedAt: now,
    deadline: now + 120_000,
    owner: 'o',
    ...over,
  };
}
