/**
 * A bundle as the page's world (bulk jobs): the document is navigated to `https://bundle.invalid/<path>`
 * and every request to that origin is paused by CDP `Fetch` and answered from the bundle — known paths with
 * their content type, absent ones with a 404 that counts as a missing asset. Requests anywhere else are not
 * intercepted and keep going through the document's egress proxy and its network guard.
 */
import type { CDPSession } from 'puppeteer-core';
import { contentTypeFor } from '../../core/render/content-types';
import { bundlePathOf, bundleUrl } from '../../core/render/bundle-url';
import { BUNDLE_ORIGIN, type RenderBundle } from '../../core/render/ports';

interface RequestPaused {
  requestId: string;
  /** The request's id in the Network domain. */
  networkId?: string;
  request: { url: string; method: string };
}

export interface BundleOrigin {
  /** Distinct bundle paths the page asked for that the bundle does not have. */
  missing(): number;
  /** The first failure reading the bundle (storage trouble), which fails the render. */
  failure(): unknown;
  /** Stops answering (the page may go on to another document of its scope). */
  stop(): Promise<void>;
}

/**
 * What one document may be served from its bundle. Each answer travels base64-encoded in one CDP message (about
 * three copies of the file in memory at once), so a 100 MB asset fetched 40 times had run the process out of memory.
 */
export const BUNDLE_SERVING_LIMITS = {
  /** A larger file is not served (the request fails, as a download would). */
  assetBytes: 32 * 1024 * 1024,
  /** Everything served to one document, repeats included; later requests fail. */
  documentBytes: 256 * 1024 * 1024,
  /** Answers being prepared at once. */
  concurrent: 4,
};

/**
 * Starts answering the page's requests to the bundle origin; `html` is served at the document's own path.
 * Must run before the page navigates.
 */
export async function serveBundle(
  session: CDPSession,
  bundle: RenderBundle,
  html: string,
  limits = BUNDLE_SERVING_LIMITS,
  /** Told once a request has been answered (or refused), by its Network id. */
  answered: (networkId: string) => void = () => undefined,
): Promise<BundleOrigin> {
  const documentPath = bundle.documentPath.replace(/^\/+/, '');
  const documentBody = Buffer.from(html, 'utf8');
  const missing = new Set<string>();
  /** Paths whose file is over the asset limit: refused again without reading. */
  const oversized = new Set<string>();
  /** Reads in progress, shared by requests for the same path. */
  const reading = new Map<string, Promise<Uint8Array | null>>();
  let served = 0;
  let failure: unknown = null;

  const read = (path: string): Promise<Uint8Array | null> => {
    let pending = reading.get(path);
    if (!pending) {
      pending = Promise.resolve(bundle.read(path));
      const done = () => reading.delete(path);
      pending.then(done, done);
      reading.set(path, pending);
    }
    return pending;
  };

  const refuse = (event: RequestPaused) => session.send('Fetch.failRequest', { requestId: event.requestId, errorReason: 'BlockedByResponse' });

  const answer = async (event: RequestPaused) => {
    const path = bundlePathOf(event.request.url);
    if (path !== null && oversized.has(path)) return refuse(event);
    // The limits apply before a file is read (inflating a 300 MB asset only to refuse it held the process for seconds).
    const size = path !== null && path !== documentPath ? bundle.size(path) : null;
    if (size !== null && (size > limits.assetBytes || served + size > limits.documentBytes)) {
      if (size > limits.assetBytes) oversized.add(path!);
      return refuse(event);
    }
    let body: Uint8Array | null = null;
    if (path === documentPath) body = documentBody;
    else if (path !== null) body = await read(path);
    if (body !== null && (body.byteLength > limits.assetBytes || served + body.byteLength > limits.documentBytes)) {
      if (body.byteLength > limits.assetBytes) oversized.add(path!);
      return refuse(event);
    }
    if (body !== null) served += body.byteLength;
    if (body === null) {
      missing.add(path ?? event.request.url);
      await session.send('Fetch.fulfillRequest', {
        requestId: event.requestId,
        responseCode: 404,
        responseHeaders: [{ name: 'Content-Type', value: 'text/plain; charset=utf-8' }],
        body: '',
      });
      return;
    }
    await session.send('Fetch.fulfillRequest', {
      requestId: event.requestId,
      responseCode: 200,
      responseHeaders: [
        { name: 'Content-Type', value: path === documentPath ? 'text/html; charset=utf-8' : contentTypeFor(path!) },
        { name: 'Content-Length', value: String(body.byteLength) },
      ],
      body: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('base64'),
    });
  };

  let active = 0;
  const waiting: RequestPaused[] = [];
  const next = () => {
    while (active < limits.concurrent && waiting.length > 0) {
      const event = waiting.shift()!;
      active++;
      answer(event)
        .catch((err) => {
          // A closed page is no failure of ours; storage trouble is, and fails the render.
          if (!/Target closed|Session closed|Invalid InterceptionId/i.test((err as Error)?.message ?? '')) failure ??= err;
          session.send('Fetch.failRequest', { requestId: event.requestId, errorReason: 'Failed' }).catch(() => undefined);
        })
        .finally(() => {
          active--;
          if (event.networkId) answered(event.networkId);
          next();
        });
    }
  };
  const onPaused = (event: RequestPaused) => {
    waiting.push(event);
    next();
  };
  session.on('Fetch.requestPaused', onPaused);
  await session.send('Fetch.enable', { patterns: [{ urlPattern: `${BUNDLE_ORIGIN}/*`, requestStage: 'Request' }] });
  return {
    missing: () => missing.size,
    failure: () => failure,
    stop: async () => {
      session.off('Fetch.requestPaused', onPaused);
      await session.send('Fetch.disable');
    },
  };
}

/**
 * Before a page serves the next document of its scope: the previous document's cookies, storage, caches
 * and service workers at the bundle origin are removed, so no file sees what another left behind.
 */
export async function clearBundleOrigin(session: CDPSession): Promise<void> {
  await session.send('Runtime.evaluate', { expression: 'try { sessionStorage.clear() } catch {}' });
  await Promise.all([session.send('Storage.clearDataForOrigin', { origin: BUNDLE_ORIGIN, storageTypes: 'all' }), session.send('Network.clearBrowserCookies')]);
}

/**
 * Navigates the page to the bundle document; resolves once it has loaded (including its web fonts), or
 * rejects when the navigation itself fails.
 */
export async function openBundleDocument(session: CDPSession, frameId: string, documentPath: string, waitForLoad: string, deadline: number): Promise<void> {
  let onLoad: () => void = () => undefined;
  const loaded = new Promise<void>((resolve) => (onLoad = resolve));
  session.on('Page.loadEventFired', onLoad);
  try {
    const nav = (await session.send('Page.navigate', { url: bundleUrl(documentPath.replace(/^\/+/, '')), frameId })) as { errorText?: string };
    if (nav.errorText) throw new Error(`the bundle document could not be opened: ${nav.errorText}`);
    await loaded;
  } finally {
    session.off('Page.loadEventFired', onLoad);
  }
  await session.send('Runtime.evaluate', { expression: waitForLoad, awaitPromise: true, timeout: Math.max(1, deadline - Date.now()) });
}
