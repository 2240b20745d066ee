import pino, { type DestinationStream, type Logger as PinoLogger } from 'pino';
import { SecretRedactor } from './secret-redactor';

export type Logger = PinoLogger;

export interface LoggerOptions {
  /** pino level. @default 'info' */
  level?: string;
  /** Where lines go. @default stdout */
  destination?: DestinationStream;
  /** Redacts registered secrets from every line. */
  redactor: SecretRedactor;
  /** Human-readable lines instead of JSON. @default stdout is a terminal and LOG_FORMAT is not json */
  pretty?: boolean;
}

/**
 * Error fields that carry what people wrote (SQL parameters of a failed query: message text, memory
 * content; request and response bodies): dropped from logged errors, at any depth of `cause`.
 */
const CONTENT_FIELDS = ['parameters', 'body', 'requestBody', 'responseBody', 'content'];

function withoutContent(value: unknown, depth = 0): unknown {
  if (!value || typeof value !== 'object' || depth > 4) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const field of CONTENT_FIELDS) if (field in out) out[field] = '[content omitted]';
  for (const nested of ['cause', 'driverError', 'error']) if (out[nested] && typeof out[nested] === 'object') out[nested] = withoutContent(out[nested], depth + 1);
  return out;
}

/** pino's error serializer, without the content of failed queries and requests. */
export function serializeError(err: unknown): unknown {
  return withoutContent(err instanceof Error ? pino.stdSerializers.err(err) : err);
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
const HIDDEN = new Set(['level', 'time', 'app', 'msg', 'pid', 'hostname']);

/** One JSON log line as `HH:MM:SS LEVEL message key=value …` for people watching a terminal. */
export function prettyLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const time = new Date(Number(entry.time)).toISOString().slice(11, 19);
  const extras = Object.entries(entry)
    .filter(([k]) => !HIDDEN.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${time} ${LEVELS[Number(entry.level)] ?? entry.level} ${String(entry.msg ?? '')}${extras ? `  ${extras}` : ''}\n`;
}

/**
 * Creates the root logger. Every serialized line passes through the redactor, so a secret that slips into
 * a message or an error still never reaches the output; well-known secret fields are removed by path too.
 */
export function createLogger(options: LoggerOptions): Logger {
  const pretty = options.pretty ?? (!options.destination && !!process.stdout.isTTY && process.env.LOG_FORMAT !== 'json');
  return pino(
    {
      level: options.level ?? 'info',
      base: { app: 'muninn' },
      serializers: { err: serializeError, error: serializeError },
      redact: {
        paths: [
          'token',
          '*.token',
          'apiKey',
          '*.apiKey',
          'api_key',
          '*.api_key',
          'authorization',
          '*.authorization',
          'headers.authorization',
          'req.headers.authorization',
          'password',
          '*.password',
        ],
        censor: '[REDACTED]',
      },
      hooks: {
        streamWrite: (line: string) => {
          const safe = options.redactor.redact(line);
          return pretty ? prettyLine(safe) : safe;
        },
      },
    },
    options.destination ?? pino.destination(1),
  );
}
