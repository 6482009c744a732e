import type { PdfOptions } from './options';
import { type CssPageBox, printArea } from './page-estimate';

/** Neither side of the window grows past this, whatever the paper and scale (raster work and memory grow with its area). */
export const MAX_VIEWPORT_PX = 4096;

/**
 * The window a document is loaded in: one page's content box in CSS px (the scale included), whole pixels, rounded
 * down. Scripts that measure the window (charts sized to `innerWidth`, layouts chosen by `matchMedia`) then lay out
 * for the page they print on: in Chromium's default 800 × 600 window, a chart drawn 800 px wide on a page 718 px wide
 * made Chromium shrink the whole document to fit it. Rounded down, content exactly as wide as the window still fits.
 * The page is the document's own `@page` size and margins where it has them (Chromium prints at them), else the options'.
 */
export function layoutViewport(o: PdfOptions, pageBox: CssPageBox | null = null): { width: number; height: number } {
  const area = printArea(pageBox, o);
  const side = (px: number) => Math.max(1, Math.min(MAX_VIEWPORT_PX, Math.floor(px)));
  return { width: side(area.width), height: side(area.height) };
}
