import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SECRET_KEY_FILE, SecretBox, SecretBoxError } from '../../../server/common/secret-box';

describe('SecretBox', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'muninn-secretbox-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('creates a 0600 key file on first seal and opens what it sealed, also in a new box', () => {
    const box = SecretBox.forDataDir(dir, {});
    expect(fs.existsSync(path.join(dir, SECRET_KEY_FILE))).toBe(false);
    const sealed = box.seal('bot123:secret-token');
    expect(sealed).toMatch(/^v1:/);
    expect(sealed).not.toContain('secret-token');
    expect(fs.statSync(path.join(dir, SECRET_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(SecretBox.forDataDir(dir, {}).open(sealed)).toBe('bot123:secret-token');
    expect(box.openJson(box.sealJson({ a: [1, 'x'] }))).toEqual({ a: [1, 'x'] });
  });

  it('seals the same text differently each time', () => {
    const box = SecretBox.forDataDir(dir, {});
    expect(box.seal('same')).not.toBe(box.seal('same'));
  });

  it('refuses a value sealed with another key, an altered value and a foreign string', () => {
    const sealed = SecretBox.forDataDir(dir, { MUNINN_SECRET_KEY: 'first-key-long-enough' }).seal('x');
    const other = SecretBox.forDataDir(dir, { MUNINN_SECRET_KEY: 'second-key-long-enough' });
    expect(() => other.open(sealed)).toThrow(/secret key changed/);
    const box = SecretBox.forDataDir(dir, { MUNINN_SECRET_KEY: 'first-key-long-enough' });
    const altered = sealed.slice(0, -2) + (sealed.endsWith('AA') ? 'BB' : 'AA');
    expect(() => box.open(altered)).toThrow(SecretBoxError);
    expect(() => box.open('plain text')).toThrow(/not a sealed secret/);
    expect(() => box.open('v1:abc')).toThrow(/truncated/);
  });

  it('uses MUNINN_SECRET_KEY without writing a key file, and rejects a short one', () => {
    SecretBox.forDataDir(dir, { MUNINN_SECRET_KEY: 'a-long-enough-secret-key' }).seal('x');
    expect(fs.existsSync(path.join(dir, SECRET_KEY_FILE))).toBe(false);
    expect(() => SecretBox.forDataDir(dir, { MUNINN_SECRET_KEY: 'short' })).toThrow(/too short/);
  });

  it('explains a damaged key file', () => {
    fs.writeFileSync(path.join(dir, SECRET_KEY_FILE), 'not a key');
    expect(() => SecretBox.forDataDir(dir, {}).seal('x')).toThrow(/32-byte base64 key/);
  });
});
