import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** File name of the secret key inside the data folder (created with mode 0600 when first needed). */
export const SECRET_KEY_FILE = 'secret.key';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value could not be opened: the key changed, or the value was altered. */
export class SecretBoxError extends Error {
  override name = 'SecretBoxError';
}

/**
 * Encrypts secrets at rest (bot tokens, MCP credentials, OAuth tokens) with AES-256-GCM. The key comes from
 * `MUNINN_SECRET_KEY` (any string; hashed to 32 bytes) or from `<data>/secret.key`, 32 random bytes written
 * with mode 0600 the first time a secret is sealed. Sealed values look like `v1:<base64url>` and carry their
 * own IV and tag; `open` refuses anything altered or sealed with another key.
 */
export class SecretBox {
  private key: Buffer | undefined;

  private constructor(private readonly loadKey: () => Buffer) {}

  /** The box for a data folder; `env.MUNINN_SECRET_KEY` wins over the key file. */
  static forDataDir(dataDir: string, env: NodeJS.ProcessEnv = process.env): SecretBox {
    const fromEnv = env.MUNINN_SECRET_KEY;
    if (fromEnv !== undefined && fromEnv !== '') {
      if (fromEnv.length < 16) {
        throw new SecretBoxError('MUNINN_SECRET_KEY is too short. Fix: use at least 16 characters (e.g. `openssl rand -base64 32`).');
      }
      return new SecretBox(() => createHash('sha256').update(fromEnv, 'utf8').digest());
    }
    return new SecretBox(() => readOrCreateKeyFile(path.join(dataDir, SECRET_KEY_FILE)));
  }

  /** A box with a fixed key (tests, tools). */
  static withKey(key: Buffer): SecretBox {
    if (key.length !== 32) throw new SecretBoxError('a secret key must be 32 bytes');
    return new SecretBox(() => key);
  }

  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.getKey(), iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  open(sealed: string): string {
    const [version, payload] = sealed.split(':', 2);
    if (version !== VERSION || !payload) throw new SecretBoxError('not a sealed secret (expected "v1:…")');
    const raw = Buffer.from(payload, 'base64url');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError('sealed secret is truncated');
    const decipher = createDecipheriv('aes-256-gcm', this.getKey(), raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError(
        'cannot decrypt a stored secret: the secret key changed (MUNINN_SECRET_KEY or data/secret.key) or the value was altered. Fix: restore the original key, or enter the secret again.',
      );
    }
  }

  /** Seals a JSON value. */
  sealJson(value: unknown): string {
    return this.seal(JSON.stringify(value));
  }

  openJson<T>(sealed: string): T {
    return JSON.parse(this.open(sealed)) as T;
  }

  private getKey(): Buffer {
    this.key ??= this.loadKey();
    return this.key;
  }
}

function readOrCreateKeyFile(file: string): Buffer {
  try {
    return decodeKeyFile(file, fs.readFileSync(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  try {
    fs.writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return decodeKeyFile(file, fs.readFileSync(file, 'utf8'));
    throw err;
  }
}

function decodeKeyFile(file: string, text: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) {
    throw new SecretBoxError(`${file} does not hold a 32-byte base64 key. Fix: restore it from a backup (secrets sealed with it cannot be read otherwise).`);
  }
  return key;
}
