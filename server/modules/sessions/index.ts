export { Session } from './session.entity';
export { Message } from './message.entity';
export { Image } from './image.entity';
export { SessionStatus, ChatKind, MessageRole, MessageStatus } from './session.types';
export { SessionService, type SessionFilter } from './session.service';
export { successorOf } from './session-lifecycle.service';
export { SessionLifecycleService, type SessionAttrs } from './session-lifecycle.service';
export { sessionKeyFor, type SessionKeyInput } from './session-keys';
export {
  SessionExpiryService,
  expiryReason,
  lastDailyReset,
  type SessionExpiryRules,
  type ExpiryReason,
} from './session-expiry';
export {
  SessionMaintenanceService,
  type ExportedMessage,
  type TurnStopper,
} from './session-maintenance.service';
