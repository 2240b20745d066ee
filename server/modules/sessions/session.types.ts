import { registerEnumType } from 'type-graphql';

export enum SessionStatus {
  ACTIVE = 'ACTIVE',
  ARCHIVED = 'ARCHIVED',
}
registerEnumType(SessionStatus, { name: 'SessionStatus' });

export enum ChatKind {
  DM = 'DM',
  GROUP = 'GROUP',
}
registerEnumType(ChatKind, { name: 'ChatKind' });

export enum MessageRole {
  USER = 'USER',
  ASSISTANT = 'ASSISTANT',
  SYSTEM = 'SYSTEM',
  TOOL = 'TOOL',
}
registerEnumType(MessageRole, { name: 'MessageRole' });

/** Processing state of a message: inbound messages wait for their turn, replies are delivered. */
export enum MessageStatus {
  QUEUED = 'QUEUED',
  PROCESSING = 'PROCESSING',
  DONE = 'DONE',
  FAILED = 'FAILED',
  CANCELLED = 'CANCELLED',
}
registerEnumType(MessageStatus, { name: 'MessageStatus' });
