/**
 * Output file names: sanitising, `filename_pattern` tokens and de-duplication (document 2, POST /pdf/split).
 */
import { invalidParameter } from '../errors';

export const DEFAULT_SPLIT_PATTERN = '{basename}-{index:03}.pdf';
export const DEFAULT_MERGE_NAME = 'merged';
const MAX_NAME_LENGTH = 200;

/** Characters no file system or Content-Disposition header takes safely, plus control characters. */
const UNSAFE = /[\u0000-\u001f\u007f<>:"/\\|?*]/g;

/** A safe file name: unsafe characters become `_`, whitespace collapses, no leading/trailing dots or spaces. */
export function sanitizeFilename(name: string, fallback: string): string {
  let s = name.normalize('NFC').replace(UNSAFE, '_').replace(/\s+/g, ' ').trim();
  s = s.replace(/^[.\s]+/, '').replace(/[.\s]+$/, '');
  if (s.length > MAX_NAME_LENGTH) {
    const ext = /\.[A-Za-z0-9]{1,5}$/.exec(s)?.[0] ?? '';
    s = s.slice(0, MAX_NAME_LENGTH - ext.length) + ext;
  }
  return s === '' || /^_+$/.test(s) ? fallback : s;
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

/** Validates `options.filename_pattern`; unknown tokens or stray braces are 400 INVALID_PARAMETER. */
export function parseFilenamePattern(value: unknown, parameter = 'options.filename_pattern'): FilenamePattern {
  if (value === undefined || value === null) return parseFilenamePattern(DEFAULT_SPLIT_PATTERN, parameter);
  if (typeof value !== 'string' || value.trim() === '') throw invalidParameter(parameter, 'filename_pattern must be a non-empty string such as "{basename}-{index:03}.pdf".');
  if (value.length > 255) throw invalidParameter(parameter, 'filename_pattern may be at most 255 characters.');
  const parts: PatternPart[] = [];
  let last = 0;
  for (const m of value.matchAll(TOKEN)) {
    if (m.index! > last) parts.push({ literal: value.slice(last, m.index) });
    const inner = m[1];
    const pad = /^index:0(\d)$/.exec(inner);
    if (inner === 'basename' || inner === 'index' || inner === 'pages') parts.push({ token: inner });
    else if (pad && Number(pad[1]) >= 1) parts.push({ token: 'index', pad: Number(pad[1]) });
    else {
      throw invalidParameter(parameter, `Unknown token {${inner}} in filename_pattern. Use {basename}, {index}, {index:03} or {pages}.`, {
        token: `{${inner}}`,
        supported: ['{basename}', '{index}', '{index:03}', '{pages}'],
      });
    }
    last = m.index! + m[0].length;
  }
  if (last < value.length) parts.push({ literal: value.slice(last) });
  for (const p of parts) {
    if ('literal' in p && /[{}]/.test(p.literal)) throw invalidParameter(parameter, 'filename_pattern has an unmatched { or }.', { token: p.literal });
  }
  return { text: value, parts };
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
  return withPdfExtension(sanitizeFilename(text, fallback));
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
