import type { CDPSession } from 'puppeteer-core';
import { type CssPageBox, type LoadedFacts, estimateRefusalPages, estimatedPages, farBeyondLimit, printArea, worthEstimating } from '../../core/render/page-estimate';
import { type RenderRequest, TooManyPagesError } from '../../core/render/ports';

/*
 * The in-page side of core/render/page-estimate.ts. The scripts run in the document's own world: a document that
 * tampers with the DOM functions they call only hides from the estimate, and is then printed (and limited) as before.
 */

/**
 * Script defining `forEachPageRule(sheets, visit)`: calls `visit` with every `@page` rule (`:first` and other
 * selectors too) of every readable sheet that applies to print (imports, @media, @supports, layers; depth-bounded),
 * in order; rules under a media query only when it names print or all.
 */
export const PAGE_RULES_OF_SHEETS = `const forPrint = (media) => !media || (/\\b(all|print)\\b/i.test(media) && !/\\bnot\\s+(all|print)\\b/i.test(media));
  const forEachPageRule = (sheets, visit) => {
    const walk = (rules, depth) => {
      if (depth > 16) return;
      for (const rule of rules) {
        try {
          if (rule.type === 6) visit(rule);
          else if (rule.type === 3) { if (forPrint(rule.media.mediaText) && rule.styleSheet) walk(rule.styleSheet.cssRules, depth + 1); }
          else if (rule.type === 4) { if (forPrint(rule.media.mediaText)) walk(rule.cssRules, depth + 1); }
          else if (rule.cssRules) walk(rule.cssRules, depth + 1);
        } catch (e) { /* a sheet of another origin cannot be read */ }
      }
    };
    for (const sheet of sheets) {
      try { if (!sheet.disabled && forPrint(sheet.media.mediaText)) walk(sheet.cssRules, 0); } catch (e) { /* another origin */ }
    }
  };`;

/**
 * Script defining `pageBoxOf(sheets)`: the `@page` box of a list of stylesheets (rules without a selector), the last
 * declaration of each property winning.
 */
const PAGE_BOX_OF_SHEETS = `${PAGE_RULES_OF_SHEETS}
  const pageBoxOf = (sheets) => {
    const props = [['size', 'size'], ['marginTop', 'margin-top'], ['marginRight', 'margin-right'], ['marginBottom', 'margin-bottom'], ['marginLeft', 'margin-left']];
    let box = null;
    forEachPageRule(sheets, (rule) => {
      if (String(rule.selectorText || '').trim()) return;
      box = box || { size: '', marginTop: '', marginRight: '', marginBottom: '', marginLeft: '' };
      for (const [key, prop] of props) { const value = rule.style.getPropertyValue(prop); if (value) box[key] = value; }
    });
    return box;
  };`;

/** Expression for the document just loaded: [elements, scrollHeight, viewportWidth, @page box or null] (see LoadedFacts). */
export const LOADED_FACTS = `(() => {
  ${PAGE_BOX_OF_SHEETS}
  const root = document.documentElement;
  return [document.getElementsByTagName('*').length, root ? root.scrollHeight : 0, innerWidth, pageBoxOf([...document.styleSheets, ...(document.adoptedStyleSheets || [])])];
})()`;

/**
 * Expression for `html` not loaded yet: the `@page` box of its own `<style>` elements, read from an inert copy
 * (DOMParser: nothing fetched, no script run). Linked stylesheets are not read.
 */
function htmlPageBoxExpression(html: string): string {
  return `(() => {
  ${PAGE_BOX_OF_SHEETS}
  const doc = new DOMParser().parseFromString(${JSON.stringify(html)}, 'text/html');
  const sheets = [];
  for (const style of doc.querySelectorAll('style')) {
    try {
      const sheet = new CSSStyleSheet({ media: style.getAttribute('media') || '' });
      sheet.replaceSync(style.textContent);
      sheets.push(sheet);
    } catch (e) { /* not a stylesheet this page can build */ }
  }
  return pageBoxOf(sheets);
})()`;
}

/**
 * The `@page` box of `html` (see htmlPageBoxExpression), read before it is loaded, in a world of its own on the page:
 * a page kept for the next file of a bulk job still holds the last document, whose scripts may have replaced
 * DOMParser or CSSStyleSheet in the page's own world.
 */
