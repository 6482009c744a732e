import { readFileSync } from 'node:fs';
import { ChromiumBrowser, chromiumEnvironment } from '../../../functions/adapters/chromium/browser';
import { ChromiumRenderer } from '../../../functions/adapters/chromium/renderer';
import { parsePdfOptions } from '../../../functions/core/render/options';

/** A process's environment as the kernel shows it to anything that can read /proc (a compromised renderer, say). */
const environOf = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').filter(Boolean);

describe("Chromium's environment", () => {
  it('keeps paths, locale and fonts, and nothing else', () => {
    const env = chromiumEnvironment({ PATH: '/bin', HOME: '/h', LC_ALL: 'C', LD_LIBRARY_PATH: '/l', AWS_SESSION_TOKEN: 't', STRIPE_SECRET_KEY: 's', DATA_DIR: '/d' }, { FONTCONFIG_PATH: '/f' });
    expect(env).toEqual({ PATH: '/bin', HOME: '/h', LC_ALL: 'C', LD_LIBRARY_PATH: '/l', FONTCONFIG_PATH: '/f' });
  });

  it("holds none of the service's secrets or settings in the running browser and its renderers", async () => {
    process.env.CANARY_SECRET_FOR_CHROMIUM = 'do-not-leak';
    const browser = new ChromiumBrowser({ prewarm: 0, maxConcurrent: 1, executablePath: process.env.CHROMIUM_PATH });
    try {
      // A document is open, so its renderer process is running too.
      let pids: number[] = [];
      await browser.withPage(async (page) => {
        await page.session.send('Page.setDocumentContent', { frameId: page.frameId, html: '<p>x</p>' });
        const info = (await page.session.connection()!.send('SystemInfo.getProcessInfo')) as { processInfo: { id: number }[] };
        pids = info.processInfo.map((p) => p.id);
      });
      const browserPid = (await browser.processId())!;
      for (const pid of [browserPid, ...pids]) {
        let environ: string[];
        try {
          environ = environOf(pid);
        } catch {
          continue; // a short-lived helper that has exited
        }
        expect(environ.filter((e) => e.startsWith('CANARY_SECRET_FOR_CHROMIUM='))).toEqual([]);
      }
      expect(environOf(browserPid).some((e) => e.startsWith('PATH='))).toBe(true);
      expect(pids.length).toBeGreaterThan(1);
      // And it still prints.
      const { pages } = await new ChromiumRenderer(browser).render({ html: '<p>still prints</p>', options: parsePdfOptions({}), timeoutMs: 20_000 });
      expect(pages).toBe(1);
    } finally {
      delete process.env.CANARY_SECRET_FOR_CHROMIUM;
      await browser.close();
    }
  });
});
