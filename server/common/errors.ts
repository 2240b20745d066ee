/** Error codes exposed as `extensions.code` (DESIGN §7). */
export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'BAD_USER_INPUT'
  | 'NOT_FOUND'
  | 'RATE_LIMITED'
  | 'BUDGET_EXCEEDED'
  | 'CONFLICT'
  | 'UPSTREAM_ERROR'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_SERVER_ERROR';

/** Base of every error the application throws on purpose; its message is safe to show to a client. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class UnauthenticatedError extends AppError {
  constructor(message = 'A valid API token is required: send "Authorization: Bearer <token>".') {
    super('UNAUTHENTICATED', message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message = 'Your trust level does not allow this.') {
    super('FORBIDDEN', message);
  }
}

export class NotFoundError extends AppError {
  constructor(entity: string, id: string) {
    super('NOT_FOUND', `${entity} ${id} was not found.`, { entity, id });
  }
}

export class UserInputError extends AppError {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super('BAD_USER_INPUT', message, field ? { field } : undefined);
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super('CONFLICT', message);
  }
}

export class RateLimitedError extends AppError {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super('RATE_LIMITED', message, retryAfterMs !== undefined ? { retryAfterMs } : undefined);
  }
}

/** The user's daily or monthly budget is spent: no model call for them until `resetsAt`. */
export class BudgetExceededError extends AppError {
  constructor(
    message: string,
    readonly period: 'day' | 'month',
    readonly resetsAt: Date,
  ) {
    super('BUDGET_EXCEEDED', message, { period, resetsAt: resetsAt.toISOString() });
  }
}

export class UpstreamError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('UPSTREAM_ERROR', message, undefined, options);
  }
}

/** A backing service (Redis) is unreachable right now: nothing was stored; the same call may be retried. */
export class ServiceUnavailableError extends AppError {
  constructor(message: string, retryAfterMs = 2000, extra?: Record<string, unknown>, options?: { cause?: unknown }) {
    super('SERVICE_UNAVAILABLE', message, { retryable: true, retryAfterMs, ...extra }, options);
  }
}

/**
 * The disk under the database (the data folder for SQLite) is full: nothing was stored. A
 * SERVICE_UNAVAILABLE with `reason: STORAGE_FULL`; the same call works again once space is freed.
 */
export class StorageFullError extends ServiceUnavailableError {
  constructor(options?: { cause?: unknown }) {
    super(
      "The server's storage is full (no space left on the disk of its database); nothing was stored. Try again once space has been freed.",
      30_000,
      { reason: 'STORAGE_FULL' },
      options,
    );
  }
}

/**
 * `err` as a StorageFullError when it says the disk is full: SQLite's SQLITE_FULL, a file system's ENOSPC
 * (also EFBIG/EDQUOT: file size limit or quota reached), PostgreSQL's disk_full (53100); else null.
 */
export function asStorageFull(err: unknown): StorageFullError | null {
  if (err instanceof StorageFullError) return err;
  const e = err as { code?: unknown; driverError?: { code?: unknown } } | null;
  const code = e?.driverError?.code ?? e?.code;
  return typeof code === 'string' && STORAGE_FULL_CODES.has(code) ? new StorageFullError({ cause: err }) : null;
}

const STORAGE_FULL_CODES = new Set(['SQLITE_FULL', 'ENOSPC', 'EFBIG', 'EDQUOT', '53100']);

/** Thrown when configuration is invalid; the message names the key and how to fix it. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
