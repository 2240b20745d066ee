import { ConfigError } from '../../common/errors';
import type { AppConfig } from '../../config';
import { audioRoutesFromConfig } from '../../modules/models';
import { FfmpegConverter } from '../../modules/voice';
import type { CheckResult } from './check';

type Route = NonNullable<AppConfig['ai']['roles']['transcribe']>;

const describeRoute = (route: Route) => `${route.provider}/${route.model ?? '?'}`;

/**
 * Voice: the `transcribe` and `speech` roles are built as the server builds them (a role on an undefined
 * provider, the mock or without a model fails), then what they do is reported, with a warning for
 * settings that make them do nothing (a speech role without voice notes to answer). Unset roles are
 * fine: voice is optional.
 */
export function checkVoice(config: AppConfig, env: NodeJS.ProcessEnv): CheckResult {
  const { transcribe, speech } = config.ai.roles;
  const voice = config.voice;
  if (!transcribe && !speech) {
    return { name: 'voice', verdict: 'ok', message: 'off (no ai.roles.transcribe or ai.roles.speech); voice notes are answered with "not set up"' };
  }
  const parts: string[] = [];
  parts.push(transcribe ? `voice notes transcribed by ${describeRoute(transcribe)} (up to ${voice.max_seconds} s)` : 'voice notes not set up (no ai.roles.transcribe)');
  if (!speech) parts.push('replies are text (no ai.roles.speech)');
  else if (voice.reply === 'never') parts.push('spoken replies off (voice.reply: never; users can turn them on with /voice on)');
  else parts.push(`spoken replies (${voice.reply}) by ${describeRoute(speech)} as ${voice.speech_format}`);
  const message = parts.join('; ');
  try {
    audioRoutesFromConfig(config, { env });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { name: 'voice', verdict: 'FAIL', message: err.message };
  }
  if (speech && !transcribe && voice.reply === 'when_voice') {
    return { name: 'voice', verdict: 'warn', message, hint: 'spoken replies answer voice notes, which need ai.roles.transcribe; set it, or voice.reply: always' };
  }
  return { name: 'voice', verdict: 'ok', message };
}

/**
 * ffmpeg (`voice.ffmpeg`): runs `ffmpeg -version`. It is needed only to convert speech that is not
 * OGG/Opus already, so a missing ffmpeg is a warning while spoken replies are on (they go out as text
 * when conversion is needed) and fine otherwise.
 */
export async function checkFfmpeg(config: AppConfig): Promise<CheckResult> {
  const binary = config.voice.ffmpeg;
  const version = await new FfmpegConverter(binary, 10_000).version();
  if (version) return { name: 'ffmpeg', verdict: 'ok', message: `${version.replace(/\s+Copyright.*$/i, '')} (voice.ffmpeg = "${binary}")` };
  const message = `not found (voice.ffmpeg = "${binary}")`;
  const speaking = !!config.ai.roles.speech && config.voice.reply !== 'never';
  if (!speaking) return { name: 'ffmpeg', verdict: 'ok', message: `${message}; only needed for spoken replies, which are off` };
  if (config.voice.speech_format !== 'opus') {
    return { name: 'ffmpeg', verdict: 'warn', message: `${message}; spoken replies in ${config.voice.speech_format} cannot be converted to OGG/Opus and go out as text`, hint: 'install ffmpeg (apt-get install ffmpeg), point voice.ffmpeg at it, or set voice.speech_format: opus' };
  }
  return { name: 'ffmpeg', verdict: 'warn', message: `${message}; spoken replies work only while the speech server answers in OGG/Opus`, hint: 'install ffmpeg (apt-get install ffmpeg) or point voice.ffmpeg at it' };
}
