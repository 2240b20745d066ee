import { User } from './modules/users';
import { Identity } from './modules/users';
import { ApiToken } from './modules/auth';
import { Session } from './modules/sessions';
import { Message } from './modules/sessions';
import { Image } from './modules/sessions';
import { Memory } from './modules/memory';
import { MemoryIndexEntry } from './modules/memory';
import { MemoryEmbedding } from './modules/memory';
import { LearnedSkill } from './modules/skills';
import { Beat } from './modules/beats';
import { BeatRun } from './modules/beats';
import { PluginSetting } from './modules/plugins';
import { PairingRequest } from './modules/pairing';
import { ToolApproval } from './modules/tools';
import { AuditEntry } from './modules/audit';
import { UsageRecord } from './modules/usage';
import { Webhook } from './modules/webhooks';
import { Document, DocumentChunk } from './modules/documents';
import { VoicePreference } from './modules/voice';
import { McpServerRecord, McpCredential } from './modules/mcp';
import { ChannelSetup } from './modules/channel-setup';
import { UserBudget } from './modules/budgets';

/** Every entity of the data model, in one explicit list (no globbing); handed to the data source by its callers. */
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
  Webhook,
  Document,
  DocumentChunk,
  VoicePreference,
  McpServerRecord,
  McpCredential,
  ChannelSetup,
  UserBudget,
] as const;
