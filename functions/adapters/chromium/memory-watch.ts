import { readFile, readdir } from 'node:fs/promises';

/** How often Chromium's processes are measured while documents are open: a page filling memory at ~1 GB/s overshoots by a quarter GB at most. */
const SCAN_MS = 250;

/** A crash reported this long after a kill is not attributed to it. */
const CLAIM_MS = 5_000;

/** Resident memory of a process from /proc (VmRSS, in kB), or null when it is gone or /proc is not there. */
async function residentBytes(pid: number): Promise<number | null> {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
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
   * them made every other document print 10 times slower. Unset: no cap.
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
      const { pageBytes, browserBytes, audioThreads: maxAudioThreads } = this.caps;
      await Promise.all([
        ...(pageBytes ? renderers.map((pid) => this.killIfOver(pid, pageBytes, 'renderer')) : []),
        ...(maxAudioThreads ? renderers.map((pid) => this.killIfAudioOver(pid, maxAudioThreads)) : []),
        ...(browserBytes && browser !== null ? [this.killIfOver(browser, browserBytes, 'browser')] : []),
      ]);
    } finally {
      this.scanning = false;
    }
  }

  private async killIfOver(pid: number, capBytes: number, kind: 'renderer' | 'browser') {
    const bytes = await residentBytes(pid);
    if (bytes === null || bytes <= capBytes) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return; // gone already
    }
    if (kind === 'browser') this.killedBrowsers.add(pid);
    else this.unclaimedKills.push({ at: Date.now(), reason: 'memory' });
    this.log?.(`chromium: ${kind} ${pid} used ${Math.round(bytes / 2 ** 20)} MB (cap ${Math.round(capBytes / 2 ** 20)} MB); killed it`);
  }

  private async killIfAudioOver(pid: number, max: number) {
    const threads = await audioThreads(pid);
    if (threads <= max) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return; // gone already (killed for its memory in this same scan, say)
    }
    this.unclaimedKills.push({ at: Date.now(), reason: 'audio_threads' });
    this.log?.(`chromium: renderer ${pid} ran ${threads} audio threads (cap ${max}); killed it`);
  }
}
