import { randomInt } from 'node:crypto';

/**
 * Characters of a pairing code: A–Z and 2–9 without the look-alikes 0/O and 1/I (DESIGN §3). 32
 * symbols, so each character carries 5 bits and an 8-character code 40 bits.
 */
export const PAIRING_CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** Length of a pairing code. */
export const PAIRING_CODE_LENGTH = 8;

const CODE_PATTERN = new RegExp(`^[${PAIRING_CODE_ALPHABET}]{${PAIRING_CODE_LENGTH}}$`);

/** A new pairing code from the crypto random source (uniform over the alphabet). */
export function generatePairingCode(): string {
  let code = '';
  for (let i = 0; i < PAIRING_CODE_LENGTH; i++) code += PAIRING_CODE_ALPHABET[randomInt(PAIRING_CODE_ALPHABET.length)];
  return code;
}

/**
 * The canonical form of a code as a person may type it: upper case, without spaces and dashes
 * (`abcd-efgh` → `ABCDEFGH`). Returns null when the result is not a well-formed pairing code.
 */
export function normalizePairingCode(input: string): string | null {
  const code = input.replace(/[\s-]/g, '').toUpperCase();
  return CODE_PATTERN.test(code) ? code : null;
}

/** True when `input` reads as a pairing code (tool approval ids are UUIDs and never match). */
export function looksLikePairingCode(input: string): boolean {
  return normalizePairingCode(input) !== null;
}
