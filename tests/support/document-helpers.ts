import { dataOf, type GraphQLTestClient } from './graphql-client';
import { AddDocumentDocument, DocumentByIdDocument } from './graphql/generated';
import { eventually } from './chat-helpers';

export type DocumentRow = Awaited<ReturnType<typeof documentById>>;

export async function documentById(client: GraphQLTestClient, id: string) {
  return dataOf(await client.http(DocumentByIdDocument, { id })).document;
}

/** Adds a document through `addDocument` and returns its row. */
export async function addDocument(client: GraphQLTestClient, name: string, data: Buffer, mimeType: string | null = null, scope?: 'USER' | 'GROUP' | 'GLOBAL', groupId?: string) {
  return dataOf(await client.http(AddDocumentDocument, { input: { name, mimeType, contentBase64: data.toString('base64'), scope, groupId } })).addDocument;
}

/** Waits until the document is READY or FAILED and returns it. */
export function settled(client: GraphQLTestClient, id: string, timeoutMs = 60_000): Promise<DocumentRow> {
  return eventually(async () => {
    const doc = await documentById(client, id);
    return doc.status === 'READY' || doc.status === 'FAILED' ? doc : undefined;
  }, timeoutMs, `document ${id} to settle`);
}

/** `POST /uploads` with one file part (and optional fields before it). */
export async function upload(url: string, token: string | null, file: { name: string; type: string; data: Buffer }, fields: Record<string, string> = {}): Promise<{ status: number; body: { id?: string; status?: string; jobId?: string; errors?: Array<{ message: string; extensions: { code: string } }> } }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([file.data], { type: file.type }), file.name);
  const res = await fetch(`${url}/uploads`, { method: 'POST', body: form, headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { raw: text };
  }
  return { status: res.status, body: body as never };
}
