/**
 * Removes secrets from text before it is written anywhere (logs, error messages). It knows two kinds:
 * values registered at runtime (bot tokens, provider API keys, the owner token) and anything shaped like
 * a Muninn API token, a webhook secret or a bearer header.
 */
export class SecretRedactor {
  private readonly secrets = new Set<string>();
  private static readonly PATTERNS: readonly RegExp[] = [
    /mun_[A-Za-z0-9_-]{20,}/g,
    /whk_[A-Za-z0-9_-]{20,}/g,
    /(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
    /\bbot\d{5,}:[A-Za-z0-9_-]{20,}/g,
  ];

  /** Registers a secret value; values shorter than 6 characters are ignored to avoid mangling logs. */
  add(secret: string | null | undefined): void {
    if (secret && secret.length >= 6) this.secrets.add(secret);
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) {
      if (out.includes(secret)) out = out.split(secret).join('[REDACTED]');
    }
    for (const pattern of SecretRedactor.PATTERNS) {
      out = out.replace(pattern, (_m, prefix: unknown) =>
        typeof prefix === 'string' ? `${prefix}[REDACTED]` : '[REDACTED]',
      );
    }
    return out;
  }
}
