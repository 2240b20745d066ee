import { AppError } from '../../common/errors';

/** A file that is not a usable Muninn backup (foreign, truncated, damaged, or from a newer Muninn). */
export class BackupFileError extends AppError {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super('BAD_USER_INPUT', `${file} is not a usable Muninn backup: ${reason}.`);
  }
}

/** A backup or restore that cannot run as asked (target not empty, pg_dump missing, …); the message says what to do. */
export class BackupRefusedError extends AppError {
  constructor(message: string) {
    super('CONFLICT', message);
  }
}
