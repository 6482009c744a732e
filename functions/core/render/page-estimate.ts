import type { PdfOptions } from './options';
import { pageSpans } from './options';
import type { RenderRequest } from './ports';

/**
 * Page-count bombs: to print even the first pages, Chromium lays out every page of a document, and that cost grows
 * faster than the page count (10,000 forced breaks took ~4 s here, 30,000 took ~29 s; 60,000 words on 10 px pages
 * passed the renderer's 1.5 GB memory cap). So before printing a document that could be that long, the renderer
 * lays it out once with print styles as one continuous page (cheap) and estimates its page count from its height
 * and its forced breaks; one far past the caller's limit is refused with PAGE_LIMIT_EXCEEDED without being printed.
 * Documents near the limit are printed and counted exactly as before: the estimate only decides far beyond it.
 */

/** A document is refused unprinted when its estimate reaches this: far beyond any caller's limit, cheap to print below it. */
export function estimateRefusalPages(maxPages: number): number {
  return Math.max(1000, maxPages * 10);
}

/** CSS pixels per inch, as Chromium lays out a page. */
const PX_PER_IN = 96;

/** What the loaded document tells cheaply (its screen layout is already done): enough to decide whether to estimate. */
export interface LoadedFacts {
  /** Elements in the document. */
  elements: number;
  /** Height of its screen layout, CSS px. */
  scrollHeight: number;
  /** Width of the window it was laid out in, CSS px. */
  viewportWidth: number;
  /** Its `@page` rules for print, the last declaration of each property winning; null when it has none. */
  pageBox: CssPageBox | null;
}

/** The content box of one printed page, in the document's CSS px (the request's scale included). */
export interface PrintArea {
  width: number;
  height: number;
}

/** `@page` declarations as the browser serialises them; empty strings where unset. */
export interface CssPageBox {
  size: string;
  marginTop: string;
  marginRight: string;
  marginBottom: string;
  marginLeft: string;
}

/** The page's content box from the request's options alone. */
export function optionsPrintArea(o: PdfOptions): PrintArea {
  const paperWidth = o.landscape ? o.paperHeightIn : o.paperWidthIn;
  const paperHeight = o.landscape ? o.paperWidthIn : o.paperHeightIn;
  return {
    width: ((paperWidth - o.margin.left - o.margin.right) * PX_PER_IN) / o.scale,
    height: ((paperHeight - o.margin.top - o.margin.bottom) * PX_PER_IN) / o.scale,
  };
}

/** The page's content box: the document's `@page` rules where it has them, else the request's options. */
export function printArea(pageBox: CssPageBox | null, o: PdfOptions): PrintArea {
  return pageBox ? cssPrintArea(pageBox, o) : optionsPrintArea(o);
}

/**
 * Pages a layout `height` px tall at `viewportWidth` takes at `area`. Text reflowed to a narrower page grows about
 * in proportion (its area kept); the document is not laid out again at the page width, which its scripts would see
 * as a resize. Overestimating tenfold, the margin of the refusal point, takes a page under ~80 px wide.
 */
export function reflowedPages(height: number, viewportWidth: number, area: PrintArea): number {
  return (height * Math.max(1, viewportWidth / area.width)) / area.height;
}

/**
 * Whether the document could be long enough for its estimate to matter: its screen layout, reflowed to the page,
 * covers many pages (a quarter of the refusal point leaves room for the approximation), or it has enough elements
 * for that many forced breaks. Most documents answer no, for free.
 */
export function worthEstimating(facts: LoadedFacts, o: PdfOptions, maxPages: number): boolean {
  const refusal = estimateRefusalPages(maxPages);
  if (facts.elements + 1 >= refusal) return true;
  return reflowedPages(facts.scrollHeight, facts.viewportWidth, printArea(facts.pageBox, o)) >= refusal / 4;
}

/** CSS page-size keywords, in mm (portrait). */
const CSS_PAGE_SIZES_MM: Record<string, [number, number]> = {
  a5: [148, 210],
  a4: [210, 297],
  a3: [297, 420],
  b5: [176, 250],
  b4: [250, 353],
  'jis-b5': [182, 257],
  'jis-b4': [257, 364],
  letter: [215.9, 279.4],
  legal: [215.9, 355.6],
  ledger: [279.4, 431.8],
};

const CSS_PX_PER_UNIT: Record<string, number> = { px: 1, in: 96, cm: 96 / 2.54, mm: 96 / 25.4, q: 96 / 101.6, pt: 96 / 72, pc: 16, em: 16, rem: 16 };

