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
}

/**
 * Creates the root logger. Every serialized line passes through the redactor, so a secret that slips into
 * a message or an error still never reaches the output; well-known secret fields are removed by path too.
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { app: 'muninn' },
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
        streamWrite: (line: string) => options.redactor.redact(line),
      },
    },
    options.destination ?? pino.destination(1),
  );
}
