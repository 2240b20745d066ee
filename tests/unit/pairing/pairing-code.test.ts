import {
  generatePairingCode,
  looksLikePairingCode,
  normalizePairingCode,
  PAIRING_CODE_ALPHABET,
  PAIRING_CODE_LENGTH,
} from '../../../server/modules/pairing/pairing-code';

describe('pairing codes', () => {
  it('the alphabet is A–Z and 2–9 without the look-alikes 0, O, 1 and I', () => {
    expect(PAIRING_CODE_ALPHABET).toHaveLength(32);
    expect(new Set(PAIRING_CODE_ALPHABET).size).toBe(32);
    for (const c of '0O1I') expect(PAIRING_CODE_ALPHABET).not.toContain(c);
    expect([...PAIRING_CODE_ALPHABET].every((c) => /[A-Z2-9]/.test(c))).toBe(true);
  });

  it('generates 8 characters from the alphabet, using all of it, without repeats in practice', () => {
    const codes = Array.from({ length: 2000 }, () => generatePairingCode());
    for (const code of codes) {
      expect(code).toHaveLength(PAIRING_CODE_LENGTH);
      expect([...code].every((c) => PAIRING_CODE_ALPHABET.includes(c))).toBe(true);
    }
    expect(new Set(codes).size).toBe(codes.length);
    const seen = new Set(codes.join(''));
    expect(seen.size).toBe(PAIRING_CODE_ALPHABET.length);
  });

  it('normalizes what people type: case, spaces and dashes', () => {
    expect(normalizePairingCode('abcd-efgh')).toBe('ABCDEFGH');
    expect(normalizePairingCode(' ab cd ef gh ')).toBe('ABCDEFGH');
    expect(normalizePairingCode('ABCDEFG')).toBeNull();
    expect(normalizePairingCode('ABCDEFGHJ')).toBeNull();
    expect(normalizePairingCode('ABCDEFG0')).toBeNull();
    expect(normalizePairingCode('ABCDEFGI')).toBeNull();
  });

  it('tool approval ids (UUIDs) never look like pairing codes', () => {
    expect(looksLikePairingCode('0190aaaa-0000-7000-8000-000000000000')).toBe(false);
    expect(looksLikePairingCode('allow_once')).toBe(false);
    expect(looksLikePairingCode('K7QM2XPR')).toBe(true);
  });
});
