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
  /**
   * Renders the document as a file of a bundle (bulk jobs): the page lives at `${BUNDLE_ORIGIN}/<documentPath>`
   * and every request to that origin is answered from the bundle, so relative and bundle-root (`/…`)
   * references resolve; other requests go through the network guard as usual. Absent by default.
   */
  bundle?: RenderBundle;
  /**
   * The most pages the caller could accept. Printing stops after `maxPages + 1` pages of the document (or of a
   * larger `options.pageRanges` selection) and the result says `morePages`. A document estimated far longer than
   * that is not printed at all (TooManyPagesError; see page-estimate.ts).
   */
  maxPages?: number;
  /**
   * Asked once the renderer holds a printing slot, before the document is opened: false gives the slot back and
   * the render rejects with RenderNotStartedError. Work queued behind busy slots can so be called off (a bulk job
   * cancelled meanwhile) instead of being printed. A rejection fails the render with that error.
   */
  shouldStart?: () => Promise<boolean> | boolean;
  /** Whom the document is printed for (the account): a renderer printing for many shares its capacity fairly between them. */
  tenant?: string;
  /** What a header or footer's `url` class shows: the address a URL input came from; absent, nothing (see bands.ts). */
  documentUrl?: string;
}

/** The synthetic origin a bundle document is rendered at (`.invalid` can never resolve to a real host). */
export const BUNDLE_ORIGIN = 'https://bundle.invalid';

export interface RenderBundle {
  /** The document's path inside the bundle, without a leading slash (e.g. `docs/intro.html`). */
  documentPath: string;
  /**
   * A bundle file's bytes by path (no leading slash), or null when the bundle has no such file (the page
   * gets a 404 and the reference counts in `missingAssets`). A rejection fails the render.
   */
  read(path: string): Promise<Uint8Array | null> | Uint8Array | null;
  /** A bundle file's size in bytes without reading it (null when there is no such file), so limits apply before a read. */
  size(path: string): number | null;
  /**
   * Whether a bundle path is another document of the bundle, printed to a PDF of its own: links to it stay links (to
   * its bundle URL; `RenderResult.documentLinks` counts them) for the caller to point at that PDF. Links to other
   * bundle paths print as their text. Without it, every link to a bundle file does.
   */
  isDocument?(path: string): boolean;
  /**
   * Documents of one scope (the files of one bulk job: one customer, one bundle) may be rendered one after
   * another in the same browser context, its storage cleared in between; never across scopes.
   */
  scope?: string;
}

export interface RenderResult {
  pdf: Uint8Array;
  pages: number;
  /** Requests the page made to local files or private addresses that were refused. */
  blockedRequests: number;
  /** The page never went idle within `networkIdle.maxMs` and was printed as it stood. */
  renderTimeout: boolean;
  /** With `bundle`: distinct bundle paths the page asked for that the bundle does not have. */
  missingAssets?: number;
  /** With `bundle`: how many other documents of the bundle the PDF links to (at their bundle URLs; see `isDocument`). */
  documentLinks?: number;
  /** With `maxPages`: the document (or selection) has more pages than that; `pdf` and `pages` cover only the first `maxPages + 1`. */
  morePages?: boolean;
}

/** Turns HTML into PDF. Implemented by the Chromium adapter; domain code sees only this. */
export interface Renderer {
  render(request: RenderRequest): Promise<RenderResult>;
}

/** `shouldStart` said no: the document was never opened. */
export class RenderNotStartedError extends Error {
  constructor() {
    super('render not started: called off while waiting for a printing slot');
    this.name = 'RenderNotStartedError';
  }
}

/**
 * The renderer was shut down (the service is stopping) before or while it printed the document: nothing is wrong
 * with the document, and the work is worth doing again elsewhere, never recording as the document's failure.
 */
export class RendererStoppedError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('the renderer stopped (the service is shutting down) before the document was printed', options);
    this.name = 'RendererStoppedError';
  }
}

/**
 * With `maxPages`: laid out before printing, the document came out far longer than that (see page-estimate.ts), so
 * it was not printed. Callers refuse it as they refuse a result with `morePages`: it reads as one (no page printed,
 * more than the limit), so it goes where such a result goes (pageCountFacts).
 */
export class TooManyPagesError extends Error {
  readonly pages = 0;
  readonly morePages = true;
  constructor(readonly estimatedPages: number) {
    super(`the document would print on about ${estimatedPages} pages; it was not printed`);
    this.name = 'TooManyPagesError';
  }
}

/** The page did not finish within the time it was given. */
export class RenderTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`render did not finish within ${timeoutMs} ms`);
    this.name = 'RenderTimeoutError';
  }
}
