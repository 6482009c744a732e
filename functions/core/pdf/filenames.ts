/**
 * Output file names: sanitising, `filename_pattern` tokens (a zod schema for the request field) and de-duplication
 * (document 2, POST /pdf/split).
 */
import { z } from 'zod';
import { ServiceError, invalidParameter } from '../errors';
import { optional, parseRequest, refuse } from '../validation';
import { DISPLAY_CONTROLS } from '../validation/display-controls';

export const DEFAULT_SPLIT_PATTERN = '{basename}-{index:03}.pdf';
export const DEFAULT_MERGE_NAME = 'merged';
const MAX_NAME_LENGTH = 200;

/**
 * Characters no file system or Content-Disposition header takes safely: every control character (C0, DEL, C1),
 * the bidirectional controls that make `a\u202Efdp.exe` display as `aexe.pdf`, line separators, and halves of
 * surrogate pairs (not text; encodeURIComponent throws on them).
 */
const UNSAFE = new RegExp(String.raw`[\p{Cc}<>:"/\\|?*${DISPLAY_CONTROLS}]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]`, 'gu');

/** File systems take 255 bytes per name; a little is kept for a `-2` suffix. */
const MAX_NAME_BYTES = 240;

/**
 * A safe file name: unsafe characters become `_`, whitespace collapses, no leading/trailing dots or spaces, at most
 * 200 characters and 240 UTF-8 bytes, cut between code points (never inside a surrogate pair), keeping the extension.
 */
export function sanitizeFilename(name: string, fallback: string): string {
  let s = name.replace(UNSAFE, '_').normalize('NFC').replace(/\s+/g, ' ').trim();
  s = s.replace(/^[.\s]+/, '').replace(/[.\s]+$/, '');
  if (s.length > MAX_NAME_LENGTH || Buffer.byteLength(s) > MAX_NAME_BYTES) {
    const ext = /\.[A-Za-z0-9]{1,5}$/.exec(s)?.[0] ?? '';
    let kept = '';
    for (const ch of s.slice(0, s.length - ext.length)) {
      if (kept.length + ch.length + ext.length > MAX_NAME_LENGTH || Buffer.byteLength(kept + ch) + ext.length > MAX_NAME_BYTES) break;
      kept += ch;
    }
    // Cut after a dot or a space, the name would end in one (Windows drops them).
    s = kept.replace(/[.\s]+$/, '') + ext;
  }
  return s === '' || /^_+$/.test(s) ? fallback : s;
}

/** Names Windows reserves for devices, with any extension (`NUL.pdf` cannot be created, so a ZIP holding it does not unzip). */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i;

/** A finished output name (extension included) that Windows can create: device names get a `_` prefix (`_NUL.pdf`). */
export function windowsSafeName(name: string): string {
  return WINDOWS_DEVICE.test(name) ? `_${name}` : name;
}

/** The input name without its `.pdf` extension, made safe. */
export function basenameOf(filename: string, fallback = 'document'): string {
  return sanitizeFilename(filename.replace(/\.pdf$/i, ''), fallback);
}

/** `name` ending in `.pdf` (an existing `.pdf` is not doubled). */
export function withPdfExtension(name: string): string {
  return /\.pdf$/i.test(name) ? name : `${name}.pdf`;
}

type PatternPart = { literal: string } | { token: 'basename' | 'index' | 'pages'; pad?: number };

export interface FilenamePattern {
  text: string;
  parts: PatternPart[];
}

const TOKEN = /\{([^{}]*)\}/g;
const PATTERN_PARAMETER = 'options.filename_pattern';
const SUPPORTED_TOKENS = ['{basename}', '{index}', '{index:03}', '{pages}'];

