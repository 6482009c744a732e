import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { ChromiumMemoryWatch } from '../../../../functions/adapters/chromium/memory-watch';

/** A process holding about `mb` MB of touched memory; prints "ready" once it does. */
async function holding(mb: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', `globalThis.b = Buffer.alloc(${mb} * 2 ** 20, 1); console.log('ready'); setInterval(() => {}, 1000);`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await once(child.stdout!, 'data');
  return child;
}

describe('ChromiumMemoryWatch', () => {
  const children: ChildProcess[] = [];
  afterAll(() => children.forEach((c) => c.kill('SIGKILL')));

  it('kills the processes over the cap, leaves the others, and attributes one crash per kill', async () => {
    const big = await holding(160);
    const small = await holding(1);
    children.push(big, small);
    const logged: string[] = [];
    const watch = new ChromiumMemoryWatch({ pageBytes: 100 * 2 ** 20 }, async () => ({ renderers: [big.pid!, small.pid!, 999_999_999], browser: null }), (m) => logged.push(m));
    const exited = once(big, 'exit');
    await watch.scan();
    expect((await exited)[1]).toBe('SIGKILL');
    expect(small.exitCode).toBeNull();
    expect(small.signalCode).toBeNull();
    expect(logged).toEqual([expect.stringMatching(new RegExp(`renderer ${big.pid} used \\d+ MB \\(cap 100 MB\\)`))]);
    expect(watch.claimKill()).toBe('memory');
    expect(watch.claimKill()).toBeNull();
  });

  it('kills the browser over its own cap, and knows the browser it killed', async () => {
    const browser = await holding(160);
    const renderer = await holding(160);
    children.push(browser, renderer);
    const logged: string[] = [];
    const watch = new ChromiumMemoryWatch({ browserBytes: 100 * 2 ** 20 }, async () => ({ renderers: [renderer.pid!], browser: browser.pid! }), (m) => logged.push(m));
    const exited = once(browser, 'exit');
    await watch.scan();
    expect((await exited)[1]).toBe('SIGKILL');
    expect(renderer.signalCode).toBeNull(); // no page cap: renderers are left alone
    expect(logged).toEqual([expect.stringMatching(new RegExp(`browser ${browser.pid} used \\d+ MB \\(cap 100 MB\\)`))]);
    expect(watch.killedBrowser(browser.pid!)).toBe(true);
    expect(watch.killedBrowser(renderer.pid!)).toBe(false); // a document in another (relaunched) browser did not fail of it
    expect(watch.claimKill()).toBeNull(); // and no renderer crash is explained by it
  });

  it('measures only while documents are open', async () => {
    jest.useFakeTimers();
    try {
      let asked = 0;
      const watch = new ChromiumMemoryWatch({ pageBytes: 2 ** 30 }, async () => {
        asked++;
        return { renderers: [], browser: null };
      });
      await jest.advanceTimersByTimeAsync(1000);
      expect(asked).toBe(0);
      watch.documentOpened();
      watch.documentOpened();
      await jest.advanceTimersByTimeAsync(1000);
      expect(asked).toBe(4);
      watch.documentClosed();
      await jest.advanceTimersByTimeAsync(500);
      expect(asked).toBe(6); // one document is still open
      watch.documentClosed();
      await jest.advanceTimersByTimeAsync(1000);
      expect(asked).toBe(7); // once more as the last document closes (Blob data can outlive it), then no more
    } finally {
      jest.useRealTimers();
    }
  });
});
