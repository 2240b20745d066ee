import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A small filesystem of the test's own, mounted on a temp folder, that the test can fill up and free. */
export interface SmallDisk {
  dir: string;
  /** How it was made: a tmpfs mount, or an ext4 image on a loop device. */
  method: 'tmpfs' | 'loop-ext4';
  /** Writes a filler file until the filesystem refuses (ENOSPC); returns the bytes written. */
  fill(): number;
  /** Deletes the filler file. */
  free(): void;
  unmount(): void;
}

function run(cmd: string, args: string[]): void {
  execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 });
}

function reason(err: unknown): string {
  const e = err as { stderr?: Buffer; message?: string };
  return (e.stderr?.toString().trim() || e.message || String(err)).slice(0, 200);
}

/**
 * Mounts a `sizeMb` filesystem: tmpfs where mounting is allowed, else an ext4 image on a loop device
 * (`only`, env FAULT_DISK, tries just one of them).
 * Throws, naming what was tried and why it failed, when the machine allows neither (the fault suite
 * needs root with mount permitted, as CI has).
 */
export function mountSmallDisk(sizeMb: number, only: SmallDisk['method'] | undefined = process.env.FAULT_DISK as SmallDisk['method'] | undefined): SmallDisk {
  const base = mkdtempSync(path.join(os.tmpdir(), 'muninn-small-disk-'));
  const dir = path.join(base, 'mnt');
  execFileSync('mkdir', ['-p', dir]);
  const failures: string[] = [];
  let method: SmallDisk['method'] | null = null;
  if (!only || only === 'tmpfs') {
    try {
      run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0700`, 'tmpfs', dir]);
      method = 'tmpfs';
    } catch (err) {
      failures.push(`tmpfs mount: ${reason(err)}`);
    }
  }
  if (!method && (!only || only === 'loop-ext4')) {
    const image = path.join(base, 'disk.img');
    try {
      run('truncate', ['-s', `${sizeMb}M`, image]);
      // No blocks reserved for root: the test runs as root and must see the disk as full as a user would.
      run('mkfs.ext4', ['-q', '-F', '-m', '0', image]);
      run('mount', ['-o', 'loop', image, dir]);
      method = 'loop-ext4';
    } catch (err) {
      failures.push(`loop-mounted ext4 image: ${reason(err)}`);
    }
  }
  if (!method) {
    rmSync(base, { recursive: true, force: true });
    throw new Error(
      `The disk-full suite cannot make a small filesystem for the data folder on this machine (${failures.join('; ')}). ` +
        'It needs root with mount permitted (tmpfs, or loop devices for an ext4 image).',
    );
  }
  const filler = path.join(dir, 'filler.bin');
  return {
    dir,
    method,
    fill: () => {
      const fd = openSync(filler, 'a');
      let written = 0;
      try {
        for (const size of [1 << 20, 1 << 14, 512, 1]) {
          const chunk = Buffer.alloc(size, 0x5a);
          for (;;) {
            try {
              written += writeSync(fd, chunk);
            } catch (err) {
              if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
              break;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
      return written;
    },
    free: () => rmSync(filler, { force: true }),
    unmount: () => {
      try {
        run('umount', [dir]);
      } catch {
        run('umount', ['-l', dir]);
      }
      rmSync(base, { recursive: true, force: true });
    },
  };
}
