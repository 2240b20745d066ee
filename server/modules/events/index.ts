export type { SessionEvent, SessionEventBody, SessionEventPublisher, SessionEventSource } from './session-event.types';
export type { NoticeOrigin, NoticeSender, NoticeTarget } from './notice-sender';
