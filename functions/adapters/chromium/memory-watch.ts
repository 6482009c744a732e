import { readFile, readdir } from 'node:fs/promises';

/** How often Chromium's processes are measured while documents are open: a page filling memory at ~1 GB/s overshoots by a quarter GB at most. */
const SCAN_MS = 250;

/** A crash reported this long after a kill is not attributed to it. */
const CLAIM_MS = 5_000;

/**
 * Threads of a renderer with a page, its compositor and task pools, and the workers and audio contexts a document may
 * run (~7 for a fresh one, one more per worker): only a renderer with more is looked at thread by thread.
 */
const QUIET_RENDERER_THREADS = 12;

/** Resident memory (VmRSS) and thread count of a process, from one read of /proc; null when it is gone or /proc is not there. */
async function processStatus(pid: number): Promise<{ bytes: number; threads: number } | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const rss = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return rss ? { bytes: Number(rss[1]) * 1024, threads: Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 0) } : null;
  } catch {
    return null;
  }
}

/** Web Audio's rendering threads of a process (OfflineAudioRenderer, Offline/Realtime AudioWorklet, …), by thread name. */
async function audioThreads(pid: number): Promise<number> {
  try {
    const names = await Promise.all((await readdir(`/proc/${pid}/task`)).map((tid) => readFile(`/proc/${pid}/task/${tid}/comm`, 'utf8').catch(() => '')));
    return names.filter((name) => /audio/i.test(name)).length;
  } catch {
    return 0;
  }
}

export interface MemoryCaps {
  /** A renderer process (one document) using more resident memory is killed. Unset: no cap. */
  pageBytes?: number;
  /** The browser process using more is killed (and relaunched on next use). Unset: no cap. */
  browserBytes?: number;
  /**
   * A renderer running more Web Audio rendering threads at once is killed. Each OfflineAudioContext renders on a thread
   * of its own beside the page, as busy as a worker but no target the worker count sees: a document starting 150 of
   * them made every other document print 10 times slower. Threads are named (a read each) only in a renderer running
   * more than QUIET_RENDERER_THREADS in all, so a renderer with few other threads may hold a few more. Unset: no cap.
   */
  audioThreads?: number;
}

/** Why the watch killed a renderer: the document used too much memory, or ran too many audio threads. */
export type KillReason = 'memory' | 'audio_threads';

/** Chromium's processes as CDP reports them (SystemInfo.getProcessInfo) and puppeteer launched them. */
export interface ChromiumProcesses {
  renderers: number[];
  browser: number | null;
}

/**
 * Kills Chromium processes whose resident memory passes a cap. V8's heap limit does not cover ArrayBuffers or
 * decoded images: one page allocating typed arrays reached 16 GB here, enough to take the whole machine (or
 * Lambda sandbox) down with it. Each document has its own renderer process, so killing one fails one document
 * (as a crash) and nothing else. Blob data lives in the browser process instead (a page holding Blobs took it to
 * 1.6 GB, and it kept that after the document was done); it cannot be told apart by document, so the browser is
 * killed and relaunched, failing the documents rendering at that moment — better than the machine running out.
 */
export class ChromiumMemoryWatch {
  private openDocuments = 0;
  private timer: NodeJS.Timeout | null = null;
  private scanning = false;
  /** Recent kills whose crash has not been reported yet: the next crash is taken to be the oldest of them. */
  private unclaimedKills: { at: number; reason: KillReason }[] = [];
  /** Browser processes this watch killed (a handful over a process's life: one per relaunch at most). */
  private readonly killedBrowsers = new Set<number>();

  constructor(
    private readonly caps: MemoryCaps,
    private readonly processes: () => Promise<ChromiumProcesses>,
    private readonly log?: (message: string) => void,
  ) {}

  documentOpened() {
    if (++this.openDocuments === 1 && !this.timer) {
      this.timer = setInterval(() => void this.scan(), SCAN_MS);
      this.timer.unref();
    }
  }

  documentClosed() {
    if (--this.openDocuments === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
      // Blob data can outlive its document in the browser process: measured once more now, a browser left over its cap
      // is killed while no document uses it, rather than under the next document.
      void this.scan();
    }
  }

  /** Why this watch killed the renderer that crashed, when the crash is most likely its doing (a kill not yet matched with a crash); else null. */
  claimKill(): KillReason | null {
    // A kill whose crash never came (its context was being disposed anyway) must not explain a later crash.
    this.unclaimedKills = this.unclaimedKills.filter(({ at }) => Date.now() - at < CLAIM_MS);
    return this.unclaimedKills.shift()?.reason ?? null;
  }

  /** True when this watch killed browser process `pid`: the documents in it failed with it. */
  killedBrowser(pid: number): boolean {
    return this.killedBrowsers.has(pid);
  }

  /** Measures every renderer and the browser once and kills those over their cap. */
  async scan(): Promise<void> {
    if (this.scanning) return;
    this.scanning = true;
    try {
      const { renderers, browser } = await this.processes().catch((): ChromiumProcesses => ({ renderers: [], browser: null }));
      const { browserBytes } = this.caps;
      await Promise.all([...renderers.map((pid) => this.checkRenderer(pid)), ...(browserBytes && browser !== null ? [this.checkBrowser(browser, browserBytes)] : [])]);
    } finally {
      this.scanning = false;
    }
  }

  /** One read of the renderer's status: killed over its memory cap, or over its audio-thread cap. */
  private async checkRenderer(pid: number) {
    const { pageBytes, audioThreads: maxAudio } = this.caps;
    if (!pageBytes && !maxAudio) return;
    const status = await processStatus(pid);
    if (!status) return;
    if (pageBytes && status.bytes > pageBytes) {
      this.kill(pid, 'memory', `renderer ${pid} used ${mb(status.bytes)} MB (cap ${mb(pageBytes)} MB)`);
      return;
    }
    // Naming every thread costs a read each: only a renderer with more threads than a quiet one is looked at.
    if (!maxAudio || status.threads <= QUIET_RENDERER_THREADS) return;
    const audio = await audioThreads(pid);
    if (audio > maxAudio) this.kill(pid, 'audio_threads', `renderer ${pid} ran ${audio} audio threads (cap ${maxAudio})`);
  }

  private async checkBrowser(pid: number, capBytes: number) {
    const status = await processStatus(pid);
    if (status && status.bytes > capBytes) this.kill(pid, 'browser', `browser ${pid} used ${mb(status.bytes)} MB (cap ${mb(capBytes)} MB)`);
  }

  /** Kills `pid` and records why: a browser by its pid, a renderer as a kill its crash will be matched with. */
  private kill(pid: number, reason: KillReason | 'browser', what: string) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return; // gone already
    }
    if (reason === 'browser') this.killedBrowsers.add(pid);
    else this.unclaimedKills.push({ at: Date.now(), reason });
    this.log?.(`chromium: ${what}; killed it`);
  }
}

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
