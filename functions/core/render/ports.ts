import type { PdfOptions } from './options';

export interface RenderRequest {
  /** A complete HTML document (Markdown is converted before it gets here). */
  html: string;
  options: PdfOptions;
  /** Time the renderer may use before giving up with RenderTimeoutError. */
  timeoutMs: number;
  /**
   * After `load`, also wait until no request has been in flight for `quietMs` (late scripts, lazy
   * resources). If that does not happen within `maxMs` the page is printed as it stands and the result
   * says `renderTimeout: true`. Off by default: quick jobs print at `load`.
   */
  networkIdle?: { quietMs: number; maxMs: number };
}

export interface RenderResult {
  pdf: Uint8Array;
  pages: number;
  /** Requests the page made to local files or private addresses that were refused. */
  blockedRequests: number;
  /** The page never went idle within `networkIdle.maxMs` and was printed as it stood. */
  renderTimeout: boolean;
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
