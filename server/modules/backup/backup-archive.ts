import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import type * as Tar from 'tar';
import { BackupFileError, BackupRefusedError } from './backup.errors';
import { MANIFEST_FILE } from './backup-manifest';

/** tar, required on first use: only a backup or restore needs it, not the server's start. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tarLib = (): typeof Tar => require('tar') as typeof Tar;

// === The archive: a gzip'd tar (readable with any tar) whose first entry is manifest.json

/** SHA-256 of a file, read as a stream. */
export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .once('error', reject)
      .once('end', () => resolve(hash.digest('hex')));
  });
}

/**
 * Regular files under `root` as `/`-separated paths relative to it, sorted; symbolic links and other
 * special files are left out. `skip(rel)` leaves out a file or a whole folder.
 */
export async function listFiles(root: string, skip: (rel: string) => boolean = () => false): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string) => {
    const abs = rel ? path.join(root, rel) : root;
    for (const entry of await readdir(abs, { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (skip(child)) continue;
      if (entry.isDirectory()) await walk(child);
      else if (entry.isFile()) out.push(child);
    }
  };
  if (existsSync(root)) await walk('');
  return out.sort();
}

/** Packs `entries` (paths relative to `dir`, the manifest first) into the gzip'd tar `file`. */
export async function packArchive(dir: string, entries: string[], file: string): Promise<void> {
  await tarLib().create({ gzip: true, file, cwd: dir, portable: true, mode: 0o600 } as Tar.TarOptionsWithAliasesAsyncFile, entries);
}

/**
 * Unpacks `file` into the empty folder `dest`. Only files and folders are taken (no links); tar's own
 * checks keep every entry inside `dest`. A foreign, truncated or damaged file throws BackupFileError.
 */
export async function unpackArchive(file: string, dest: string): Promise<void> {
  let st;
  try {
    st = await lstat(file);
  } catch {
    throw new BackupRefusedError(`${file} does not exist; give the path of a backup made with "muninn backup <file>".`);
  }
  if (!st.isFile()) throw new BackupFileError(file, 'it is not a regular file');
  if (st.size === 0) throw new BackupFileError(file, 'it is empty');
  const warnings: string[] = [];
  try {
    await tarLib().extract({
      file,
      cwd: dest,
      strict: true,
      preservePaths: false,
      filter: (_p, entry) => 'type' in entry && (entry.type === 'File' || entry.type === 'Directory'),
      onwarn: (_code, message) => void warnings.push(String(message)),
    } as Tar.TarOptionsWithAliasesAsyncFile);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'TAR_BAD_ARCHIVE') throw new BackupFileError(file, 'it is not a backup archive (not a gzip-compressed tar file)');
    if (e.code?.startsWith('Z_') || /zlib|unexpected end|truncated/i.test(e.message)) {
      throw new BackupFileError(file, `it is truncated or damaged (${e.message}); take the backup again or use another copy`);
    }
    if (e.code?.startsWith('TAR_')) throw new BackupFileError(file, `the archive is damaged (${e.message})`);
    throw err;
  }
  if (!existsSync(path.join(dest, MANIFEST_FILE))) {
    throw new BackupFileError(file, warnings.length ? `it is truncated or damaged (${warnings[0]})` : 'it has no manifest.json, so it is not an archive made by "muninn backup"');
  }
}

let version: string | null = null;

/** This Muninn's version (from the nearest package.json named muninn). */
export function muninnVersion(): string {
  if (version) return version;
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'muninn' && pkg.version) return (version = pkg.version);
    }
    dir = path.dirname(dir);
  }
  return (version = 'unknown');
}
