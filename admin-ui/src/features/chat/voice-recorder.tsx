import { useEffect, useRef, useState } from 'react';

/** What MediaRecorder should produce, best first: Opus in WebM (Chromium, Firefox) or OGG, else AAC in MP4 (Safari). */
const PREFERRED_TYPES = ['audio/webm;codecs=opus', 'audio/ogg;codecs=opus', 'audio/webm', 'audio/mp4'];

/** A microphone outline (emoji fonts are not everywhere). */
export function MicIcon({ size }: { size: number }) {
  return (
    <svg width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" aria-hidden="true">
      <rect x="9" y="2" width="6" height="12" rx="3" />
      <path d="M5 10a7 7 0 0014 0M12 17v5" />
    </svg>
  );
}

/** A recording ready to send: its bytes, type and measured length. */
export interface Recording {
  blob: Blob;
  mimeType: string;
  seconds: number;
}

const clock = (seconds: number) => `${Math.floor(seconds / 60)}:${String(Math.floor(seconds % 60)).padStart(2, '0')}`;

/**
 * The chat's microphone button: click to record (the browser asks for the microphone once), click "Send
 * voice note" to stop and send, or cancel. Shows the running length; reports why it cannot record
 * through `onError` (no microphone, permission denied, no MediaRecorder).
 */
export function VoiceRecorder({ onRecorded, onError }: { onRecorded: (r: Recording) => Promise<void> | void; onError: (message: string | null) => void }) {
  const [recording, setRecording] = useState(false);
  const [elapsed, setElapsed] = useState(0);
  const recorder = useRef<MediaRecorder | null>(null);
  const cancelled = useRef(false);
  const startedAt = useRef(0);

  useEffect(() => {
    if (!recording) return;
    const timer = setInterval(() => setElapsed((Date.now() - startedAt.current) / 1000), 250);
    return () => clearInterval(timer);
  }, [recording]);
  // Leaving the page while recording releases the microphone.
  useEffect(
    () => () => {
      cancelled.current = true;
      if (recorder.current?.state === 'recording') recorder.current.stop();
    },
    [],
  );

  const start = async () => {
    onError(null);
    if (typeof MediaRecorder === 'undefined' || !navigator.mediaDevices?.getUserMedia) {
      onError('This browser cannot record audio here (it needs HTTPS or localhost).');
      return;
    }
    let stream: MediaStream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch (e) {
      onError((e as DOMException).name === 'NotAllowedError' ? 'Microphone access was denied.' : `No microphone: ${(e as Error).message}`);
      return;
    }
    const mimeType = PREFERRED_TYPES.find((t) => MediaRecorder.isTypeSupported(t));
    const rec = new MediaRecorder(stream, mimeType ? { mimeType } : undefined);
    const chunks: Blob[] = [];
    rec.ondataavailable = (e) => {
      if (e.data.size) chunks.push(e.data);
    };
    rec.onstop = () => {
      stream.getTracks().forEach((t) => t.stop());
      setRecording(false);
      recorder.current = null;
      if (cancelled.current || !chunks.length) return;
      const type = rec.mimeType || mimeType || chunks[0]!.type || 'audio/webm';
      void onRecorded({ blob: new Blob(chunks, { type }), mimeType: type, seconds: Math.round(((Date.now() - startedAt.current) / 1000) * 10) / 10 });
    };
    cancelled.current = false;
    startedAt.current = Date.now();
    setElapsed(0);
    recorder.current = rec;
    rec.start(1000);
    setRecording(true);
  };

  const stop = (cancel: boolean) => {
    cancelled.current = cancel;
    recorder.current?.stop();
  };

  if (recording) {
    return (
      <div className="recorder" role="status" aria-label="Recording">
        <span className="rec-dot" aria-hidden="true" />
        <span>Recording</span>
        <span className="rec-time">{clock(elapsed)}</span>
        <button type="button" className="ghost small" onClick={() => stop(true)}>
          Cancel
        </button>
        <button type="button" className="primary small" onClick={() => stop(false)}>
          Send voice note
        </button>
      </div>
    );
  }
  return (
    <button type="button" title="Record a voice note" onClick={() => void start()}>
        <svg width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" aria-hidden="true">
          <rect x="9" y="2" width="6" height="12" rx="3" />
          <path d="M5 10a7 7 0 0014 0M12 17v5" />
        </svg>
      <span className="sr-only">Record a voice note</span>
    </button>
  );
}
