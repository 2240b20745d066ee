export type { SessionEvent, SessionEventBody, SessionEventPublisher, SessionEventSource } from './session-event.types';
