/**
 * The page range syntax of every page selection in the PDF tools (document 2): comma-separated parts,
 * each a page (`3`), a range (`1-3`) or an open range (`8-end`). Pages are 1-based, used in the written
 * order, and may repeat (`2,2`, `5,1`). Spaces around parts and dashes are allowed.
 *
 * Parsing (syntax) and resolving against a document (page count) are separate, so a request can be
 * refused before any PDF is read.
 */
import { ServiceError } from '../errors';
import { shownValue } from '../validation/shown';

export const MAX_RANGE_PARTS = 500;

/**
 * One part, 1-based. Any run of digits is a page number: one too large to hold exactly (past 2^53 − 1, beyond any
 * document) is `Infinity`, so it is only ever reported as past the end.
 */
export type RangePart = { from: number; to: number | 'end' };

export interface ParsedRange {
  /** The text as sent. */
  text: string;
  /** One per comma-separated part of `text`, in order. */
  parts: RangePart[];
}

/** Extra details for errors (which parameter, which file). */
export type RangeContext = Record<string, unknown>;

function invalid(token: string, why: string, context: RangeContext): ServiceError {
  return new ServiceError('INVALID_PAGE_RANGE', `Page range part ${shownValue(token)} is not valid: ${why}. Use pages like "3", ranges like "1-3" or open ranges like "8-end", separated by commas.`, {
    ...context,
    token,
  });
}

const PAGE = /^\d+$/;

/** A page number as written (digits, leading zeros dropped) and as a number (`Infinity` when not exact). */
interface Page {
  digits: string;
  value: number;
}

function page(token: string, raw: string, context: RangeContext): Page {
  const t = raw.trim();
  if (t === '') throw invalid(token, 'a page number is missing', context);
  if (/^[+-]/.test(t)) throw invalid(token, 'page numbers cannot be negative or signed', context);
  if (/[.,eE]/.test(t) && /^[\d.eE+-]+$/.test(t)) throw invalid(token, 'page numbers are whole numbers', context);
  if (!PAGE.test(t)) throw invalid(token, `${shownValue(t)} is not a page number`, context);
  const digits = t.replace(/^0+/, '');
  if (digits === '') throw invalid(token, 'pages are numbered from 1', context);
  const n = Number(digits);
  return { digits, value: Number.isSafeInteger(n) ? n : Infinity };
}

/** Compares page numbers exactly, however long (digits without leading zeros). */
function comparePages(a: Page, b: Page): number {
  if (a.digits.length !== b.digits.length) return a.digits.length - b.digits.length;
  return a.digits < b.digits ? -1 : a.digits > b.digits ? 1 : 0;
}

/** Parses the syntax; throws 400 INVALID_PAGE_RANGE with `details.token` naming the offending part. */
export function parsePageRange(text: string, context: RangeContext = {}): ParsedRange {
  if (typeof text !== 'string') throw invalid(String(text), 'a page range is a string', context);
  const tokens = text.split(',');
  if (tokens.length > MAX_RANGE_PARTS) {
    throw new ServiceError('INVALID_PAGE_RANGE', `A page range may have at most ${MAX_RANGE_PARTS} parts; this one has ${tokens.length}. Join neighbouring pages into ranges such as "1-20".`, {
      ...context,
      token: tokens[MAX_RANGE_PARTS].trim(),
      max_parts: MAX_RANGE_PARTS,
    });
  }
  const parts: RangePart[] = [];
  for (const raw of tokens) {
    const token = raw.trim();
    if (token === '') throw invalid(token, 'empty part (two commas in a row, or a comma at the start or end)', context);
    // A leading "-" is a negative number, not a range.
    const dash = token.indexOf('-', 1);
    if (dash < 0) {
      const n = page(token, token, context).value;
      parts.push({ from: n, to: n });
      continue;
    }
    const left = token.slice(0, dash);
    const right = token.slice(dash + 1);
    const from = page(token, left, context);
    if (right.trim().toLowerCase() === 'end') {
      parts.push({ from: from.value, to: 'end' });
      continue;
    }
    if (right.includes('-')) throw invalid(token, 'a range has one dash', context);
    const to = page(token, right, context);
    if (comparePages(to, from) < 0) throw invalid(token, `the range runs backwards (${from.digits} to ${to.digits})`, context);
    parts.push({ from: from.value, to: to.value });
  }
  return { text, parts };
}

/** Number of pages a parsed range selects in a document of `total` pages (without expanding it). */
export function countSelected(range: ParsedRange, total: number): number {
  let n = 0;
  for (const p of range.parts) n += (p.to === 'end' ? total : p.to) - p.from + 1;
  return n;
}

/**
 * A page past the end is 400 PAGE_OUT_OF_RANGE with `details.total_pages` and `details.page` (left out when the page
 * number is too large to give exactly; `details.token` then names the part as written); checked without expanding the
 * range.
 */
export function assertWithinDocument(range: ParsedRange, total: number, context: RangeContext = {}): void {
  for (const [i, p] of range.parts.entries()) {
    const last = Math.max(p.from, p.to === 'end' ? total : p.to);
    if (last <= total) continue;
    const pages = `the document has ${total} page${total === 1 ? '' : 's'}. Choose pages from 1 to ${total}, or "end" for the last.`;
    if (Number.isFinite(last)) {
      const token = p.to === 'end' ? `${p.from}-end` : p.from === p.to ? String(p.from) : `${p.from}-${p.to}`;
      throw new ServiceError('PAGE_OUT_OF_RANGE', `Page ${last} is past the end: ${pages}`, { ...context, token, page: last, total_pages: total });
    }
    const token = range.text.split(',')[i].trim();
    throw new ServiceError('PAGE_OUT_OF_RANGE', `Page range part "${token}" is past the end: ${pages}`, { ...context, token, total_pages: total });
  }
}

/** The selected 1-based page numbers in written order (a page past the end: see `assertWithinDocument`). */
export function resolvePageRange(range: ParsedRange, total: number, context: RangeContext = {}): number[] {
  assertWithinDocument(range, total, context);
  const out: number[] = [];
  for (const p of range.parts) {
    const to = p.to === 'end' ? total : p.to;
    for (let i = p.from; i <= to; i++) out.push(i);
  }
  return out;
}

/** A compact text for a list of 1-based pages in order: consecutive runs become ranges (`1-3,5,5`). */
export function formatPages(pages: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < pages.length; ) {
    let j = i;
    while (j + 1 < pages.length && pages[j + 1] === pages[j] + 1) j++;
    parts.push(j === i ? String(pages[i]) : `${pages[i]}-${pages[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}
