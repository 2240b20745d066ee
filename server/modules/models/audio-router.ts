import { ConfigError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import type { SecretRedactor } from '../../common/secret-redactor';
import type { AppConfig, VoiceConfig } from '../../config';
import type { Speaker, Transcriber } from './audio-provider';
import { OpenAICompatibleSpeaker, OpenAICompatibleTranscriber } from './openai-compatible/openai-compatible-audio';
import { resolveProviderConfig } from './presets';

/** The voice roles of a config: each null when its role is not set (voice notes / spoken replies off). */
export interface AudioRoutes {
  transcriber: Transcriber | null;
  speaker: Speaker | null;
}

/**
 * Builds the `transcribe` and `speech` roles (`ai.roles.transcribe`, `ai.roles.speech`) on their providers'
 * base URL and key. Unlike the chat roles they never fall back to the first provider: unset means off.
 * Throws `ConfigError` for a role on the mock provider or without a model.
 */
export function audioRoutesFromConfig(
  config: Pick<AppConfig, 'ai'> & { voice: Pick<VoiceConfig, 'timeout_ms' | 'speech_voice' | 'speech_format'> },
  options: { env?: NodeJS.ProcessEnv; redactor?: SecretRedactor; logger?: Logger } = {},
): AudioRoutes {
  const endpoint = (role: 'transcribe' | 'speech') => {
    const route = config.ai.roles[role];
    if (!route) return null;
    const key = `ai.roles.${role}`;
    const entry = config.ai.providers[route.provider];
    if (!entry) throw new ConfigError(`config key "${key}.provider": provider "${route.provider}" is not defined. Fix: add it under ai.providers.`);
    const resolved = resolveProviderConfig(route.provider, entry, options.env ?? process.env);
    if (resolved.kind !== 'openai-compatible') {
      throw new ConfigError(`config key "${key}.provider": provider "${route.provider}" is the mock, which has no audio endpoints. Fix: point ${key} at an OpenAI-compatible provider.`);
    }
    const model = route.model;
    if (!model) {
      throw new ConfigError(`config key "${key}.model" is not set. Fix: name the ${role === 'transcribe' ? 'speech-to-text model, e.g. "whisper-1"' : 'text-to-speech model, e.g. "tts-1"'}.`);
    }
    options.redactor?.add(resolved.apiKey);
    return { provider: route.provider, baseUrl: resolved.baseUrl, apiKey: resolved.apiKey, model, timeoutMs: config.voice.timeout_ms, logger: options.logger };
  };
  const t = endpoint('transcribe');
  const s = endpoint('speech');
  return {
    transcriber: t ? new OpenAICompatibleTranscriber(t) : null,
    speaker: s ? new OpenAICompatibleSpeaker(s, { voice: config.voice.speech_voice, format: config.voice.speech_format }) : null,
  };
}
