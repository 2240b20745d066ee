export { Session } from './session.entity';
export { Message } from './message.entity';
export { Image } from './image.entity';
export { SessionStatus, ChatKind, MessageRole, MessageStatus } from './session.types';
export { SessionService, type SessionFilter } from './session.service';
export { SessionLifecycleService, type SessionAttrs } from './session-lifecycle.service';
export { sessionKeyFor, type SessionKeyInput } from './session-keys';
