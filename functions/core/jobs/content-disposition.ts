/**
 * `Content-Disposition` for a download name, shared by direct responses (functions/http) and signed storage links
 * (BlobStore.signedGetUrl): a quoted ASCII fallback plus the RFC 5987 `filename*` UTF-8 form, so any name (spaces,
 * umlauts, quotes, apostrophes) survives and the header stays valid.
 */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  // Half a surrogate pair is not text (encodeURIComponent would throw): it becomes `_` like any unsafe character.
  const filename = name.replace(/\p{Cs}/gu, '_');
  // The fallback, for clients that ignore filename*: accents dropped (café → cafe), then one `_` per other character.
  const ascii = filename
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\x20-\x7e]|["\\]/gu, '_');
  // encodeURIComponent leaves ' ( ) * as they are, but RFC 5987's attr-char does not allow them.
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
