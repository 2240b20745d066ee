// === Float vectors as database bytes (float32, native byte order), shared by the vector tables and the
// search worker (which must not load TypeORM, so this lives apart from the embedder).

/** Bytes of a vector for a BLOB / bytea column. */
export function vectorBytes(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/**
 * A vector from its stored bytes: a view of them where they are 4-aligned (a driver's fresh buffer), else
 * a copy. Callers hand in bytes they own.
 */
export function vectorFromBytes(bytes: Uint8Array): Float32Array {
  if (bytes.byteOffset % 4 === 0) return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}
