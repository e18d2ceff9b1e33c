/** Tracked operations: what an asynchronous mutation returns, driven to a terminal state by the gateway. The types are the model's (adapters/model.ts). */
import type { OperationState } from '../../adapters/contract/model';

export const TERMINAL: ReadonlySet<OperationState> = new Set(['SUCCEEDED', 'FAILED', 'TIMED_OUT']);
