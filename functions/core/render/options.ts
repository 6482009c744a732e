import { z } from 'zod';
import { invalidParameter } from '../errors';
import { optional, parseRequest } from '../validation';

/** Paper sizes in inches (portrait), as Chromium's print dialog knows them. */
export const PAPER_FORMATS: Record<string, { width: number; height: number }> = {
  letter: { width: 8.5, height: 11 },
  legal: { width: 8.5, height: 14 },
  tabloid: { width: 11, height: 17 },
  ledger: { width: 17, height: 11 },
  a0: { width: 33.1102, height: 46.811 },
  a1: { width: 23.3858, height: 33.1102 },
  a2: { width: 16.5354, height: 23.3858 },
  a3: { width: 11.6929, height: 16.5354 },
  a4: { width: 8.2677, height: 11.6929 },
  a5: { width: 5.8268, height: 8.2677 },
  a6: { width: 4.1339, height: 5.8268 },
};

const UNIT_PER_INCH: Record<string, number> = { px: 96, in: 1, cm: 2.54, mm: 25.4 };
const LENGTH = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(px|in|cm|mm)?\s*$/i;

/**
 * "10mm" → inches; null when `value` is not a length. The spec asks for lengths with a unit ("10" could mean pixels,
 * points or millimetres), so a bare number is refused, zero excepted (as in CSS).
 */
export function lengthToInches(value: string | number): number | null {
  if (typeof value === 'number') return value === 0 ? 0 : null;
  const m = LENGTH.exec(value);
  if (!m) return null;
  if (m[2] === undefined) return Number(m[1]) === 0 ? 0 : null;
  return Number(m[1]) / UNIT_PER_INCH[m[2].toLowerCase()];
}

const LENGTH_HINT = 'a length with its unit, such as "10mm", "0.5in", "1cm" or "20px"';

/**
 * LENGTH as the OpenAPI document states it (JSON Schema patterns take no flags, so the units' case is spelled out):
 * a number with a unit, or a zero without one. A unit test holds it to `lengthToInches`.
 */
export const LENGTH_PATTERN = String.raw`^\s*(?:(?:\d+(?:\.\d+)?|\.\d+)\s*(?:[pP][xX]|[iI][nN]|[cC][mM]|[mM][mM])|0+(?:\.0+)?|\.0+)\s*$`;

const length = z
  .union([z.string(), z.number()], { error: `expected ${LENGTH_HINT}` })
  .refine((v) => lengthToInches(v) !== null, { message: `expected ${LENGTH_HINT}` })
  // The document: what the refinement lets through (a string with a unit, a zero string, or the number 0).
  .meta({ anyOf: [{ type: 'string', pattern: LENGTH_PATTERN }, { type: 'number', const: 0 }] });

/**
 * One part of Chromium's page-range syntax ("1-5, 8, 11-13"; open ends "3-", "-2"), already trimmed. The blanks are
 * the ASCII ones Chromium trims around its numbers (TrimWhitespaceASCII): JS's `\s` also takes U+00A0, U+3000, …,
 * which Chromium refuses only after the whole document has been laid out (a render, and a failed job, for a 400).
 * A leading dash takes its number right after it: Chromium cannot read "- 2" either.
 */
const RANGE_PART = /^(?:\d+(?:[ \t\n\v\f\r]*-[ \t\n\v\f\r]*\d*)?|-\d+)$/;
const ASCII_BLANKS = ' \t\n\v\f\r';

/** `part` without the ASCII blanks at its ends, by a scan (a regex such as /\s+$/ is quadratic on long runs). */
function trimAsciiBlanks(part: string): string {
  let start = 0;
  let end = part.length;
  while (start < end && ASCII_BLANKS.includes(part[start])) start++;
  while (end > start && ASCII_BLANKS.includes(part[end - 1])) end--;
  return part.slice(start, end);
}

/**
 * True when `text` is in Chromium's page-range syntax, as it is sent (trimmed whole: see normalisePdfOptions). Checked
 * part by part: one regex over the whole list let spaces be matched by several `\s*` at once and backtracked for
 * minutes on 30 KB of "1 ,1 ,…".
 */
