/**
 * Guesses what a text payload really is, to catch content sent under the wrong input_type
 * (400 CONTENT_TYPE_MISMATCH). It only objects on strong evidence: plain prose is fine as either type.
 */
export type SniffedType = 'html' | 'markdown' | 'pdf' | 'image' | 'url' | 'binary' | 'text';

/*
 * Every pattern here runs over the whole payload (up to 5 MB) of every conversion, so none may backtrack: a
 * repeated part stops at the next character that could start another match (`[^<>]*`, not `[^>]*`), or a run
 * of "<a" without ">" made each "<" scan to the end (100 KB took 22 s).
 */
const HTML_TAG = /<(\/?)(html|head|body|div|span|p|h[1-6]|table|thead|tbody|tr|td|th|ul|ol|li|a|img|br|hr|strong|em|b|i|section|article|header|footer|main|nav|style|script|link|meta|title|pre|code|blockquote|svg|form|input|button|label|figure|canvas|iframe)\b[^<>]*>/gi;
/** Any element, known or not (`<u>`, `<font>`, custom elements); `<https://…>` autolinks are not elements. */
const ANY_ELEMENT = /<\/?[a-z][a-z0-9-]*(?:[\s/][^<>]*)?>/i;
const URL_ONLY = /^\s*https?:\/\/\S+\s*$/i;
const BASE64_IMAGE = /^\s*(data:image\/[a-z+.-]+;base64,|iVBORw0KGgo|\/9j\/)[A-Za-z0-9+/=\s]*$/;

const MARKDOWN_SIGNALS: RegExp[] = [
  /^#{1,6}[ \t]+\S/m, // ATX heading
  /^(```|~~~)/m, // fenced code
  /^[ \t]*[-*+][ \t]+\S/m, // bullet list
  /^[ \t]*\d+\.[ \t]+\S/m, // ordered list
  /\[[^[\]\n]+\]\([^()[\s]+\)/, // link
  /!\[[^[\]\n]*\]\([^()[\s]+\)/, // image
  /(\*\*|__)[^*_\n]+\1/, // bold
  /^>[ \t]?\S/m, // block quote
  /^\|?[ \t]*:?-{3,}:?[ \t]*\|/m, // table rule
  /^(-{3,}|\*{3,})[ \t]*$/m, // thematic break
];

const BLANKS = /\s*/y;
const DOCUMENT_START = /^(<!doctype\s+html|<html[\s>])/i;

function skipBlanks(text: string, from: number): number {
  BLANKS.lastIndex = from;
  BLANKS.exec(text);
  return BLANKS.lastIndex;
}

/**
 * True when `text` starts (after blanks, an XML declaration and comments) with a doctype or `<html>`. A scan, not
 * one regex: a lazy comment pattern under `*` backtracked exponentially on "<!----><!---->…" (25 of them: 0.4 s).
 */
export function looksLikeHtmlDocument(text: string): boolean {
  let at = skipBlanks(text, 0);
  if (text.startsWith('<?xml', at)) {
    const end = text.indexOf('>', at);
    if (end < 0) return false;
    at = skipBlanks(text, end + 1);
  }
  while (text.startsWith('<!--', at)) {
    const end = text.indexOf('-->', at + 4);
    if (end < 0) return false;
    at = skipBlanks(text, end + 3);
  }
  return DOCUMENT_START.test(text.slice(at, at + 16));
}

/** The first non-blank line starts with a tab or four spaces (a Markdown indented code block). */
function opensWithIndentedCode(text: string): boolean {
  const firstLine = /^(?:[ \t]*\r?\n)*([ \t]*)\S/.exec(text);
  return !!firstLine && (firstLine[1].includes('\t') || firstLine[1].length >= 4);
}

export function markdownSignalCount(text: string): number {
  return MARKDOWN_SIGNALS.reduce((n, re) => n + (re.test(text) ? 1 : 0), 0);
}

export function htmlTagCount(text: string): number {
  return text.match(HTML_TAG)?.length ?? 0;
}

export function sniffContent(text: string): SniffedType {
  const head = text.slice(0, 8192);
  if (head.startsWith('%PDF-')) return 'pdf';
  if (head.startsWith('\u0089PNG') || head.startsWith('\u00ff\u00d8\u00ff') || (text.length > 64 && BASE64_IMAGE.test(head))) return 'image';
  // ESC is left out: terminal output pasted into a document (ANSI colour codes, one ESC every few characters) is text.
  // eslint-disable-next-line no-control-regex
  const controls = head.match(/[\u0000-\u0008\u000e-\u001a\u001c-\u001f]/g)?.length ?? 0;
  if (controls > 0 && controls / Math.max(1, head.length) > 0.01) return 'binary';
  if (URL_ONLY.test(text)) return 'url';
  if (looksLikeHtmlDocument(head)) return 'html';
  const tags = htmlTagCount(text);
  const md = markdownSignalCount(text);
  if (tags > 0 && tags >= md) return 'html';
  if (md > 0) return 'markdown';
  return 'text';
}

/** The detected type when it contradicts `declared`, or null when the content fits. */
export function contentMismatch(declared: 'html' | 'markdown', text: string): SniffedType | null {
  const sniffed = sniffContent(text);
  if (sniffed === 'pdf' || sniffed === 'image' || sniffed === 'binary' || sniffed === 'url') return sniffed;
  if (declared === 'html') {
    // Markdown sent as HTML: no element at all and at least two kinds of Markdown syntax.
    return !ANY_ELEMENT.test(text) && markdownSignalCount(text) >= 2 ? 'markdown' : null;
  }
  // Markdown may embed HTML fragments; a whole HTML document is the mistake. A document that opens with an indented
  // line opens with a Markdown code block, which may well show HTML.
  const head = text.slice(0, 8192);
  return !opensWithIndentedCode(head) && looksLikeHtmlDocument(head) ? 'html' : null;
}
