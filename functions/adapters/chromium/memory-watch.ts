import { readFile } from 'node:fs/promises';

/** How often renderers are measured while documents are open: a page filling memory at ~1 GB/s overshoots by a quarter GB at most. */
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

/**
 * Kills renderer processes whose resident memory passes a cap. V8's heap limit does not cover ArrayBuffers or
 * decoded images: one page allocating typed arrays reached 16 GB here, enough to take the whole machine (or
 * Lambda sandbox) down with it. Each document has its own renderer process, so killing one fails one document
 * (as a crash) and nothing else.
 */
export class RendererMemoryWatch {
  private openDocuments = 0;
  private timer: NodeJS.Timeout | null = null;
  private scanning = false;
  /** When recent kills happened whose crash has not been reported yet: the next crash is taken to be one of them. */
  private unclaimedKills: number[] = [];

  constructor(
    readonly capBytes: number,
    /** The browser's renderer process ids (from CDP's SystemInfo.getProcessInfo). */
    private readonly renderers: () => Promise<number[]>,
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
    }
  }

  /** True when a renderer crash is most likely this watch's doing (a kill not yet matched with a crash). */
  claimKill(): boolean {
    // A kill whose crash never came (its context was being disposed anyway) must not explain a later crash.
    this.unclaimedKills = this.unclaimedKills.filter((at) => Date.now() - at < CLAIM_MS);
    return this.unclaimedKills.shift() !== undefined;
  }

  /** Measures every renderer once and kills those over the cap. */
  async scan(): Promise<void> {
    if (this.scanning) return;
    this.scanning = true;
    try {
      const pids = await this.renderers().catch(() => []);
      await Promise.all(
        pids.map(async (pid) => {
          const bytes = await residentBytes(pid);
          if (bytes === null || bytes <= this.capBytes) return;
          try {
            process.kill(pid, 'SIGKILL');
            this.unclaimedKills.push(Date.now());
            this.log?.(`chromium: renderer ${pid} used ${Math.round(bytes / 2 ** 20)} MB (cap ${Math.round(this.capBytes / 2 ** 20)} MB); killed it`);
          } catch {
            // Gone already.
          }
        }),
      );
    } finally {
      this.scanning = false;
    }
  }
}
