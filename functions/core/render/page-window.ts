import { MAX_PAGE_NUMBER, pageSpans } from './options';
import type { RenderRequest, RenderResult } from './ports';

/**
 * The page range to print: the caller's selection (all pages without `pageRanges`) cut after `maxPages + 1`
 * pages. A selection that fits is returned as it came, so Chromium still reports pages beyond the document.
 */
export function pageWindow(request: Pick<RenderRequest, 'options' | 'maxPages'>): string {
  const chosen = request.options.pageRanges;
  if (request.maxPages === undefined) return chosen;
  const spans = chosen ? pageSpans(chosen) : [[1, Infinity] as [number, number]];
  if (!spans) return chosen; // not valid: Chromium's refusal becomes the caller's INVALID_PARAMETER
  let room = request.maxPages + 1;
  if (spans.reduce((sum, [first, last]) => sum + (last - first + 1), 0) <= room) return chosen;
  const kept: string[] = [];
  for (const [first, last] of spans) {
    if (room === 0) break;
    // Never past the largest page number Chromium reads: "4294967290-" cut to "4294967290-4294967390" was unreadable
    // to it (a 400 saying so) where the caller's range is only past the end of the document.
    const end = Math.min(last, first + room - 1, Math.max(first, MAX_PAGE_NUMBER));
    kept.push(end === first ? `${first}` : `${first}-${end}`);
    room -= end - first + 1;
  }
  return kept.join(', ');
}

/** A render's page count for messages and error details: exact, or "more than maxPages" when printing stopped early. */
export function pageCountFacts(result: Pick<RenderResult, 'pages' | 'morePages'>, maxPages: number): { text: string; details: { pages: number } | { pages_at_least: number } } {
  if (result.morePages) return { text: `more than ${maxPages} pages`, details: { pages_at_least: maxPages + 1 } };
  return { text: `${result.pages} pages`, details: { pages: result.pages } };
}
