/** What backend calls answer besides their values: an accepted change, and pages. */
import type { PendingChange } from './completion';

/** A mutation's immediate result plus the work still running on the backend (null: done). */
export interface Accepted<T> {
  result: T;
  pending: PendingChange | null;
}

/** One item of a backend page plus the opaque token that resumes a listing *at* that item. */
export interface Positioned<T> {
  item: T;
  position: string;
}

/** A page from a backend: items in the backend's stable order and the token of the next page. */
export interface BackendPage<T> {
  items: Positioned<T>[];
  /** Token of the next page; null on the last page. */
  next: string | null;
}

/** A page of a listing whose cursor the backend defines. */
export interface OpaquePage<T> {
  items: T[];
  next: string | null;
}
