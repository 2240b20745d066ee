/** What `POST /uploads` answered. */
export type UploadOutcome = { ok: true; id: string; name: string } | { ok: false; message: string };

/**
 * Sends one file to `POST /uploads` (multipart, the console's token as Bearer) and reports the bytes sent
 * as they go: fetch cannot tell upload progress, XMLHttpRequest can. `scope` goes before the file part, as
 * the endpoint reads fields only until the file.
 */
export function uploadFile(token: string, file: File, scope: string, onProgress: (percent: number) => void): Promise<UploadOutcome> {
  return new Promise((resolve) => {
    const body = new FormData();
    body.append('scope', scope);
    body.append('file', file, file.name);
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/uploads');
    xhr.setRequestHeader('Authorization', `Bearer ${token}`);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(Math.round((e.loaded / e.total) * 100));
    };
    xhr.onload = () => {
      let json: { id?: string; name?: string; errors?: Array<{ message?: string }> } = {};
      try {
        json = JSON.parse(xhr.responseText || '{}') as typeof json;
      } catch {
        /* not JSON: a proxy's page */
      }
      if (xhr.status === 201 && json.id) resolve({ ok: true, id: json.id, name: json.name ?? file.name });
      else resolve({ ok: false, message: json.errors?.[0]?.message ?? `The upload failed (HTTP ${xhr.status}).` });
    };
    xhr.onerror = () => resolve({ ok: false, message: 'The upload was cut off (network error).' });
    xhr.send(body);
  });
}