export async function htmlPageBox(session: CDPSession, frameId: string, html: string): Promise<CssPageBox | null> {
  const { executionContextId } = (await session.send('Page.createIsolatedWorld', { frameId, worldName: 'page-box' })) as { executionContextId: number };
  const { result } = (await session.send('Runtime.evaluate', { expression: htmlPageBoxExpression(html), contextId: executionContextId, returnByValue: true })) as { result?: { value?: unknown } };
  return pageBoxOf(result?.value);
}

/** LoadedFacts from LOADED_FACTS's value; null when the document's scripts made it something else. */
export function loadedFacts(value: unknown): LoadedFacts | null {
  if (!Array.isArray(value) || value.length !== 4) return null;
  const [elements, scrollHeight, viewportWidth, box] = value as unknown[];
  if (typeof elements !== 'number' || typeof scrollHeight !== 'number' || typeof viewportWidth !== 'number') return null;
  return { elements, scrollHeight, viewportWidth, pageBox: pageBoxOf(box) };
}

function pageBoxOf(value: unknown): CssPageBox | null {
  if (!value || typeof value !== 'object') return null;
  const box = value as Record<string, unknown>;
  const text = (key: string) => (typeof box[key] === 'string' ? (box[key] as string).slice(0, 200) : '');
  return { size: text('size'), marginTop: text('marginTop'), marginRight: text('marginRight'), marginBottom: text('marginBottom'), marginLeft: text('marginLeft') };
}

/**
 * Expression (print media): [scrollHeight, viewportWidth, forced breaks]. Every block-level element with a box and a
 * forced break counts (empty ones too: after content, each makes a blank page), except where its break is the same as its
 * parent's (first or last child) or its neighbour's (break-after then break-before).
 */
function laidOutFacts(countBreaks: boolean): string {
  return `(() => {
  const root = document.documentElement;
  const height = root ? root.scrollHeight : 0;
  let breaks = 0;
  if (${countBreaks}) {
    const forced = /^(page|left|right|recto|verso|always)$/;
    // Breaks apply to block-level boxes only: Chromium ignores them on inline-level boxes and table cells.
    const notBlock = /^(inline|ruby|table-cell)/;
    const styles = new Map();
    const style = (el) => { let s = styles.get(el); if (!s) { const c = getComputedStyle(el); const block = !notBlock.test(c.display); s = [block && forced.test(c.breakBefore), block && forced.test(c.breakAfter)]; styles.set(el, s); } return s; };
    for (const el of document.getElementsByTagName('*')) {
      const [before, after] = style(el);
      if ((!before && !after) || el.getClientRects().length === 0) continue;
      const parent = el.parentElement;
      const previous = el.previousElementSibling;
      const next = el.nextElementSibling;
      if (before && !(previous ? style(previous)[1] : parent && style(parent)[0])) breaks++;
      if (after && !(!next && parent && style(parent)[1])) breaks++;
    }
  }
  return [height, innerWidth, breaks];
})()`;
}

async function evaluate(session: CDPSession, expression: string): Promise<unknown> {
  const { result, exceptionDetails } = (await session.send('Runtime.evaluate', { expression, returnByValue: true })) as { result: { value?: unknown }; exceptionDetails?: unknown };
  return exceptionDetails ? undefined : result.value;
}

/**
 * Throws TooManyPagesError when the request has `maxPages` and the document, laid out with print styles, comes out
 * far longer (core/render/page-estimate.ts). `facts` are the loaded document's LoadedFacts (null: read them now).
 * Most documents are let through on those facts alone; the rest cost one more layout.
 */
export async function refuseFarTooLong(session: CDPSession, request: RenderRequest, facts: LoadedFacts | null): Promise<void> {
  if (request.maxPages === undefined) return;
  const known = facts ?? loadedFacts(await evaluate(session, LOADED_FACTS));
  if (!known || !worthEstimating(known, request.options, request.maxPages)) return;
  // Print media (every page is prepared with it): laying the page out at the page width too would show the
  // document's scripts a resize.
  const laid = await evaluate(session, laidOutFacts(known.elements + 1 >= estimateRefusalPages(request.maxPages)));
  if (!Array.isArray(laid) || !laid.slice(0, 3).every((n) => typeof n === 'number')) return;
  const [scrollHeight, viewportWidth, forcedBreaks] = laid as number[];
  const estimate = estimatedPages({ scrollHeight, viewportWidth, forcedBreaks }, printArea(known.pageBox, request.options));
  if (farBeyondLimit(estimate, request)) throw new TooManyPagesError(estimate);
}
