/** `error.type` values of OpenAI's error body. */
export type OpenAIErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error' | 'rate_limit_error' | 'insufficient_quota' | 'api_error';

/**
 * An error answered in OpenAI's shape, `{ error: { message, type, param, code } }`, with its HTTP status
 * (and `Retry-After` for 429), so every OpenAI client shows it as it would OpenAI's own.
 */
export class OpenAIError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: OpenAIErrorType,
    readonly code: string | null,
    readonly param: string | null = null,
    readonly retryAfterSeconds: number | null = null,
    /** False tells OpenAI's SDKs not to retry (`x-should-retry: false`); null leaves it to them. */
    readonly shouldRetry: boolean | null = null,
  ) {
    super(message);
    this.name = 'OpenAIError';
  }

  body(): { error: { message: string; type: OpenAIErrorType; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }

  static invalid(message: string, param: string | null = null, code = 'invalid_value'): OpenAIError {
    return new OpenAIError(400, message, 'invalid_request_error', code, param);
  }

  static unauthenticated(message: string): OpenAIError {
    return new OpenAIError(401, message, 'authentication_error', 'invalid_api_key');
  }

  static forbidden(message: string, code = 'permission_denied'): OpenAIError {
    return new OpenAIError(403, message, 'permission_error', code);
  }

  static modelNotFound(model: string): OpenAIError {
    return new OpenAIError(404, `The model '${model}' does not exist. GET /v1/models lists the models of this server.`, 'invalid_request_error', 'model_not_found', 'model');
  }

  static tooLarge(message: string, param: string | null = null): OpenAIError {
    return new OpenAIError(413, message, 'invalid_request_error', 'request_too_large', param);
  }

  static rateLimited(retryAfterSeconds: number): OpenAIError {
    return new OpenAIError(429, `Rate limit reached for this API token; try again in ${retryAfterSeconds} s.`, 'rate_limit_error', 'rate_limit_exceeded', null, retryAfterSeconds);
  }

  /**
   * The user's budget is spent (BUDGET_EXCEEDED): 429 with OpenAI's own quota type, so clients show it as
   * they show a spent OpenAI quota; `Retry-After` says when it resets, and SDKs are told not to retry.
   */
  static budgetExceeded(message: string, retryAfterSeconds: number | null): OpenAIError {
    return new OpenAIError(429, message, 'insufficient_quota', 'BUDGET_EXCEEDED', null, retryAfterSeconds, false);
  }

  static unavailable(message: string): OpenAIError {
    return new OpenAIError(503, message, 'api_error', 'service_unavailable');
  }

  static upstream(message: string): OpenAIError {
    return new OpenAIError(502, message, 'api_error', 'upstream_error');
  }
}