function isRangeSyntax(text: string): boolean {
  return text.trim().split(',').every((part) => RANGE_PART.test(trimAsciiBlanks(part)));
}

const TEMPLATE_MAX = 100_000;

/** The at-rule only: a name character after it makes another word (`orders@import-direct.com` is an address, not CSS). */
const TEMPLATE_IMPORT = /@import(?![\w\u0080-\uffff-])/i;
/**
 * Chromium prints header and footer templates without a network: a stylesheet they link or import makes the
 * whole print fail, whatever the document, so such a template is refused up front (400, not a 500 to retry).
 */
const TEMPLATE_STYLESHEET = new RegExp(`<link\\b|${TEMPLATE_IMPORT.source}`, 'i');
const TEMPLATE_STYLESHEET_HINT =
  'header and footer templates cannot load stylesheets (<link> or @import) or web fonts (@font-face from a URL); put the styles in a style attribute or a <style> element, and fonts in data: URLs';
/** A url() in an @font-face rule that is not a data: URL: Chromium fails the whole print on it (images do not). */
const REMOTE_FONT_SOURCE = /url\(\s*['"]?\s*(?!data:)/i;
/** Rule by rule (split at "}"), so a template of many unclosed rules is still read once. */
const loadsNoRemoteFont = (template: string) =>
  template.split('}').every((rule) => {
    const at = rule.toLowerCase().lastIndexOf('@font-face');
    return at < 0 || !REMOTE_FONT_SOURCE.test(rule.slice(at));
  });
/**
 * The CSS of a template as Chromium reads it: escapes decoded (`@\69mport`, `\75rl(` are @import and url() to
 * Chromium) and comments made the token breaks they are, so the checks see what would load.
 */
function cssAsRead(template: string): string {
  return template
    .replace(/\/\*[\s\S]*?(\*\/|$)/g, ' ')
    .replace(/\\([0-9a-f]{1,6})[ \t\n\r\f]?|\\([\s\S])/gi, (_, hex: string | undefined, char: string | undefined) => {
      if (char !== undefined) return char;
      const code = parseInt(hex!, 16);
      return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : '\ufffd';
    });
}
/** The ASCII punctuation HTML names that the checks look for (`&commat;import` is `@import` where references are decoded). */
const NAMED_REFERENCES: Record<string, string> = {
  commat: '@', lpar: '(', rpar: ')', colon: ':', bsol: '\\', sol: '/', ast: '*', midast: '*', quot: '"', apos: "'",
  semi: ';', period: '.', comma: ',', excl: '!', num: '#', Tab: '\t', NewLine: '\n',
};
/**
 * A template with character references decoded and CDATA markers removed: inside `<svg>` a `<style>` element's text is
 * read that way (`<svg><style>&#64;import url(…)</style></svg>` is an @import to Chromium), unlike an HTML `<style>`.
 */
function referencesDecoded(template: string): string {
  if (!template.includes('&') && !template.includes('<![')) return template;
  return template.replace(/<!\[CDATA\[|\]\]>/g, '').replace(/&(?:#[xX]([0-9a-fA-F]{1,6})|#(\d{1,7})|([A-Za-z]+));?/g, (ref, hex?: string, dec?: string, name?: string) => {
    if (name !== undefined) return Object.hasOwn(NAMED_REFERENCES, name) ? NAMED_REFERENCES[name] : ref;
    const code = hex !== undefined ? parseInt(hex, 16) : Number(dec);
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : '\ufffd';
  });
}
const loadsNoStylesheetAsWritten = (template: string) => {
  const css = cssAsRead(template);
  return !TEMPLATE_STYLESHEET.test(template) && !TEMPLATE_STYLESHEET.test(css) && loadsNoRemoteFont(css);
};
/** Decoded, only the CSS matters: `&lt;link&gt;` is text showing a tag, not a tag. */
const loadsNoStylesheetDecoded = (template: string) => {
  const decoded = referencesDecoded(template);
  if (decoded === template) return true;
  const css = cssAsRead(decoded);
  return !TEMPLATE_IMPORT.test(decoded) && !TEMPLATE_IMPORT.test(css) && loadsNoRemoteFont(css);
};
const loadsNoStylesheet = (template: string) => loadsNoStylesheetAsWritten(template) && loadsNoStylesheetDecoded(template);

/** Largest page side: Acrobat and most viewers refuse pages over 200 in (14,400 pt). */
export const MAX_PAPER_IN = 200;

/** A template as Chromium must get it: it prints its own URL-and-date band for an empty string, so "nothing" is an empty element. */
function bandTemplate(template: string | undefined, fallback: string): string {
  if (template === undefined) return fallback;
  return template.trim() === '' ? '<span></span>' : template;
}

/** The [first, last] pages of each comma-separated part of a pageRanges string in range syntax (open end: Infinity). */
function rangeParts(text: string): [number, number][] {
  return text.split(',').map((part): [number, number] => {
    const [from, to] = part.split('-').map((bound) => bound.trim());
    const first = from === '' ? 1 : Number(from);
    return [first, to === undefined ? first : to === '' ? Infinity : Number(to)];
  });
}

/** The largest page number Chromium's page-range parser reads (an unsigned 32-bit int; a larger one fails the parse). */
export const MAX_PAGE_NUMBER = 4_294_967_295;

/**
 * `text` with page numbers beyond MAX_PAGE_NUMBER written as it: they ask for pages past the end of any document, and
 * are answered as such ("1-99999999999999999999" prints to the end), where Chromium would call the whole string
 * unreadable after rendering the document.
 */
function withPageNumbersChromiumReads(text: string): string {
  return text.replace(/\d+/g, (digits) => {
    const significant = digits.replace(/^0+(?=\d)/, '');
    return significant.length > 10 || Number(significant) > MAX_PAGE_NUMBER ? String(MAX_PAGE_NUMBER) : digits;
  });
}

/** Why a pageRanges string in range syntax still cannot be printed, if it cannot. */
function pageRangesProblem(text: string): string | null {
  for (const [first, last] of rangeParts(text)) {
    if (first === 0 || last === 0) return 'pages are numbered from 1';
    if (first > last) return `${first}-${last} ends before it starts; write ranges low to high`;
  }
  return null;
}

/**
 * The pages a valid pageRanges string selects, as Chromium prints them: ascending, each page once, as merged
 * [first, last] spans (last Infinity for an open end such as "8-"); null for a string that is not valid.
 */
export function pageSpans(text: string): [number, number][] | null {
  if (!isRangeSyntax(text) || pageRangesProblem(text)) return null;
  const merged: [number, number][] = [];
  for (const [first, last] of rangeParts(text).sort((a, b) => a[0] - b[0])) {
    const previous = merged[merged.length - 1];
    if (previous && first <= previous[1] + 1) previous[1] = Math.max(previous[1], last);
    else merged.push([first, last]);
  }
  return merged;
}

const FORMAT_HINT = 'expected a paper format (A0 to A6, Letter, Legal, Tabloid, Ledger), or null together with width/height';
/** The paper formats as a flagless JSON Schema pattern: "a4" → "[aA]4". */
const FORMAT_PATTERN = `^(?:${Object.keys(PAPER_FORMATS)
  .map((name) => [...name].map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : c)).join(''))
  .join('|')})$`;

const side = (name: string) => optional(length).meta({ description: `The ${name} margin: ${LENGTH_HINT}.` });

/**
 * The `options` object of HTML and Markdown conversions (quickjob, longjob, bulk): Chromium's print options.
 * Unknown keys are ignored; `parsePdfOptions` validates it and applies the defaults.
 */
export const pdfOptionsSchema = z
  .object({
    format: z
      .union([z.string(), z.null()], { error: FORMAT_HINT })
      // Own keys only: `in` would also accept "constructor" or "__proto__" (and print a paper without a size).
      .refine((v) => v === null || Object.hasOwn(PAPER_FORMATS, v.toLowerCase()), { message: FORMAT_HINT })
      .meta({ anyOf: [{ type: 'string', pattern: FORMAT_PATTERN }, { type: 'null' }] })
      .optional()
      .meta({
        description:
          'Paper format, case-insensitive: A0–A6, Letter, Legal, Tabloid or Ledger. Default A4. A set format wins over width/height, so send null with width and height for a custom size.',
        default: 'A4',
      }),
    margin: optional(z.object({ top: side('top'), right: side('right'), bottom: side('bottom'), left: side('left') }).strict()).meta({
      description:
        'Page margins by side (top, right, bottom, left; other keys are refused). Default 0, Markdown 18mm/16mm; with displayHeaderFooter an unset top or bottom is 15mm. They must leave room for content.',
    }),
    printBackground: optional(z.boolean()).meta({ description: 'Print background colours and images. Default true.', default: true }),
    scale: optional(z.number().min(0.1).max(2)).meta({ description: 'Zoom of the page rendering, 0.1 to 2. Default 1.', default: 1 }),
    landscape: optional(z.boolean()).meta({ description: 'Print in landscape orientation. Default false.', default: false }),
    preferCSSPageSize: optional(z.boolean()).meta({ description: "Let the page's CSS @page size win over format/width/height. Default false.", default: false }),
    width: optional(length).meta({ description: `Custom paper width (only with format: null): ${LENGTH_HINT}. Default the A4 width.` }),
    height: optional(length).meta({ description: `Custom paper height (only with format: null): ${LENGTH_HINT}. Default the A4 height.` }),
    pageRanges: optional(
      z
        .string()
        .refine((v) => v.trim() === '' || isRangeSyntax(v), { message: 'expected pages and ranges such as "1-3, 5, 8-"' })
        .superRefine((v, ctx) => {
          const problem = v.trim() === '' || !isRangeSyntax(v) ? null : pageRangesProblem(v);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        }),
    ).meta({ description: 'Pages to print, numbered from 1, such as "1-3, 5, 8-" (open ends allowed). Default: all pages.' }),
    displayHeaderFooter: optional(z.boolean()).meta({
      description: 'Print headerTemplate and footerTemplate. Default false; when true, the default header shows the date and title and the default footer "page / pages".',
      default: false,
    }),
    headerTemplate: optional(z.string().max(TEMPLATE_MAX).refine(loadsNoStylesheet, { message: TEMPLATE_STYLESHEET_HINT })).meta({
        description: `HTML of the header, up to ${TEMPLATE_MAX} characters; elements with class pageNumber, totalPages, date, title or url are filled in. Set an explicit font-size; styles go inline (no <link>, @import or @font-face from a URL). An empty string prints no header.`,
      }),
    footerTemplate: optional(z.string().max(TEMPLATE_MAX).refine(loadsNoStylesheet, { message: TEMPLATE_STYLESHEET_HINT })).meta({ description: `HTML of the footer, up to ${TEMPLATE_MAX} characters; the same classes and rules as headerTemplate. Default "page / pages"; an empty string prints no footer.` }),
  })
  // null for any of them (but format, where null asks for width/height) means left out, as in every body.
  .meta({ id: 'PdfOptions', description: 'PDF options. Unknown keys are ignored; null means the default (except for format).' });

export type PdfOptionsInput = z.infer<typeof pdfOptionsSchema>;

/** What the renderer receives: every default applied, every length in inches. */
export interface PdfOptions {
  paperWidthIn: number;
  paperHeightIn: number;
  landscape: boolean;
  printBackground: boolean;
  scale: number;
  preferCSSPageSize: boolean;
  margin: { top: number; right: number; bottom: number; left: number };
  pageRanges: string;
  displayHeaderFooter: boolean;
  headerTemplate: string;
  footerTemplate: string;
}

/** Printed when displayHeaderFooter is on and no headerTemplate is sent: the date and the document title. */
export const DEFAULT_HEADER_TEMPLATE =
  '<div style="font-size:8px;width:100%;padding:0 10mm;display:flex;justify-content:space-between;font-family:sans-serif;color:#555">' +
  '<span class="date"></span><span class="title"></span></div>';
/** Printed when displayHeaderFooter is on and no footerTemplate is sent. */
export const DEFAULT_FOOTER_TEMPLATE =
  '<div style="font-size:8px;width:100%;padding:0 10mm;text-align:center;font-family:sans-serif;color:#555">' +
  '<span class="pageNumber"></span> / <span class="totalPages"></span></div>';
/** Room for the header/footer when they are on and the caller set no top/bottom margin. */
export const HEADER_FOOTER_MARGIN_IN = 15 / 25.4;

/** Option keys that apply to HTML/Markdown rendering (bulk uses exactly these; others are ignored). */
export const PDF_OPTION_KEYS = Object.keys(pdfOptionsSchema.shape) as (keyof PdfOptionsInput)[];

/**
 * Validates and normalises the `options` object of a conversion (absent or null: every default). Unknown keys are
 * ignored (as for bulk); a wrong value is 400 INVALID_PARAMETER naming `options.<key>`.
 */
export function parsePdfOptions(
  raw: unknown,
  { parameterPrefix = 'options', defaultMargin = {} }: { parameterPrefix?: string; defaultMargin?: PdfMarginInput } = {},
): PdfOptions {
  const input = parseRequest(pdfOptionsSchema, raw ?? {}, { prefix: parameterPrefix, example: '{"format": "Letter", "margin": {"top": "10mm"}}' });
  return normalisePdfOptions(input, defaultMargin);
}

type PdfMarginInput = Partial<NonNullable<PdfOptionsInput['margin']>>;

function definedSides(margin: PdfOptionsInput['margin']): PdfMarginInput {
  return Object.fromEntries(Object.entries(margin ?? {}).filter(([, v]) => v !== undefined));
}

/**
 * Applies the defaults to options that passed their schema (every length in inches) and checks what needs them
 * together: a paper with a size, and margins that leave room for content (400 INVALID_PARAMETER). A default margin
 * (images, Markdown) stays on every side the caller did not set.
 */
export function normalisePdfOptions(o: Partial<PdfOptionsInput>, defaultMargin: PdfMarginInput = {}): PdfOptions {
  const format = o.format === undefined ? 'a4' : o.format === null ? null : o.format.toLowerCase();
  const a4 = PAPER_FORMATS.a4;
  // The spec: a set format wins over width/height, so custom sizes need `format: null`.
  const paper = format
    ? PAPER_FORMATS[format]
    : {
        width: o.width !== undefined ? lengthToInches(o.width)! : a4.width,
        height: o.height !== undefined ? lengthToInches(o.height)! : a4.height,
      };
  for (const [name, size] of [['width', paper.width], ['height', paper.height]] as const) {
    if (size <= 0) throw invalidParameter(`options.${name}`, `options.${name} must be greater than zero, e.g. "210mm" or "8.5in".`);
    if (size > MAX_PAPER_IN) throw invalidParameter(`options.${name}`, `The paper ${name} can be at most ${MAX_PAPER_IN} in (5.08 m); PDF viewers refuse larger pages.`);
  }

  const displayHeaderFooter = o.displayHeaderFooter ?? false;
  const roomForBands = displayHeaderFooter ? HEADER_FOOTER_MARGIN_IN : 0;
  // A default margin (images, Markdown) stays on every side the caller did not set.
  const m = { ...defaultMargin, ...definedSides(o.margin) };
  const side = (v: string | number | undefined, fallback: number) => (v !== undefined ? lengthToInches(v)! : fallback);
  const margin = {
    top: side(m.top, roomForBands),
    right: side(m.right, 0),
    bottom: side(m.bottom, roomForBands),
    left: side(m.left, 0),
  };
  const width = o.landscape ? paper.height : paper.width;
  const height = o.landscape ? paper.width : paper.height;
  if (margin.left + margin.right >= width || margin.top + margin.bottom >= height) {
    throw invalidParameter('options.margin', 'Margins leave no room for content on this paper size; reduce them or use a larger format.');
  }

  return {
    paperWidthIn: paper.width,
    paperHeightIn: paper.height,
    landscape: o.landscape ?? false,
    printBackground: o.printBackground ?? true,
    scale: o.scale ?? 1,
    preferCSSPageSize: o.preferCSSPageSize ?? false,
    margin,
    pageRanges: withPageNumbersChromiumReads((o.pageRanges ?? '').trim()),
    displayHeaderFooter,
    headerTemplate: displayHeaderFooter ? bandTemplate(o.headerTemplate, DEFAULT_HEADER_TEMPLATE) : '',
    footerTemplate: displayHeaderFooter ? bandTemplate(o.footerTemplate, DEFAULT_FOOTER_TEMPLATE) : '',
  };
}
