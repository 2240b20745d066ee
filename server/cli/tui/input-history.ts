import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Lines kept in the history file. */
export const HISTORY_SIZE = 500;

/**
 * The input history of `muninn chat` in a text file, one entry a line, oldest first (like a shell's).
 * `load` returns it newest first, as readline's `history` option wants it; a missing or unreadable file
 * is an empty history, never an error.
 */
export class InputHistory {
  constructor(
    readonly file: string,
    readonly size = HISTORY_SIZE,
  ) {}

  load(): string[] {
    try {
      const lines = readFileSync(this.file, 'utf8').split('\n').filter((l) => l.trim() !== '');
      return lines.slice(-this.size).reverse();
    } catch {
      return [];
    }
  }

  /** Writes readline's history (newest first), capped; returns the error message when it could not. */
  save(newestFirst: readonly string[]): string | null {
    try {
      mkdirSync(path.dirname(this.file), { recursive: true });
      const lines = newestFirst.slice(0, this.size).reverse();
      writeFileSync(this.file, lines.length ? `${lines.join('\n')}\n` : '', { mode: 0o600 });
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  }
}
