import type { RenderRequest, RenderResult } from './ports';

/** The page range to print: no more than `maxPages + 1` pages, unless the caller chose pages itself. */
export function pageWindow(request: Pick<RenderRequest, 'options' | 'maxPages'>): string {
  if (request.options.pageRanges || request.maxPages === undefined) return request.options.pageRanges;
  return `1-${request.maxPages + 1}`;
}

/** A render's page count for messages and error details: exact, or "more than maxPages" when printing stopped early. */
export function pageCountFacts(result: Pick<RenderResult, 'pages' | 'morePages'>, maxPages: number): { text: string; details: { pages: number } | { pages_at_least: number } } {
  if (result.morePages) return { text: `more than ${maxPages} pages`, details: { pages_at_least: maxPages + 1 } };
  return { text: `${result.pages} pages`, details: { pages: result.pages } };
}
