import { UserInputError } from './errors';

/** Relay-style paging arguments after validation. */
export interface PageArgs {
  first: number;
  afterId: string | null;
}

export interface Page<T> {
  nodes: T[];
  hasNextPage: boolean;
  totalCount: number;
}

export function encodeCursor(id: string): string {
  return Buffer.from(`id:${id}`, 'utf8').toString('base64url');
}

/** Decodes a cursor made by encodeCursor; a foreign or damaged cursor is a BAD_USER_INPUT on `after`. */
export function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith('id:') || text.length < 4) throw new UserInputError(`Invalid cursor "${cursor}": pass an edge cursor from a previous page.`, 'after');
  return text.slice(3);
}

/** Validates `first`/`after`; `first` defaults to 50 and may not exceed `maxPageSize`. */
export function toPageArgs(first: number | null | undefined, after: string | null | undefined, maxPageSize: number): PageArgs {
  const n = first ?? 50;
  if (!Number.isInteger(n) || n < 0 || n > maxPageSize) {
    throw new UserInputError(`"first" must be between 0 and ${maxPageSize}, got ${n}.`, 'first');
  }
  return { first: n, afterId: after ? decodeCursor(after) : null };
}
