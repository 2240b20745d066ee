/** Error codes exposed as `extensions.code` (DESIGN §7). */
export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'BAD_USER_INPUT'
  | 'NOT_FOUND'
  | 'RATE_LIMITED'
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

export class UpstreamError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('UPSTREAM_ERROR', message, undefined, options);
  }
}

/** A backing service (Redis) is unreachable right now: nothing was stored; the same call may be retried. */
export class ServiceUnavailableError extends AppError {
  constructor(message: string, retryAfterMs = 2000) {
    super('SERVICE_UNAVAILABLE', message, { retryable: true, retryAfterMs });
  }
}

/** Thrown when configuration is invalid; the message names the key and how to fix it. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
