import { createHash } from 'node:crypto';

// === Text handling shared by the memory stores: tokens, query terms, content hashes
// Tokens follow SQLite FTS5's `unicode61 remove_diacritics 2` tokenizer closely enough that what the
// keyword index matched can be re-checked in JS: runs of letters and digits, case- and accent-folded.

/** Words too common to carry meaning in a query (English and German). */
const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does doing for from had has have having he her hers him his how i if in into is it its ' +
    'just me my myself no not of on or our ours she so some than that the their them then there these they this those to too us very was we were ' +
    'what when where which who whom why will with would you your yours yourself please tell know remember about again also any ' +
    'der die das den dem des ein eine einer eines einem einen und oder aber ist sind war waren bin bist hat habe haben hatte ich du er sie es wir ihr ' +
    'mich dich sich mir dir uns euch mein meine dein deine sein seine nicht kein keine mit von zu zum zur im in am an auf aus bei fur nach uber ' +
    'unter vor was wer wie wo warum wann welche welcher welches noch schon auch nur so dass da denn doch ja nein'
  ).split(/\s+/),
);

/** Most terms taken from one query; long messages keep their first distinct words. */
export const MAX_QUERY_TERMS = 32;

/** Lower-cases and strips diacritics (ü → u, é → e). */
export function foldText(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
}

/** Letter/digit runs of `text`, folded. */
export function tokenize(text: string): string[] {
  return foldText(text).match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Distinct, meaningful search terms of a query (no stopwords, no single letters), in order, capped. */
export function queryTerms(query: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const token of tokenize(query)) {
    if (seen.has(token) || STOPWORDS.has(token)) continue;
    if (token.length < 2 && !/\d/.test(token)) continue;
    seen.add(token);
    out.push(token);
    if (out.length >= MAX_QUERY_TERMS) break;
  }
  return out;
}

/** sha256 (hex) of a text: the key of the embedding cache and of "did this content change". */
export function contentHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
