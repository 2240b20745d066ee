// In-process implementations of the server's ports, for unit tests (each is a small honest version of
// the port, not a mock). Protocol fakes that speak over real sockets stay in ../fakes.
export { InProcessTurnJobs, InProcessAbortBus, InProcessSessionLocks, inProcessTurnScheduler, type ScheduledDrain } from './turn-ports';
export { ScriptedModelCaller, InProcessModelCallJobs, type ScriptedAnswer, type RecordedCall } from './model-ports';
export { InMemoryMailbox, InProcessDeliveryJobs, RecordingOutbound } from './outbound-ports';
export { InMemorySessionEvents } from './session-events';
export { InMemoryDeduper, RecordingReplier } from './inbound-ports';
export { FakeClock } from '../fakes/fake-clock';
