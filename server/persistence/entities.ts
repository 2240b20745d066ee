import { User } from '../modules/users/user.entity';
import { Identity } from '../modules/users/identity.entity';
import { ApiToken } from '../modules/auth/api-token.entity';
import { Session } from '../modules/sessions/session.entity';
import { Message } from '../modules/sessions/message.entity';
import { Image } from '../modules/sessions/image.entity';
import { Memory } from '../modules/memory/memory.entity';
import { MemoryIndexEntry } from '../modules/memory/memory-index-entry.entity';
import { MemoryEmbedding } from '../modules/memory/memory-embedding.entity';
import { LearnedSkill } from '../modules/skills/learned-skill.entity';
import { Beat } from '../modules/beats/beat.entity';
import { BeatRun } from '../modules/beats/beat-run.entity';
import { PluginSetting } from '../modules/plugins/plugin-setting.entity';
import { PairingRequest } from '../modules/pairing/pairing-request.entity';
import { ToolApproval } from '../modules/tools/tool-approval.entity';
import { AuditEntry } from '../modules/audit/audit-entry.entity';
import { UsageRecord } from '../modules/usage/usage-record.entity';

/** Every entity of the data model, in one explicit list (no globbing). */
export const ENTITIES = [
  User,
  Identity,
  ApiToken,
  Session,
  Message,
  Image,
  Memory,
  MemoryIndexEntry,
  MemoryEmbedding,
  LearnedSkill,
  Beat,
  BeatRun,
  PluginSetting,
  PairingRequest,
  ToolApproval,
  AuditEntry,
  UsageRecord,
] as const;
