export { TurnService, type TurnTicket, type SubmitInput, type InboundImage, type TurnExecutor, type QueueMode } from './turn.service';
export { RunningTurns, TurnAbortedError } from './running-turns';
export { TurnRunner, type DrainOutcome, type SessionChores } from './turn-runner';
export { TurnControl } from './turn-control';
export { DirectTurns } from './direct-turns';
export { withSessionLock, type SessionLocks, type HeldSessionLock } from './session-locks';
export type { TurnScheduler, TurnJobs, TurnAbortBus, AbortRequest, TurnReservation, ClaimedTurn } from './turn-scheduler';
export { SessionRotation, type RotationReason } from './session-rotation';
