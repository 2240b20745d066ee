/**
 * A full disk under the database is one clear, retryable error wherever it surfaces: SQLite's SQLITE_FULL
 * (raw or wrapped by TypeORM), ENOSPC, PostgreSQL's disk_full; GraphQL answers it with its code and reason.
 */
import { GraphQLError } from 'graphql';
import { asStorageFull, StorageFullError } from '../../server/common/errors';
import { createLogger } from '../../server/common/logger';
import { SecretRedactor } from '../../server/common/secret-redactor';
import { createFormatError } from '../../server/graphql/format-error';
import { LogCapture } from '../support/log-capture';

const sqliteFull = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });

it.each([
  ['SQLite (better-sqlite3)', sqliteFull],
  ['SQLite through TypeORM', Object.assign(new Error('SqliteError: database or disk is full'), { driverError: sqliteFull })],
  ['a file write', Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })],
  ['PostgreSQL', Object.assign(new Error('could not extend file'), { driverError: { code: '53100' } })],
])('%s: a full disk is a StorageFullError', (_name, err) => {
  const full = asStorageFull(err);
  expect(full).toBeInstanceOf(StorageFullError);
  expect(full).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { reason: 'STORAGE_FULL', retryable: true } });
  expect(full!.cause).toBe(err);
});

it.each([
  ['a constraint violation', Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })],
  ['a plain error', new Error('boom')],
  ['null', null],
])('%s is not a full disk', (_name, err) => {
  expect(asStorageFull(err)).toBeNull();
});

it('GraphQL answers a full disk with SERVICE_UNAVAILABLE, reason STORAGE_FULL and no internals', () => {
  const logs = new LogCapture();
  const format = createFormatError(createLogger({ level: 'debug', destination: logs, redactor: new SecretRedactor() }));
  const error = new GraphQLError('SqliteError: database or disk is full', { path: ['createMemory'], originalError: sqliteFull });
  const out = format({ message: error.message, path: ['createMemory'] }, error);
  expect(out.extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', reason: 'STORAGE_FULL', retryable: true });
  expect(out.message).toMatch(/storage is full.*nothing was stored/i);
  expect(JSON.stringify(out)).not.toMatch(/SQLITE|Sqlite/);
  expect(logs.text).toMatch(/storage is full/);
  expect(logs.text).not.toMatch(/\n\s+at /);
});