/** The tokens of a pattern, or the refusal naming the first unknown token or stray brace. */
function compilePattern(text: string): FilenamePattern | ServiceError {
  const parts: PatternPart[] = [];
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    if (m.index! > last) parts.push({ literal: text.slice(last, m.index) });
    const inner = m[1];
    const pad = /^index:0(\d)$/.exec(inner);
    if (inner === 'basename' || inner === 'index' || inner === 'pages') parts.push({ token: inner });
    else if (pad && Number(pad[1]) >= 1) parts.push({ token: 'index', pad: Number(pad[1]) });
    else {
      return invalidParameter(PATTERN_PARAMETER, `Unknown token {${inner}} in filename_pattern. Use {basename}, {index}, {index:03} or {pages}.`, {
        token: `{${inner}}`,
        supported: SUPPORTED_TOKENS,
      });
    }
    last = m.index! + m[0].length;
  }
  if (last < text.length) parts.push({ literal: text.slice(last) });
  for (const p of parts) {
    if ('literal' in p && /[{}]/.test(p.literal)) return invalidParameter(PATTERN_PARAMETER, 'filename_pattern has an unmatched { or }.', { token: p.literal });
  }
  return { text, parts };
}

/** `{basename}-{index:03}.pdf`, compiled. */
export const DEFAULT_FILENAME_PATTERN = compilePattern(DEFAULT_SPLIT_PATTERN) as FilenamePattern;

/**
 * `options.filename_pattern` of a split: absent or null for the default; blank, over 255 characters, unknown tokens
 * or stray braces are 400 INVALID_PARAMETER (tokens with `details.token`).
 */
export const filenamePatternSchema = optional(
  z
    .string()
    .refine((text) => text.trim() !== '', { message: 'must not be blank; send a pattern such as "{basename}-{index:03}.pdf"' })
    .max(255)
    .meta({ examples: ['{basename}-{index:03}.pdf', '{basename} {pages}.pdf'] })
    .transform((text, ctx) => {
      const pattern = compilePattern(text);
      if (pattern instanceof ServiceError) {
        refuse(ctx, pattern);
        return z.NEVER;
      }
      return pattern;
    }),
)
  .transform((pattern) => pattern ?? DEFAULT_FILENAME_PATTERN)
  .meta({
    description:
      'Names of the output files. Tokens: {basename} (the input name without .pdf), {index} (1-based), {index:03} (zero-padded to 3 digits; ' +
      `{index:0N} for N digits), {pages} (the output's page range). ".pdf" is added when missing; unsafe characters become "_"; ` +
      `duplicates get -2, -3. Default "${DEFAULT_SPLIT_PATTERN}"; at most 255 characters.`,
    default: DEFAULT_SPLIT_PATTERN,
  });

/** Validates a `filename_pattern` value on its own (absent or null: the default). */
export function parseFilenamePattern(value: unknown): FilenamePattern {
  return parseRequest(filenamePatternSchema, value, { prefix: PATTERN_PARAMETER });
}

/** The file name for one output; always safe and ending in `.pdf`. `index` is 1-based. */
export function renderFilename(pattern: FilenamePattern, values: { basename: string; index: number; pages: string }, fallback: string): string {
  const text = pattern.parts
    .map((p) => {
      if ('literal' in p) return p.literal;
      if (p.token === 'basename') return values.basename;
      if (p.token === 'pages') return values.pages;
      return p.pad ? String(values.index).padStart(p.pad, '0') : String(values.index);
    })
    .join('');
  return windowsSafeName(withPdfExtension(sanitizeFilename(text, fallback)));
}

/** Makes names unique (case-insensitively) by suffixing `-2`, `-3`, … before the extension. */
export function dedupeFilenames(names: string[]): string[] {
  const used = new Set<string>();
  return names.map((name) => {
    let candidate = name;
    const m = /^(.*?)(\.[^.]*)?$/.exec(name)!;
    const stem = m[1];
    const ext = m[2] ?? '';
    for (let n = 2; used.has(candidate.toLowerCase()); n++) candidate = `${stem}-${n}${ext}`;
    used.add(candidate.toLowerCase());
    return candidate;
  });
}
