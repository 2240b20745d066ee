import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Makes the data folder private to the user running Muninn: the folder 0700 (created so when missing) and
 * the files directly in it (the SQLite database and its WAL, tokens, the secret key) 0600, also when an
 * earlier version created them readable by everyone. Files and folders owned by another user are left
 * alone (chmod would fail), and so is a folder on a file system without modes.
 */
export function securePrivateFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const uid = process.getuid?.();
  const tighten = (p: string, mode: number) => {
    try {
      const st = statSync(p);
      if (uid !== undefined && st.uid !== uid) return;
      if ((st.mode & 0o777) !== mode) chmodSync(p, mode);
    } catch {
      // gone meanwhile, or a file system without modes
    }
  };
  tighten(dir, 0o700);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) tighten(p, 0o700);
    else if (entry.isFile()) tighten(p, 0o600);
  }
}
