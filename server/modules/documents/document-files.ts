import { mkdirSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The original files of documents, under `<data_dir>/documents/<id>` (kept for `reindexDocument`; removed
 * with the document). Processes of a cluster that ingest documents need the same data folder.
 */
export class DocumentFiles {
  constructor(readonly dir: string) {}

  pathOf(id: string): string {
    if (!/^[0-9a-f-]{36}$/i.test(id)) throw new Error(`not a document id: ${id}`);
    return path.join(this.dir, id);
  }

  /** A folder for uploads in progress (same file system, so adopting one is a rename). */
  get incomingDir(): string {
    const dir = path.join(this.dir, 'incoming');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  async write(id: string, data: Buffer): Promise<void> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    await writeFile(this.pathOf(id), data, { mode: 0o600 });
  }

  /** Moves a finished upload into place. */
  async adopt(id: string, file: string): Promise<void> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    await rename(file, this.pathOf(id));
  }

  async remove(id: string): Promise<void> {
    await rm(this.pathOf(id), { force: true });
  }
}
