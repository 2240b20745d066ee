import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { ToolApprovalsDocument, type ImageInput } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { trustAtLeast } from '../../lib/trust';
import { useQuery } from '../../lib/use-graphql';
import { ErrorBox, Loading, PageHeader } from '../../components/ui';
import { Link } from '../../lib/router';
import { useChat, type ChatItem } from './use-chat';
import { InlineApproval } from './inline-approval';
import { MicIcon, VoiceRecorder } from './voice-recorder';
import { MockModelNotice } from '../models/mock-model-notice';

const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

function readImage(file: File): Promise<ImageInput & { name: string; url: string }> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onerror = () => reject(new Error(`Cannot read ${file.name}`));
    r.onload = () => {
      const url = String(r.result);
      resolve({ name: file.name, url, mimeType: file.type, dataBase64: url.slice(url.indexOf(',') + 1) });
    };
    r.readAsDataURL(file);
  });
}

function Item({ item, canDecide, statusOf }: { item: ChatItem; canDecide: boolean; statusOf: Map<string, string> }) {
  switch (item.kind) {
    case 'message':
      return (
        <div className={`bubble ${item.role === 'USER' ? 'user' : item.role === 'SYSTEM' ? 'system' : ''}`}>
          {item.voiceSeconds != null ? (
            <div className="voice-tag">
              <MicIcon size={12} />
              Voice note · {`${Math.floor(item.voiceSeconds / 60)}:${String(item.voiceSeconds % 60).padStart(2, '0')}`}
            </div>
          ) : null}
          {item.content}
        </div>
      );
    case 'streaming':
      return (
        <div className="bubble streaming" aria-live="polite" data-testid="streaming">
          {item.content}
        </div>
      );
    case 'tool':
      return (
        <div className="tool-line">
          ⚙ {item.tool} {item.phase === 'started' ? '…' : (item.outcome ?? 'done')}
          {item.summary ? ` · ${item.summary}` : ''}
        </div>
      );
    case 'notice':
      if (item.approvalId && canDecide) return <InlineApproval id={item.approvalId} text={item.text} status={statusOf.get(item.approvalId) ?? null} />;
      if (item.beat) {
        return (
          <div className="bubble notice from-beat" data-beat={item.beat.id}>
            <div className="bubble-origin small">
              <svg className="origin-icon" viewBox="0 0 16 16" width="12" height="12" aria-hidden="true">
                <circle cx="8" cy="8" r="6.5" fill="none" stroke="currentColor" strokeWidth="1.5" />
                <path d="M8 4.5V8l2.5 1.5" fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinecap="round" />
              </svg>{' '}
              From the beat <Link to={`/beats/${item.beat.id}`}>{item.beat.name}</Link>
            </div>
            {item.text}
          </div>
        );
      }
      return <div className="bubble notice">{item.text}</div>;
  }
}

export function ChatPage() {
  const { me } = useAuth();
  const chat = useChat();
  const canDecide = trustAtLeast(me?.trust, 'ADMIN');
  const asksApproval = chat.items.some((i) => i.kind === 'notice' && i.approvalId);
  // Replayed approval notices show how they were decided (ADMIN and above may list approvals).
  const approvals = useQuery(ToolApprovalsDocument, { status: null }, { skip: !canDecide || !asksApproval, pollMs: 3000 });
  const statusOf = new Map((approvals.data?.toolApprovals ?? []).map((a) => [a.id, a.status as string]));
  const [text, setText] = useState('');
  const [images, setImages] = useState<Array<ImageInput & { name: string; url: string }>>([]);
  const [fileError, setFileError] = useState<string | null>(null);
  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    // Newer browsers return a promise from scrollIntoView; an effect must return nothing but a cleanup.
    void end.current?.scrollIntoView({ block: 'end' });
  }, [chat.items]);

  const submit = async (e?: FormEvent) => {
    e?.preventDefault();
    const t = text.trim();
    if (!t && !images.length) return;
    if (await chat.send(t || 'What is in this image?', images.map(({ mimeType, dataBase64 }) => ({ mimeType, dataBase64 })))) {
      setText('');
      setImages([]);
    }
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey) void submit(e as unknown as FormEvent);
  };
  const addFiles = async (files: FileList | null) => {
    setFileError(null);
    for (const f of Array.from(files ?? [])) {
      if (!/^image\/(png|jpeg|webp|gif)$/.test(f.type)) setFileError(`${f.name}: only PNG, JPEG, WebP and GIF images.`);
      else if (f.size > MAX_IMAGE_BYTES) setFileError(`${f.name} is larger than 5 MiB.`);
      else {
        const img = await readImage(f);
        setImages((list) => [...list, img]);
      }
    }
  };

  return (
    <>
      <PageHeader
        title="Chat"
        subtitle={<>Your web chat with the assistant; the microphone button records a voice note. Slash commands work here: <code>/help</code>, <code>/new</code>, <code>/status</code>, <code>/compact</code>.</>}
        actions={chat.running ? <button onClick={() => void chat.stop()}>Stop</button> : null}
      />
      <MockModelNotice />
      <div className="chat card">
        <div className="transcript" aria-label="Transcript" role="log" tabIndex={0}>
          {chat.loading ? <Loading /> : null}
          {!chat.loading && !chat.items.length ? (
            <div className="state">
              <strong>No messages yet</strong>Say hello, or try <code>/help</code>.
            </div>
          ) : null}
          {chat.items.map((item) => (
            <Item key={item.key} item={item} canDecide={canDecide} statusOf={statusOf} />
          ))}
          <div ref={end} />
        </div>
        <form className="stack" style={{ gap: 6 }} onSubmit={submit}>
          <ErrorBox error={chat.error} />
          {fileError ? <div className="alert">{fileError}</div> : null}
          {images.length ? (
            <div className="thumbs">
              {images.map((img, i) => (
                <button key={i} type="button" className="ghost small" title={`Remove ${img.name}`} onClick={() => setImages((l) => l.filter((_, j) => j !== i))}>
                  <img src={img.url} alt={img.name} />
                </button>
              ))}
            </div>
          ) : null}
          <div className="composer">
            <label className="button" title="Attach images">
              <svg width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" aria-hidden="true">
                <path d="M21 11.5l-8.6 8.6a5 5 0 01-7.1-7.1l8.6-8.6a3.5 3.5 0 015 5l-8.6 8.6a2 2 0 01-2.8-2.8l7.9-7.9" />
              </svg>
              <span className="sr-only">Attach images</span>
              <input type="file" accept="image/png,image/jpeg,image/webp,image/gif" multiple hidden onChange={(e) => void addFiles(e.target.files)} />
            </label>
            <VoiceRecorder onError={setFileError} onRecorded={async (r) => void (await chat.sendVoice(r.blob, r.mimeType, r.seconds))} />
            <textarea aria-label="Message" placeholder="Message the assistant (Enter sends, Shift+Enter for a new line)" value={text} onChange={(e) => setText(e.target.value)} onKeyDown={onKey} rows={2} />
            <button className="primary" type="submit">
              Send
            </button>
          </div>
        </form>
      </div>
    </>
  );
}
