import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { ArgumentValidationError } from 'type-graphql';
import { AppError, asStorageFull } from '../common/errors';
import type { Logger } from '../common/logger';

interface ValidationIssue {
  property: string;
  constraints?: Record<string, string>;
  children?: ValidationIssue[];
}

function flatten(issues: ValidationIssue[], prefix = ''): Array<{ field: string; message: string }> {
  return issues.flatMap((issue) => {
    const field = prefix ? `${prefix}.${issue.property}` : issue.property;
    const own = Object.values(issue.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flatten(issue.children ?? [], field)];
  });
}

const PASS_THROUGH_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'PERSISTED_QUERY_NOT_FOUND',
  'OPERATION_RESOLUTION_FAILURE',
]);

/** Removes secrets from the text of an error (the SecretRedactor's `redact`). */
export type RedactText = (text: string) => string;

/** Redacts the message and every string of the extensions (an error may echo a token given as input). */
function redactFormatted(formatted: GraphQLFormattedError, redact: RedactText): GraphQLFormattedError {
  const extensions = formatted.extensions ? (JSON.parse(redact(JSON.stringify(formatted.extensions))) as Record<string, unknown>) : undefined;
  return { ...formatted, message: redact(formatted.message), ...(extensions ? { extensions } : {}) };
}

/**
 * The one place that maps errors to `extensions.code`. AppErrors keep their message and code; argument
 * validation becomes BAD_USER_INPUT naming each field; anything unexpected is logged and masked, so no
 * stack trace or internal message reaches a client. Every message and extension passes `redact`, so an
 * error that quotes its input (an id, a code) never shows a token, a webhook secret or a configured secret.
 */
export function createFormatError(logger: Logger, redact: RedactText = (text) => text) {
  const format = mapError(logger);
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => redactFormatted(format(formatted, error), redact);
}

function mapError(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
    const path = formatted.path;
    const locations = formatted.locations;
    if (original instanceof AppError) {
      return { message: original.message, path, locations, extensions: { code: original.code, ...(original.details ?? {}) } };
    }
    if (original instanceof ArgumentValidationError) {
      const fields = flatten(original.extensions.validationErrors as unknown as ValidationIssue[]);
      const message = `Invalid input: ${fields.map((f) => f.message).join('; ')}`;
      return { message, path, locations, extensions: { code: 'BAD_USER_INPUT', fields } };
    }
    const name = (original as { name?: string } | null)?.name;
    if (name === 'AuthenticationError') {
      return { message: 'A valid API token is required.', path, locations, extensions: { code: 'UNAUTHENTICATED' } };
    }
    if (name === 'UnauthorizedError') {
      return { message: 'Your trust level does not allow this.', path, locations, extensions: { code: 'FORBIDDEN' } };
    }
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && PASS_THROUGH_CODES.has(code)) {
      return { message: formatted.message, path, locations, extensions: { code } };
    }
    if (original instanceof GraphQLError && !original.originalError && !path) {
      // A request-level GraphQL error made by the server itself (limits, parsing): safe to show.
      return { message: formatted.message, locations, extensions: { code: typeof code === 'string' ? code : 'BAD_REQUEST' } };
    }
    const full = asStorageFull(original);
    if (full) {
      logger.error({ path, reason: 'STORAGE_FULL' }, 'a GraphQL operation failed: the storage is full');
      return { message: full.message, path, locations, extensions: { code: full.code, ...full.details } };
    }
    if (isNulInText(original)) {
      // PostgreSQL cannot store NUL in text: the input is at fault, not the server.
      return { message: 'Text may not contain NUL characters (\\u0000).', path, locations, extensions: { code: 'BAD_USER_INPUT' } };
    }
    logger.error({ err: original, path }, 'unexpected error in GraphQL operation');
    return { message: 'Internal server error', path, locations, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  };
}

/** PostgreSQL's refusal of a NUL character in text (22021) or in a JSON string (22P05). */
function isNulInText(err: unknown): boolean {
  const driver = (err as { driverError?: { code?: string }; code?: string } | null) ?? null;
  const code = driver?.driverError?.code ?? driver?.code;
  return code === '22021' || code === '22P05';
}
