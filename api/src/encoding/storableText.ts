/**
 * Whether a string can be stored and echoed as is: Postgres text and jsonb refuse U+0000, and jsonb refuses an
 * unpaired UTF-16 surrogate (JSON.stringify writes it as a \ud800 escape), so either would fail deep in a use case
 * (a 500) instead of where the input is read. Used by the route table (parsed requests, credentials) and by
 * multipart uploads (text fields, file names).
 */
export function isStorableText(text: string): boolean {
  return !/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}
