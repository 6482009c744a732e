import { mkdirSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import type { Readable } from 'node:stream';
import puppeteer, { type Browser, type CDPSession } from 'puppeteer-core';
import { ServiceError } from '../../core/errors';
import { RendererStoppedError } from '../../core/render/ports';
import type { NetworkGuard } from '../../core/net/guard';
import { EgressProxy } from '../net/egress-proxy';
import { writeFontConfig } from './fonts';
import { FairSlots } from './fair-slots';
import { ChromiumMemoryWatch, type ChromiumProcesses } from './memory-watch';
import { installedChromiumRelease, unpackedChromium } from './unpack';
import { MAX_DOCUMENT_AUDIO_THREADS, type TargetInfo, WorkerCount, tooManyAudioThreadsError, tooManyWorkersError } from './worker-limit';

export interface ChromiumConfig {
  /** A system Chromium (CHROMIUM_PATH); otherwise @sparticuz/chromium's bundled binary. */
  executablePath?: string;
  /** Directory of the compressed binaries when @sparticuz/chromium is bundled (the Lambda layer). */
  packDir?: string;
  /** Fonts shipped with Chromium where the host has none (the layer's /opt/fonts): Chromium then uses only these (see fonts.ts). */
  fontDir?: string;
  /**
   * Where the browser's own files go (its fontconfig, its profiles); unset, the system temp dir (Lambda: /tmp is the only
   * writable place). The local stack gives one under DATA_DIR: in /tmp each test stack left a fontconfig behind, and a
   * killed service its profile.
   */
  filesDir?: string;
  /** Fresh contexts kept ready, so a request never waits for a renderer process to start. */
  prewarm: number;
  /** Most documents printing at once (one more for an account printing nothing yet, see FairSlots); further requests queue. */
  maxConcurrent: number;
  /**
   * Every page's traffic goes through a per-document proxy that applies this guard. Without it pages get
   * a proxy that refuses everything (documents must not reach the network unguarded).
   */
  guard?: NetworkGuard;
  /** A document's renderer process using more resident memory than this is killed (the document fails). Off when unset. */
  maxPageMemoryBytes?: number;
  /**
   * The browser process using more than this (Blob data of pages lives there) is killed and relaunched; the documents
   * rendering at that moment fail. Off when unset.
   */
  maxBrowserMemoryBytes?: number;
  extraArgs?: string[];
  /** How long a browser-level CDP command may take (documents' commands are bounded by their own deadlines). Default 180 s. */
  protocolTimeoutMs?: number;
  log?: (message: string, err?: unknown) => void;
}

/**
 * Flags chosen for printing untrusted documents. Not copied from @sparticuz/chromium's Lambda defaults:
 * those include --disable-web-security and --single-process, which remove the same-origin policy and
 * break per-document contexts. Background networking is off so Chromium itself phones nowhere, QUIC is
 * off so all traffic is TCP through the proxy, and WebRTC may not use non-proxied UDP.
 */
const BASE_ARGS = [
  '--no-sandbox',
  '--disable-setuid-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-default-apps',
  '--disable-domain-reliability',
  '--disable-extensions',
  '--disable-sync',
  '--disable-breakpad',
  '--disable-quic',
  '--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication,InterestFeedContentSuggestions',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--no-first-run',
  '--no-default-browser-check',
  '--no-pings',
  '--mute-audio',
  '--hide-scrollbars',
  '--font-render-hinting=none',
  // Not --disable-threaded-compositing, although each new renderer would cost about a quarter less CPU without its
  // compositor thread: without it no frame is produced, so requestAnimationFrame, IntersectionObserver and
  // ResizeObserver callbacks never run, and charts and layouts drawn in them printed empty.
  // With --disable-gpu the GPU process only composites in software; run it as a thread of the browser process so
  // each new renderer's compositor set-up is not a round of cross-process messages (a few % of a document's CPU).
  '--in-process-gpu',
  // Chromium's own errors on stderr (errors only: none in a normal run), where the browser watches for the one that says
  // why it killed a renderer over a bad internal message (see watchChromiumLog).
  '--enable-logging=stderr',
  '--log-level=2',
  // window.open() and target=_blank would make pages (and, with noopener, renderer processes) nobody prints:
  // a thousand of them from one small document exhausted memory. Documents get exactly one page.
  '--block-new-web-contents',
  // A document is printed whole, not scrolled through: images and frames marked loading="lazy" below the first
  // screen were never fetched and printed blank. Without lazy loading they load with the document and hold its load.
  // Headless Chromium has no plugins (not even a PDF viewer), so an <embed> or <object> of a plugin type (Flash, a
  // PDF) printed its "Couldn't load plugin." placeholder into the PDF. With plugins off, an <object> shows its
  // fallback content and an <embed> an empty box of its size, as HTML says; images, SVG and HTML in them still load.
  '--blink-settings=lazyLoadEnabled=false,pluginsEnabled=false',
];

/**
 * puppeteer's default flags the browser is launched without. --disable-dev-shm-usage: launchArgs adds it only where
 * /dev/shm is too small. --disable-ipc-flooding-protection: without Chromium's flooding protection a document calling
 * history.pushState, replaceState or setting location.hash in a loop kept the browser process busy for seconds after
 * its own time limit, and every other document printing or starting meanwhile timed out too. With it, Chromium ignores
 * such calls past a few hundred in 10 s (the document prints as it stands).
 */
export const IGNORED_PUPPETEER_ARGS = ['--disable-dev-shm-usage', '--disable-ipc-flooding-protection'];

/**
 * What Chromium may see of the service's environment: where binaries, libraries, fonts and temporary files are, and
 * the locale. Nothing else: the service's environment holds its cloud credentials (AWS_SESSION_TOKEN on Lambda) and
 * settings, and they need not be in /proc/<browser>/environ too. (Only one layer: renderers run unsandboxed as the
 * service's user, so an exploit could read the Node process's own environ; the function's narrow role limits that.)
 */
const CHROMIUM_ENV = /^(PATH|HOME|TMPDIR|TMP|TEMP|TZ|LANG|LANGUAGE|LC_[A-Z]+|LD_LIBRARY_PATH|FONTCONFIG_PATH|FONTCONFIG_FILE|XDG_RUNTIME_DIR)$/;

/** The environment Chromium is launched with: `env` filtered to CHROMIUM_ENV, then `overrides`. */
export function chromiumEnvironment(env: NodeJS.ProcessEnv, overrides: Record<string, string> = {}): Record<string, string> {
  const kept = Object.entries(env).filter((entry): entry is [string, string] => CHROMIUM_ENV.test(entry[0]) && entry[1] !== undefined);
  return { ...Object.fromEntries(kept), ...overrides };
}

/** Below this, /dev/shm (64 MB in a default Docker container; absent on Lambda) could run out under parallel documents. */
const MIN_DEV_SHM_BYTES = 512 * 1024 * 1024;

/**
 * Chromium's shared memory lives in /dev/shm unless told otherwise. Where /dev/shm is missing or small it must
 * use /tmp instead; /tmp is usually a disk, so /dev/shm is kept wherever it has room (in paired runs here the
 * difference in CPU per document was within noise).
 */
export function roomyDevShm(): boolean {
  try {
    const stats = statfsSync('/dev/shm');
    return stats.bavail * stats.bsize >= MIN_DEV_SHM_BYTES;
  } catch {
    return false;
  }
}

/** Chromium's command line (beside puppeteer's defaults): on Lambda there is no zygote, and /dev/shm may be too small. */
export function launchArgs(host: { onLambda: boolean; roomyDevShm: boolean }, extraArgs: string[] = []): string[] {
  return [...BASE_ARGS, ...(host.onLambda ? ['--no-zygote'] : []), ...(host.onLambda || !host.roomyDevShm ? ['--disable-dev-shm-usage'] : []), ...extraArgs];
}

/** One fresh browser context with one blank page, used for one document (or, with a scope, for several of that scope) and then disposed. */
export interface PreparedPage {
  browserContextId: string;
  targetId: string;
  session: CDPSession;
  frameId: string;
  /** Resolves if the page's renderer crashes. */
  crashed: Promise<never>;
  /** Rejects (400 too_many_workers) when the document runs more web workers at once than allowed (see worker-limit.ts). */
  tooManyWorkers: Promise<never>;
  /** Requests refused so far: network targets the guard refused plus requests Chromium refused itself (local files, mixed content, unsafe ports). */
  blockedRequests(): number;
  proxy: EgressProxy;
  /**
   * Runs `wait` (the page only waiting, e.g. for its network to go quiet) without holding one of the
   * `maxConcurrent` printing slots, then takes a slot again ahead of documents not yet started.
   */
  whileIdle<T>(wait: () => Promise<T>): Promise<T>;
  /** True when the page already printed a document of its scope (see `withPage`). */
  reused: boolean;
  /** Called by the renderer after a clean print: the page may serve the next document of its scope. */
  markReusable(): void;
  /**
   * After a command failed because the page's target closed: true when the page closed itself (its document called
   * window.close()) rather than crashed or went down with its browser. Chromium rejects the pending command a few ms
   * before it reports the target destroyed, so this waits up to `withinMs` for that report.
   */
  closedItself(withinMs: number): Promise<boolean>;
}

/** What the pool knows of a page beyond what the renderer sees. */
interface PooledPage extends PreparedPage {
  reusable: boolean;
  alive(): boolean;
  /** The browser process the page lives in (what the memory watch may kill). */
  browserPid: number | undefined;
}

/** A page kept between documents of one scope. */
interface ParkedPage {
  scope: string;
  page: PooledPage;
  timer: NodeJS.Timeout;
}

/** How long a page waits for the next document of its scope before its context is disposed. */
const PARKED_MS = 10_000;

/**
 * Requests Chromium refuses itself, never reaching the proxy, as its console reports them: local files, http:// to an
 * IP address from an https page (mixed content it cannot upgrade), and ports it never connects to.
 */
const CHROMIUM_REFUSAL = /(not allowed to load local resource:?|cannot load)\s+file:|^Mixed Content:.*This request has been blocked|net::ERR_UNSAFE_PORT/i;

interface Instance {
  browser: Browser;
  /** The browser-level CDP session that creates and disposes contexts. */
  root: CDPSession;
}

/** Chromium's exit code for a renderer its browser process killed for sending a message it judged invalid. */
const RESULT_CODE_KILLED_BAD_MESSAGE = 3;

/**
 * The page's renderer was killed by Chromium's own browser process over an internal message it judged invalid
 * (RESULT_CODE_KILLED_BAD_MESSAGE): a fault between Chromium's processes, seen under load on pages taking bundle files
 * and being navigated, not something the document did. The same document printed again on a fresh page succeeds.
 */
export class ChromiumFaultError extends Error {}

/** The line Chromium logs when it kills a renderer over a bad IPC or Mojo message, naming the message's reason. */
const BAD_MESSAGE_LINE = /Terminating render(?:er| process) for bad (?:IPC|Mojo) message/i;

/**
 * Calls `onFault` with each line of Chromium's log (its stderr) saying it killed a renderer over a bad message: which
 * message it refused is the clue to the renderer kills seen under load (RESULT_CODE_KILLED_BAD_MESSAGE), otherwise
 * unexplained. Other lines are dropped.
 */
export function watchChromiumLog(stderr: Readable, onFault: (line: string) => void): void {
  readline.createInterface({ input: stderr, crlfDelay: Infinity }).on('line', (line) => {
    if (BAD_MESSAGE_LINE.test(line)) onFault(line.slice(0, 500));
  });
}

export class ChromiumBrowser {
  private instance: Promise<Instance> | null = null;
  private ready: Promise<PooledPage>[] = [];
  private closed = false;
  /** Browser contexts this class created (hidden from puppeteer's target handling). */
  private readonly contexts = new Set<string>();
  /** Per page: fails its document with what ended its renderer (a crash's termination status, or the browser going away). */
  private readonly crashHandlers = new Map<string, (cause: string, exitCode?: number) => void>();
  /** Pages whose target Chromium destroyed while the pool still held them (see `closedItself`). */
  private readonly destroyHandlers = new Map<string, () => void>();
  private readonly slots: FairSlots;
  private parked: ParkedPage[] = [];
  private readonly memoryWatch: ChromiumMemoryWatch | null;
  private readonly workers = new WorkerCount();
  /** Chromium's last "Terminating renderer for bad … message" log line, and when it came. */
  private lastFaultLine: { line: string; at: number } | null = null;

  constructor(private readonly config: ChromiumConfig) {
    // Audio threads are always capped, like workers; memory only when configured.
    const caps = { pageBytes: config.maxPageMemoryBytes || undefined, browserBytes: config.maxBrowserMemoryBytes || undefined, audioThreads: MAX_DOCUMENT_AUDIO_THREADS };
    this.memoryWatch = new ChromiumMemoryWatch(caps, () => this.chromiumProcesses(), config.log);
    this.slots = new FairSlots(config.maxConcurrent);
  }

  private async chromiumProcesses(): Promise<ChromiumProcesses> {
    if (!this.instance) return { renderers: [], browser: null };
    const { root, browser } = await this.instance;
    const { processInfo } = (await root.send('SystemInfo.getProcessInfo')) as { processInfo: { type: string; id: number }[] };
    return { renderers: processInfo.filter((p) => p.type === 'renderer').map((p) => p.id), browser: browser.process()?.pid ?? null };
  }

  /** What a document whose browser the watch killed failed of, whatever error its work ended with. */
  private browserMemoryError(): ServiceError {
    const mb = Math.round((this.config.maxBrowserMemoryBytes ?? 0) / 2 ** 20);
    return new ServiceError(
      'PDF_GENERATION_FAILED',
      `Chromium's browser process passed ${mb} MB (data the documents rendering at that moment kept, such as Blobs from their scripts) and was restarted; this document was one of them. Retry it; if it fails again, it is the one: keep less data in its scripts.`,
      { reason: 'browser_memory_limit', max_memory_mb: mb },
    );
  }

  private crashError(cause: string, exitCode?: number): Error {
    const killed = this.memoryWatch?.claimKill();
    if (!killed && exitCode === RESULT_CODE_KILLED_BAD_MESSAGE) {
      // The log line comes on another pipe than the crash event, so it may be read a moment after it.
      const said = this.lastFaultLine && Date.now() - this.lastFaultLine.at < 10_000 ? `; Chromium: ${this.lastFaultLine.line}` : '';
      return new ChromiumFaultError(`the page's renderer ended: Chromium killed it over an invalid internal message (${cause}${said})`);
    }
    if (!killed) return new Error(`the page's renderer ended: ${cause}`);
    if (killed === 'audio_threads') return tooManyAudioThreadsError();
    const mb = Math.round((this.config.maxPageMemoryBytes ?? 0) / 2 ** 20);
    return new ServiceError('PDF_GENERATION_FAILED', `The document used more than ${mb} MB of memory while rendering and was stopped. Use smaller images, canvases or data in its scripts.`, {
      reason: 'memory_limit',
      max_memory_mb: mb,
    });
  }

  private async executablePath(): Promise<string> {
    if (this.config.executablePath) return this.config.executablePath;
    const chromium = (await import('@sparticuz/chromium')).default;
    return unpackedChromium({ unpack: () => chromium.executablePath(this.config.packDir), release: installedChromiumRelease() });
  }

  /** The warm browser; launched on first use and again after it dies. */
  private getInstance(): Promise<Instance> {
    // A document that was still waiting for a slot when the pool closed must not launch a browser nobody closes.
    if (this.closed) return Promise.reject(new RendererStoppedError());
    if (!this.instance) {
      const launching = (async (): Promise<Instance> => {
        const onLambda = !!process.env.AWS_LAMBDA_FUNCTION_NAME;
        const executablePath = await this.executablePath();
        const { fontDir, filesDir } = this.config;
        const fonts: Record<string, string> = fontDir ? { FONTCONFIG_PATH: writeFontConfig(fontDir, filesDir && path.join(filesDir, 'fontconfig')) } : {};
        // Puppeteer makes (and removes) a profile in the system temp dir unless given one; this one it leaves to us.
        const profiles = filesDir && path.join(filesDir, 'profiles');
        if (profiles) mkdirSync(profiles, { recursive: true });
        const userDataDir = profiles && mkdtempSync(path.join(profiles, 'profile-'));
        const removeProfile = () => {
          try {
            if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
          } catch {
            // Left for the local stack's next start (see local/stack.ts).
          }
        };
        const browser = await puppeteer.launch({
          executablePath,
          userDataDir,
          env: chromiumEnvironment(process.env, fonts),
          headless: 'shell',
          // puppeteer adds this one on every host; launchArgs adds it only where /dev/shm is too small.
          ignoreDefaultArgs: IGNORED_PUPPETEER_ARGS,
          args: launchArgs({ onLambda, roomyDevShm: !onLambda && roomyDevShm() }, this.config.extraArgs),
          pipe: true,
          // The service closes the browser itself when it stops, after the documents in flight: puppeteer's own signal
          // handlers would kill Chromium under them the moment a SIGTERM arrives.
          handleSIGINT: false,
          handleSIGTERM: false,
          handleSIGHUP: false,
          defaultViewport: null,
          protocolTimeout: this.config.protocolTimeoutMs ?? 180_000,
          // Document pages are driven over raw CDP sessions; puppeteer's own per-page set-up would
          // double the work for every document, so it ignores targets in our contexts.
          targetFilter: (target) => !this.contexts.has((target as unknown as { _getTargetInfo(): { browserContextId?: string } })._getTargetInfo().browserContextId ?? ''),
        }).catch((err: unknown) => {
          removeProfile();
          throw err;
        });
        const child = browser.process();
        // Gone once Chromium has exited (before close() resolves), as puppeteer does with a profile of its own.
        child?.once('exit', removeProfile);
        browser.on('disconnected', () => {
          if (this.instance === launching) this.reset('browser disconnected');
        });
        if (child?.stderr) {
          watchChromiumLog(child.stderr, (line) => {
            this.lastFaultLine = { line, at: Date.now() };
            this.config.log?.(`Chromium killed a renderer over a bad internal message: ${line}`);
          });
        }
        const root = await browser
          .target()
          .createCDPSession()
          .catch(async (err: unknown) => {
            await browser.close().catch(() => undefined);
            throw err;
          });
        // Crashes of document renderers arrive on the browser connection.
        root.connection()!.on('Target.targetCrashed', (event: { targetId: string; status: string; errorCode: number }) =>
          this.crashHandlers.get(event.targetId)?.(`it crashed (termination status ${event.status}, code ${event.errorCode})`, event.errorCode),
        );
        root.connection()!.on('Target.targetDestroyed', (event: { targetId: string }) => {
          this.destroyHandlers.get(event.targetId)?.();
          this.workers.destroyed(event.targetId);
        });
        // Workers of documents, counted per context (puppeteer keeps target discovery on for the browser connection).
        root.connection()!.on('Target.targetCreated', (event: { targetInfo: TargetInfo }) => this.workers.created(event.targetInfo));
        return { browser, root };
      })();
      this.instance = launching;
      launching.catch(() => {
        if (this.instance === launching) this.instance = null;
      });
    }
    return this.instance;
  }

  /** Prepared and parked pages nobody will use: their contexts die with the browser, their proxies must be closed. */
  private discardReady() {
    for (const pending of this.ready.splice(0)) pending.then((page) => page.proxy.close(), () => undefined);
    for (const { page, timer } of this.parked.splice(0)) {
      clearTimeout(timer);
      page.proxy.close().catch(() => undefined);
    }
  }

  private reset(reason: string) {
    this.config.log?.(`chromium: ${reason}; relaunching on next use`);
    this.instance = null;
    this.discardReady();
    this.contexts.clear();
    this.workers.clear();
    for (const fail of this.crashHandlers.values()) fail(`its browser went away (${reason})`);
    this.crashHandlers.clear();
    this.destroyHandlers.clear();
  }

  private async prepare(): Promise<PooledPage> {
    const { root, browser } = await this.getInstance();
    const proxy = await EgressProxy.open(this.config.guard);
    let browserContextId: string;
    try {
      // `<-loopback>` removes Chromium's implicit loopback bypass: even 127.0.0.1 goes through the guard.
      ({ browserContextId } = await root.send('Target.createBrowserContext', { disposeOnDetach: true, proxyServer: proxy.url, proxyBypassList: '<-loopback>' }));
    } catch (err) {
      await proxy.close();
      throw err;
    }
    this.contexts.add(browserContextId);
    let refuseWorkers: (err: Error) => void = () => undefined;
    const tooManyWorkers = new Promise<never>((_, reject) => (refuseWorkers = reject));
    tooManyWorkers.catch(() => undefined);
    this.workers.watch(browserContextId, () => refuseWorkers(tooManyWorkersError()));
    let targetId: string | undefined;
    try {
      [{ targetId }] = await Promise.all([
        root.send('Target.createTarget', { url: 'about:blank', browserContextId }),
        root.send('Browser.setDownloadBehavior', { behavior: 'deny', browserContextId }),
      ]);
      const { sessionId } = await root.send('Target.attachToTarget', { targetId, flatten: true });
      const session = root.connection()!.session(sessionId)!;
      const crashed = new Promise<never>((_, reject) => {
        this.crashHandlers.set(targetId!, (cause, exitCode) => reject(this.crashError(cause, exitCode)));
      });
      let dead = false;
      crashed.catch(() => (dead = true));
      // A page whose document ran too many workers serves no other document.
      tooManyWorkers.catch(() => (dead = true));
      let destroyed = false;
      const onDestroyed: (() => void)[] = [];
      this.destroyHandlers.set(targetId, () => {
        destroyed = true;
        for (const notify of onDestroyed.splice(0)) notify();
      });
      // A page that calls alert()/confirm() would otherwise wait forever for someone to click.
      session.on('Page.javascriptDialogOpening', () => {
        session.send('Page.handleJavaScriptDialog', { accept: true }).catch(() => undefined);
      });
      let refusedByChromium = 0;
      session.on('Log.entryAdded', (event: { entry: { text: string } }) => {
        if (CHROMIUM_REFUSAL.test(event.entry.text)) refusedByChromium++;
      });
      // Page.enable is what starts the renderer process, the costly part, which is why pages are prepared ahead.
      // Documents load as they will be printed (set once per page, while it is prepared ahead: emulation lasts for
      // the page's life): on screen, what only print styles use (a print stylesheet's web fonts, its images) was
      // never fetched, and the PDF fell back to other fonts and left the images out.
      await Promise.all([session.send('Page.enable'), session.send('Log.enable'), session.send('Emulation.setEmulatedMedia', { media: 'print' })]);
      // A page target's main frame has the target's id.
      const page: PooledPage = {
        browserContextId,
        targetId,
        session,
        frameId: targetId,
        crashed,
        tooManyWorkers,
        proxy,
        blockedRequests: () => proxy.blocked + refusedByChromium,
        whileIdle: (wait) => wait(), // replaced by withPage, which holds the slot
        reused: false,
        reusable: false,
        markReusable: () => {
          page.reusable = !dead;
        },
        alive: () => !dead,
        browserPid: browser.process()?.pid,
        closedItself: (withinMs) =>
          new Promise<boolean>((resolve) => {
            const decide = () => {
              clearTimeout(timer);
              resolve(destroyed && !dead);
            };
            const timer = setTimeout(decide, destroyed ? 0 : withinMs);
            onDestroyed.push(decide);
          }),
      };
      return page;
    } catch (err) {
      this.forget(browserContextId, targetId);
      root.send('Target.disposeBrowserContext', { browserContextId }).catch(() => undefined);
      await proxy.close();
      throw err;
    }
  }

  private forget(browserContextId: string, targetId?: string) {
    this.contexts.delete(browserContextId);
    this.workers.forget(browserContextId);
    if (targetId) {
      this.crashHandlers.delete(targetId);
      this.destroyHandlers.delete(targetId);
    }
  }

  private refill() {
    while (!this.closed && this.ready.length < this.config.prewarm) {
      const p = this.prepare();
      p.catch(() => undefined);
      this.ready.push(p);
    }
  }

  /** Starts the browser and fills the pool ahead of the first request. */
  async warmUp(): Promise<void> {
    await this.getInstance();
    this.refill();
    await Promise.allSettled(this.ready);
  }

  /**
   * Runs `work` on a fresh page in its own browser context, then disposes the context (which also
   * kills a page stuck in a script loop). The pool is refilled in the background.
   *
   * With a `scope` (the files of one bulk job: one customer, one bundle), a page whose document printed
   * cleanly (`markReusable`) is kept for the next document of the same scope for a few seconds instead:
   * its renderer process is already running, which halves the CPU a document costs. Pages never serve
   * another scope, and the renderer clears the origin's storage before reusing one.
   *
   * With a `tenant` (the account the document is printed for), printing slots are shared fairly between tenants
   * (see FairSlots): one account's documents cannot keep another's waiting.
   */
  async withPage<T>(
    work: (page: PreparedPage) => Promise<T>,
    placement: { scope?: string; tenant?: string; beforePage?: () => void | Promise<void> } = {},
  ): Promise<T> {
    const { scope, tenant } = placement;
    let release = await this.slots.acquire(tenant);
    let finished = false;
    let page: PooledPage | undefined;
    this.memoryWatch?.documentOpened();
    try {
      // A document given up while it waited for its slot (timed out, called off) throws here, before it uses a page:
      // taking one would cost a fresh browser context for nothing, while others wait behind it.
      await placement.beforePage?.();
      page = scope ? this.unpark(scope) : undefined;
      if (!page) {
        page = await this.takeReady();
        this.refill();
      }
      page.reusable = false;
      page.whileIdle = async (wait) => {
        release();
        try {
          return await wait();
        } finally {
          const again = await this.slots.acquire(tenant, true);
          // The document may have been given up meanwhile (timeout): then the slot goes straight back.
          if (finished) again();
          else release = again;
        }
      };
      return await work(page);
    } catch (err) {
      // The pool closed under the document (the service is stopping): that, not the document, is why it failed.
      if (this.closed && !(err instanceof RendererStoppedError)) throw new RendererStoppedError({ cause: err });
      // The watch killed the browser under this page: whatever the work ended with (a crash, a closed session), that is the cause.
      throw page?.browserPid !== undefined && this.memoryWatch?.killedBrowser(page.browserPid) ? this.browserMemoryError() : err;
    } finally {
      finished = true;
      this.memoryWatch?.documentClosed();
      if (page && scope && page.reusable && page.alive() && !this.closed && this.contexts.has(page.browserContextId)) this.park(scope, page);
      else if (page) await this.dispose(page);
      release();
    }
  }

  /**
   * The next prepared page, or a fresh one. A prepared page whose renderer died while it waited (killed, out of
   * memory, a renderer fault) serves no document: it goes, as a parked one does in unpark, and the next is taken.
   */
  private async takeReady(): Promise<PooledPage> {
    for (;;) {
      const next = this.ready.shift();
      if (!next) return this.prepare();
      const page = await next.catch(() => null);
      if (!page) return this.prepare();
      if (page.alive()) return page;
      this.dispose(page).catch(() => undefined);
    }
  }

  private unpark(scope: string): PooledPage | undefined {
    for (let i = this.parked.length - 1; i >= 0; i--) {
      const entry = this.parked[i];
      if (entry.scope !== scope) continue;
      this.parked.splice(i, 1);
      clearTimeout(entry.timer);
      if (!entry.page.alive()) {
        this.dispose(entry.page).catch(() => undefined);
        continue;
      }
      entry.page.reused = true;
      return entry.page;
    }
    return undefined;
  }

  /** Keeps a page for its scope; the oldest parked pages go when more than the pool's size wait. */
  private park(scope: string, page: PooledPage) {
    const entry: ParkedPage = {
      scope,
      page,
      timer: setTimeout(() => {
        const at = this.parked.indexOf(entry);
        if (at >= 0) this.parked.splice(at, 1);
        this.dispose(page).catch(() => undefined);
      }, PARKED_MS),
    };
    entry.timer.unref();
    this.parked.push(entry);
    while (this.parked.length > this.config.maxConcurrent + this.config.prewarm) {
      const oldest = this.parked.shift()!;
      clearTimeout(oldest.timer);
      this.dispose(oldest.page).catch(() => undefined);
    }
  }

  private async dispose(page: PreparedPage) {
    try {
      // Only a running browser: after close() or a crash the context is gone with it, and asking for the instance
      // here would launch a new Chromium that nobody closes.
      const instance = this.instance;
      if (instance) {
        const { root } = await instance;
        await root.send('Target.disposeBrowserContext', { browserContextId: page.browserContextId });
      }
    } catch {
      // The browser is gone (and with it the context), or the context already was.
    } finally {
      this.forget(page.browserContextId, page.targetId);
      await page.proxy.close();
    }
  }

  /** The running browser's process id (diagnostics; undefined before launch). */
  async processId(): Promise<number | undefined> {
    return this.instance ? (await this.instance).browser.process()?.pid : undefined;
  }

  async close(): Promise<void> {
    const instance = this.instance;
    this.closed = true;
    this.instance = null;
    const pending = [...this.ready];
    this.discardReady();
    await Promise.allSettled(pending);
    if (instance) await (await instance).browser.close().catch(() => undefined);
    // Documents in flight may be waiting on their page for what will never come now (an event, the network going
    // quiet, a bundle file): they end now, as RendererStoppedError (see withPage), not at their own time limits.
    for (const fail of this.crashHandlers.values()) fail('the service closed its browser');
    this.crashHandlers.clear();
  }
}
