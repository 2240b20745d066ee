export { TurnService, type TurnTicket, type SubmitInput, type InboundImage, type TurnRunner, type QueueMode } from './turn.service';
export { RunningTurns, TurnAbortedError } from './running-turns';
export type { TurnScheduler } from './turn-scheduler';
