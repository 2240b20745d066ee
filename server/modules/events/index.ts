export type { SessionEvent, SessionEventBody, SessionEventPublisher, SessionEventSource } from './session-event.types';
export type { NoticeSender, NoticeTarget } from './notice-sender';
