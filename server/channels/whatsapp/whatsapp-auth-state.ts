import { mkdir, rm } from 'node:fs/promises';
import type { AuthenticationState } from '@whiskeysockets/baileys';
import type { Logger } from '../../common/logger';
import type { BaileysModule } from './whatsapp-sdk';

/** The linked-device credentials and Signal keys of one WhatsApp account, kept in a folder. */
export interface WhatsAppAuth {
  state: AuthenticationState;
  /** Writes the current credentials (wire to `creds.update`). */
  save(): Promise<void>;
  /** True once a phone has linked this device (the credentials name an account). */
  readonly linked: boolean;
}

/**
 * Opens the auth folder (`<data_dir>/whatsapp/auth`) with Baileys' `useMultiFileAuthState`; creates it
 * with mode 0700, since it holds the account's keys. Signal keys are cached in memory in front of the
 * files (`makeCacheableSignalKeyStore`).
 */
export async function openWhatsAppAuth(baileys: BaileysModule, dir: string, logger: Logger): Promise<WhatsAppAuth> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const { state, saveCreds } = await baileys.useMultiFileAuthState(dir);
  const cached: AuthenticationState = { creds: state.creds, keys: baileys.makeCacheableSignalKeyStore(state.keys, logger) };
  return {
    state: cached,
    save: saveCreds,
    get linked() {
      return Boolean(state.creds.me?.id);
    },
  };
}

/** Forgets the account (after WhatsApp logged this device out): the next socket asks for a new link. */
export async function clearWhatsAppAuth(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
