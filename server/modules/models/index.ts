// Public surface of the model layer. Other modules import only from here.

// Commonly used
export type {
  ChatRole,
  ContentPart,
  ToolCall,
  ChatMessage,
  ToolSpec,
  Usage,
  ChatRequest,
  ToolChoice,
  ChatOptions,
  ChatResult,
  EmbedOptions,
  ModelProvider,
} from './model-provider';
export {
  ModelRouter,
  MODEL_ROLES,
  LOCAL_PROVIDER_NAME,
  MOCK_PROVIDER_NAME,
  MOCK_MODEL,
  probeOllama,
  createProvider,
  type ModelRole,
  type ModelRoute,
  type ModelRouterConfig,
  type ModelRouterOptions,
  type RoutedChatResult,
} from './model-router';
export {
  ModelError,
  ModelApiError,
  ContextLengthError,
  ModelTransportError,
  ModelResponseError,
  ModelAbortError,
  classifyModelError,
  isAbortError,
  parseRetryAfterMs,
  looksLikeContextLength,
  serializeModelError,
  deserializeModelError,
  type ModelErrorClass,
  type ModelErrorContext,
  type SerializedModelError,
  type HeaderSource,
} from './model.errors';
export { estimateTokens, estimateMessage, estimateMessages, estimateTools, MESSAGE_OVERHEAD_TOKENS, IMAGE_TOKENS } from './token-estimator';

// Providers
export { MockModelProvider, mockReplyText, splitIntoChunks, type MockStep, type MockErrorKind, type MockModelProviderOptions } from './mock-model-provider';
export { OpenAICompatibleModelProvider, type OpenAICompatibleModelProviderOptions } from './openai-compatible/openai-compatible-model-provider';
export { MODEL_PRESETS, resolveProviderConfig, redactUrl, type PresetName, type PresetDefinition, type ResolvedProviderConfig } from './presets';

// Wire helpers for experts (text tool calls, request mapping)
export { toolCallsAsText, contentAsText, toWireMessages, decodeBase64Embedding } from './openai-compatible/wire';

// Budgets: the guard every model call asks first
export { NO_BUDGETS, type BudgetGuard, type BudgetRequest, type BudgetHold, type BudgetAdmission, type BudgetCharge } from './budget-guard';

// Calls through the model-calls queue
export type { ModelCaller, ModelCallInput, ModelRouteInfo, CallPriority } from './model-caller';
export {
  ModelCallService,
  ModelCallJobError,
  parseWireModelError,
  type ModelCallJob,
  type ModelCallJobs,
  type ModelExecutor,
  type InteractiveMarks,
  type ModelCallFailure,
  type WireModelError,
} from './model-call.service';

// Voice: speech to text and text to speech (roles `transcribe`, `speech`)
export type { Transcriber, TranscriptionInput, Transcription, Speaker, SpeechAudio, SpeechFormat } from './audio-provider';
export { OpenAICompatibleTranscriber, OpenAICompatibleSpeaker, audioFileName, type OpenAICompatibleAudioOptions } from './openai-compatible/openai-compatible-audio';
export { audioRoutesFromConfig, type AudioRoutes } from './audio-router';
// Provider health (the console's providers & models page)
export { InMemoryProviderCallLog, loggedExecutor, type ProviderCallEntry, type ProviderCallLog } from './provider-call-log';
export {
  ProviderHealthService,
  ProviderHealth,
  type ProviderStatus,
  type ProviderTestResult,
  type RoleRoute,
  type ProviderHealthOptions,
} from './provider-health.service';
