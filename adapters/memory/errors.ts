/**
 * The memory backend's errors, in one place. Each typed error it raises carries the HTTP status
 * an HTTP backend would have answered (`httpStatus`), so logs and metrics read a memory refusal
 * as they read a cloud's. Input errors are the contract's `BadUserInputError`, raised where the
 * input is checked.
 */
import {
  BackendUnavailableError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  UnauthenticatedError,
} from '../contract/errors';

/** What does not exist (404). */
export const notFound = (backend: string, message: string): NotFoundError =>
  new NotFoundError(message, { backend, httpStatus: 404 });

/** A change the volume's state does not allow now (409). */
export const conflict = (backend: string, message: string): ConflictError =>
  new ConflictError(message, { backend, httpStatus: 409 });

/** No token, or one the data do not declare or that has expired (401). */
export const unauthenticated = (backend: string, message: string): UnauthenticatedError =>
  new UnauthenticatedError(message, { backend, httpStatus: 401 });

/** A declared token outside its grants (403). */
export const forbidden = (backend: string, message: string): ForbiddenError =>
  new ForbiddenError(message, { backend, httpStatus: 403 });

/** An injected failure (503), as a cloud's overloaded API would answer. */
export const unavailable = (backend: string, message: string): BackendUnavailableError =>
  new BackendUnavailableError(message, { backend, httpStatus: 503 });
