/**
 * Base64 fields (`pdf_base64`, `zip_base64`, `content_base64`): standard or URL-safe alphabet, with a `data:…;base64,`
 * prefix and line breaks accepted, as clients produce them.
 */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;

/** The base64 text of a field (prefix and whitespace removed), or null when it is not base64. */
export function base64Text(value: string): string | null {
  const text = value.replace(/^data:[^,]*;base64,/i, '').replace(/\s+/g, '');
  return text.length % 4 === 1 || !(BASE64.test(text) || BASE64URL.test(text)) ? null : text;
}

/** Decoded size of base64 text without decoding it (a size limit is checked before any allocation). */
export function decodedLength(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.floor((text.length * 3) / 4) - padding;
}

/** The bytes of text `base64Text` accepted. */
export function decodeBase64Text(text: string): Buffer {
  return Buffer.from(text, BASE64.test(text) ? 'base64' : 'base64url');
}
