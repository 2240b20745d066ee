/**
 * Downloads a file from the Bot API file endpoint (`<apiRoot>/file/bot<token>/<file_path>`), reading
 * at most `maxBytes`. Returns null when the file is larger. Errors never carry the URL (it holds the
 * bot token): they name only the HTTP status or the network error code.
 */
export async function downloadBotFile(url: string, maxBytes: number, signal?: AbortSignal): Promise<Buffer | null> {
  let res: Response;
  try {
    res = await fetch(url, { signal });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    throw new Error(`file download failed (${cause})`);
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`file download failed (HTTP ${res.status})`);
  }
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    await res.body.cancel().catch(() => undefined);
    return null;
  }
  const parts: Buffer[] = [];
  let total = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    parts.push(Buffer.from(value));
  }
  return Buffer.concat(parts);
}
