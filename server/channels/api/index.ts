export { ApiChannel, completionId, API_CHANNEL, DEFAULT_MODEL, SESSION_KEY_PATTERN, TOOL_RESULTS_NOTE, isStatelessApiSession, type ApiCaller, type ApiChannelDeps, type ApiModel, type CompletionOutcome } from './api-channel';
export { ImageFetcher, type ImageFetcherOptions } from './image-fetcher';
export { OpenAIError, type OpenAIErrorType } from './openai-errors';
export { parseChatCompletionRequest, type ApiRequestLimits, type ChatCompletionRequest, type ApiMessage } from './openai-request';
export { ChunkWriter, completionBody, modelList, modelObject } from './openai-response';
