// Public surface of voice notes in and out (DESIGN §10). Other modules import only from here.
export type { InboundVoice, TranscribeJob, SpeakJob, VoiceJobs, AudioStash, TranscribeOutcome } from './voice.types';
export { RetryableVoiceError } from './voice.types';
export { VoiceNoteService, VOICE_MESSAGES, type VoiceNoteDeps, type VoiceNoteOrigin } from './voice-notes.service';
export { VoiceReplyService, speakable, type VoiceReplyDeps, type VoiceOutbox, type SpeakOutcome } from './voice-replies.service';
export { VoicePreferences, registerVoiceCommands } from './voice-commands';
export { VoicePreference, type VoiceReplyMode } from './voice-preference.entity';
export { inspectAudio, formatDuration, InvalidAudioError, type AudioInfo, type AudioContainer } from './audio-format';
export { FfmpegConverter, FfmpegMissingError } from './ffmpeg';
