export { AgentLoop, CONVERSATION_TURN, type AgentLoopDeps, type AgentLoopOptions, type TurnProfile } from './agent-loop';
export {
  NO_MEMORIES,
  NO_SKILLS,
  NO_EXCHANGE_LISTENER,
  NO_COMPACTOR,
  NO_CLIENT_REQUESTS,
  type ClientRequests,
  type ClientTurnRequest,
  type AgentTools,
  type AgentToolContext,
  type AgentToolOutcome,
  type MemoryRecall,
  type RecalledMemory,
  type SkillSource,
  type SkillText,
  type OutboundRequest,
  type OutboundSender,
  type ExchangeListener,
  type ChatPresence,
  type TurnCompactor,
} from './agent.ports';
export { ModelCallExecutor, classifyAnswerStart, holdBackToolCallText } from './model-call-executor';
export { ReplyRedelivery } from './reply-redelivery';
