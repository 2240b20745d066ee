import { z } from 'zod';
import { BackupFileError } from './backup.errors';

/** What the first line of every Muninn archive's manifest says it is. */
export const BACKUP_FORMAT = 'muninn-backup';
/** Version of the archive layout; a newer one is refused with a message to upgrade. */
export const BACKUP_FORMAT_VERSION = 1;
/** The manifest's name inside the archive (always its first entry). */
export const MANIFEST_FILE = 'manifest.json';
/** Folder of the database inside the archive: `muninn.sqlite` (SQLite) or `muninn.pgdump` (pg_dump, custom format). */
export const DATABASE_DIR = 'database';
/** Folder of the data folder's other files (memory indexes, workspaces, keys) inside the archive. */
export const DATA_DIR = 'data';

const fileSchema = z.object({ path: z.string().min(1), bytes: z.number().int().min(0), sha256: z.string().regex(/^[0-9a-f]{64}$/) }).strict();

const manifestSchema = z
  .object({
    format: z.literal(BACKUP_FORMAT),
    formatVersion: z.number().int().min(1),
    createdAt: z.string(),
    muninnVersion: z.string(),
    database: z.object({ kind: z.enum(['sqlite', 'postgres']), file: z.string().min(1) }).strict(),
    /** Rows per table at the moment of the snapshot. */
    tables: z.record(z.string(), z.number().int().min(0)),
    /** Every file of the archive but the manifest, with its size and checksum. */
    files: z.array(fileSchema),
  })
  .strict();

export type BackupManifest = z.infer<typeof manifestSchema>;
export type BackupFileEntry = z.infer<typeof fileSchema>;

/** Parses a manifest read from an archive; throws BackupFileError naming what is wrong. */
export function parseManifest(text: string, file: string): BackupManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new BackupFileError(file, 'its manifest.json is not valid JSON');
  }
  if (!raw || typeof raw !== 'object' || (raw as { format?: unknown }).format !== BACKUP_FORMAT) {
    throw new BackupFileError(file, `its manifest.json is not a ${BACKUP_FORMAT} manifest`);
  }
  const version = (raw as { formatVersion?: unknown }).formatVersion;
  if (typeof version === 'number' && version > BACKUP_FORMAT_VERSION) {
    throw new BackupFileError(file, `it has format version ${version}, this Muninn reads up to ${BACKUP_FORMAT_VERSION}; restore it with a newer Muninn`);
  }
  const parsed = manifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new BackupFileError(file, `its manifest.json is malformed (${issue.path.join('.') || 'manifest'}: ${issue.message})`);
  }
  return parsed.data;
}
