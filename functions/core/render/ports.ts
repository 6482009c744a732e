import type { PdfOptions } from './options';

export interface RenderRequest {
  /** A complete HTML document (Markdown is converted before it gets here). */
  html: string;
  options: PdfOptions;
  /** Time the renderer may use before giving up with RenderTimeoutError. */
  timeoutMs: number;
}

export interface RenderResult {
  pdf: Uint8Array;
  pages: number;
  /** Requests the page made to local files or private addresses that were refused. */
  blockedRequests: number;
}

/** Turns HTML into PDF. Implemented by the Chromium adapter; domain code sees only this. */
export interface Renderer {
  render(request: RenderRequest): Promise<RenderResult>;
}

/** The page did not finish within the time it was given. */
export class RenderTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`render did not finish within ${timeoutMs} ms`);
    this.name = 'RenderTimeoutError';
  }
}
