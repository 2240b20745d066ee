// === Audio containers: what a file is, and how long it plays, read from its bytes
// Platforms declare a type and a duration, but the bytes decide: a file that is no audio container we know
// is refused before it reaches the transcriber, and the length of OGG and WAV files is measured, so a
// note that lies about its duration cannot get past `voice.max_seconds`.

/** Containers the transcription endpoints accept. */
export type AudioContainer = 'ogg' | 'webm' | 'mp3' | 'wav' | 'mp4' | 'flac';

/** What the bytes of an audio file say about it. */
export interface AudioInfo {
  container: AudioContainer;
  /** The content type to send it as. */
  mimeType: string;
  /** Play time measured from the container (OGG, WAV); null when it cannot be measured cheaply. */
  seconds: number | null;
}

const MIME: Record<AudioContainer, string> = {
  ogg: 'audio/ogg',
  webm: 'audio/webm',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  mp4: 'audio/mp4',
  flac: 'audio/flac',
};

/** Thrown for bytes that are not a (well-formed) audio file. */
export class InvalidAudioError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidAudioError';
  }
}

/**
 * Identifies the container by its magic bytes and measures OGG (Opus, Vorbis) and WAV files. Throws
 * {@link InvalidAudioError} for anything else, or for an OGG/WAV file whose structure is broken.
 */
export function inspectAudio(data: Buffer): AudioInfo {
  if (data.length < 12) throw new InvalidAudioError('the file is too short to be audio');
  const ascii = (from: number, to: number) => data.toString('latin1', from, to);
  if (ascii(0, 4) === 'OggS') return { container: 'ogg', mimeType: MIME.ogg, seconds: oggSeconds(data) };
  if (data.readUInt32BE(0) === 0x1a45dfa3) return { container: 'webm', mimeType: MIME.webm, seconds: null };
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return { container: 'wav', mimeType: MIME.wav, seconds: wavSeconds(data) };
  if (ascii(0, 4) === 'fLaC') return { container: 'flac', mimeType: MIME.flac, seconds: null };
  if (ascii(4, 8) === 'ftyp') return { container: 'mp4', mimeType: MIME.mp4, seconds: null };
  if (ascii(0, 3) === 'ID3' || (data[0] === 0xff && (data[1]! & 0xe0) === 0xe0)) return { container: 'mp3', mimeType: MIME.mp3, seconds: null };
  throw new InvalidAudioError('the file is not in an audio format I know (OGG, WebM, MP3, WAV, M4A, FLAC)');
}

/**
 * Walks the OGG pages (RFC 3533) of the first logical stream: each must start with `OggS` and fit the
 * file. Play time = last granule position / sample rate (Opus: 48 kHz minus the pre-skip; Vorbis: the
 * rate of its identification header).
 */
function oggSeconds(data: Buffer): number {
  let offset = 0;
  let serial: number | null = null;
  let granule = 0n;
  let rate = 0;
  let preSkip = 0;
  let pages = 0;
  while (offset < data.length) {
    if (offset + 27 > data.length || data.toString('latin1', offset, offset + 4) !== 'OggS') throw new InvalidAudioError(`broken OGG page at byte ${offset}`);
    const segments = data[offset + 26]!;
    const tableEnd = offset + 27 + segments;
    if (tableEnd > data.length) throw new InvalidAudioError(`broken OGG page at byte ${offset}`);
    let bodyLength = 0;
    for (let i = offset + 27; i < tableEnd; i++) bodyLength += data[i]!;
    const end = tableEnd + bodyLength;
    if (end > data.length) throw new InvalidAudioError(`OGG page at byte ${offset} runs past the end of the file`);
    const pageSerial = data.readUInt32LE(offset + 14);
    serial ??= pageSerial;
    if (pageSerial === serial) {
      if (pages === 0) {
        const head = data.subarray(tableEnd, end);
        if (head.toString('latin1', 0, 8) === 'OpusHead' && head.length >= 12) {
          rate = 48_000;
          preSkip = head.readUInt16LE(10);
        } else if (head[0] === 1 && head.toString('latin1', 1, 7) === 'vorbis' && head.length >= 16) {
          rate = head.readUInt32LE(12);
        } else throw new InvalidAudioError('the OGG file holds no Opus or Vorbis audio');
      }
      const g = data.readBigInt64LE(offset + 6);
      if (g > granule) granule = g;
      pages += 1;
    }
    offset = end;
  }
  if (!rate || pages < 2) throw new InvalidAudioError('the OGG file has no audio pages');
  return Math.max(0, Number(granule - BigInt(preSkip)) / rate);
}

/** `data` chunk length / byte rate of the `fmt ` chunk. */
function wavSeconds(data: Buffer): number {
  let offset = 12;
  let byteRate = 0;
  while (offset + 8 <= data.length) {
    const id = data.toString('latin1', offset, offset + 4);
    const size = data.readUInt32LE(offset + 4);
    if (id === 'fmt ' && offset + 16 <= data.length) byteRate = data.readUInt32LE(offset + 16);
    if (id === 'data') {
      if (!byteRate) throw new InvalidAudioError('the WAV file has no format chunk before its data');
      return Math.min(size, data.length - offset - 8) / byteRate;
    }
    offset += 8 + size + (size % 2);
  }
  throw new InvalidAudioError('the WAV file has no data chunk');
}

/** `75` → `1:15`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}
