import type { AppConfig } from '../config';
import type { Logger } from '../common/logger';
import type { Db } from '../persistence/db';
import type { SenderPolicy } from '../channels/inbound-pipeline';
import type { AuditService } from '../modules/audit';
import type { UserService } from '../modules/users';

export interface SenderPolicyDeps {
  config: AppConfig;
  logger: Logger;
  db: Db;
  users: UserService;
  audit: AuditService;
}

/**
 * The unknown-sender policy of each platform channel (DESIGN §3: pairing, open, allowlist, disabled)
 * and the gating of known senders (GUEST rate limits, group allowlists). Channels without an entry
 * refuse unknown senders.
 */
export function createSenderPolicies(_deps: SenderPolicyDeps): Map<string, SenderPolicy> {
  return new Map();
}