/** A CSS length in px; percentages of `percentOf`; null when not a length we can read (auto, calc(), …). */
function cssPx(value: string, percentOf: number): number | null {
  const m = /^(-?\d*\.?\d+(?:e[+-]?\d+)?)(px|in|cm|mm|q|pt|pc|em|rem|%)?$/i.exec(value.trim());
  if (!m) return null;
  const n = Number(m[1]);
  if (!m[2]) return n === 0 ? 0 : null;
  const unit = m[2].toLowerCase();
  return unit === '%' ? (n / 100) * percentOf : n * CSS_PX_PER_UNIT[unit];
}

/** A page size from CSS `size` in px (before scaling), or null for auto or what cannot be read. */
function cssPageSize(size: string, paper: { width: number; height: number }): { width: number; height: number } | null {
  const words = size.trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0 || words[0] === 'auto') return null;
  let orientation: string | null = null;
  let named: [number, number] | null = null;
  const lengths: number[] = [];
  for (const word of words) {
    if (word === 'landscape' || word === 'portrait') orientation = word;
    else if (CSS_PAGE_SIZES_MM[word]) named = CSS_PAGE_SIZES_MM[word].map((mm) => (mm * PX_PER_IN) / 25.4) as [number, number];
    else {
      const px = cssPx(word, 0);
      if (px === null || px <= 0) return null;
      lengths.push(px);
    }
  }
  if (lengths.length > 0) return { width: lengths[0], height: lengths[1] ?? lengths[0] };
  const [width, height] = named ?? [paper.width, paper.height];
  const portrait = { width: Math.min(width, height), height: Math.max(width, height) };
  if (orientation === 'landscape') return { width: portrait.height, height: portrait.width };
  if (orientation === 'portrait') return portrait;
  return { width, height };
}

/**
 * The page's content box when `@page` rules apply: their size (Chromium lays out at the CSS page size even without
 * `preferCSSPageSize`, then scales the page onto the paper) and their margins, the request's where they set none.
 */
export function cssPrintArea(page: CssPageBox, o: PdfOptions): PrintArea {
  const paper = {
    width: (o.landscape ? o.paperHeightIn : o.paperWidthIn) * PX_PER_IN,
    height: (o.landscape ? o.paperWidthIn : o.paperHeightIn) * PX_PER_IN,
  };
  const size = cssPageSize(page.size, paper) ?? paper;
  // A negative @page margin prints as 0 (see the renderer's ZERO_NEGATIVE_PAGE_MARGINS): paper has no room outside it.
  const side = (css: string, requestIn: number, percentOf: number) => Math.max(0, cssPx(css, percentOf) ?? requestIn * PX_PER_IN);
  const width = size.width - side(page.marginLeft, o.margin.left, size.width) - side(page.marginRight, o.margin.right, size.width);
  const height = size.height - side(page.marginTop, o.margin.top, size.height) - side(page.marginBottom, o.margin.bottom, size.height);
  // Margins that leave no room: Chromium falls back to a sliver; one px keeps the estimate finite and large.
  return { width: Math.max(1, width / o.scale), height: Math.max(1, height / o.scale) };
}

/** The document laid out with print styles as one continuous page. */
export interface LaidOutFacts {
  /** Height of that layout, CSS px, at `viewportWidth`. */
  scrollHeight: number;
  viewportWidth: number;
  /** Places where a forced page break falls (counted only for documents with many elements, else 0). */
  forcedBreaks: number;
}

/** About how many pages the document prints on: its reflowed height over the page height, or its forced breaks, whichever is more. */
export function estimatedPages(laid: LaidOutFacts, area: PrintArea): number {
  return Math.max(Math.ceil(reflowedPages(laid.scrollHeight, laid.viewportWidth, area)), laid.forcedBreaks + 1, 1);
}

/**
 * True when a document estimated at `estimate` pages is to be refused unprinted: the estimate reaches the refusal
 * point and the pages the request selects (all, or those of `pageRanges` that exist) are more than `maxPages`.
 */
export function farBeyondLimit(estimate: number, request: Pick<RenderRequest, 'options' | 'maxPages'>): boolean {
  if (request.maxPages === undefined || estimate < estimateRefusalPages(request.maxPages)) return false;
  const spans = request.options.pageRanges ? pageSpans(request.options.pageRanges) : [[1, Infinity] as [number, number]];
  if (!spans) return false;
  const selected = spans.reduce((sum, [first, last]) => sum + Math.max(0, Math.min(last, estimate) - first + 1), 0);
  return selected > request.maxPages;
}
