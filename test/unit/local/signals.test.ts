import { stopOnSignals } from '../../../local/signals';

/** A service whose stop the test ends by hand, and a process whose exits and lines are recorded. */
function setup(limitMs = 60_000) {
  let clock = 1_000_000;
  let settle!: { resolve: () => void; reject: (err: Error) => void };
  const stops: number[] = [];
  const service = {
    stop: () => {
      stops.push(clock);
      return new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    },
  };
  const exits: number[] = [];
  const lines: string[] = [];
  const onSignal = stopOnSignals(service, { limitMs, write: (l) => lines.push(l), exit: (c) => exits.push(c), now: () => clock });
  return {
    onSignal,
    stops,
    exits,
    lines,
    settle: () => settle,
    advance: (ms: number) => {
      clock += ms;
      jest.advanceTimersByTime(ms);
    },
  };
}

const flush = () => new Promise<void>((resolve) => jest.requireActual<typeof import('timers')>('timers').setImmediate(resolve));

describe('stopOnSignals', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('stops once and exits 0 when the stop finishes', async () => {
    const s = setup();
    s.onSignal('SIGTERM');
    expect(s.stops).toHaveLength(1);
    expect(s.lines).toEqual(['SIGTERM: stopping (requests and work in flight finish, for up to 60 s; signal again to exit at once)']);
    s.settle().resolve();
    await flush();
    expect(s.exits).toEqual([0]);
    // The limit's timer went with the stop: it does not exit a second time.
    s.advance(60_000);
    expect(s.exits).toEqual([0]);
  });

  it('takes one Ctrl-C that arrives twice (from the terminal and from npm) as one stop', async () => {
    const s = setup();
    s.onSignal('SIGINT');
    s.advance(3);
    s.onSignal('SIGINT');
    s.advance(990);
    s.onSignal('SIGINT');
    expect(s.stops).toHaveLength(1);
    expect(s.exits).toEqual([]);
    s.settle().resolve();
    await flush();
    expect(s.exits).toEqual([0]);
  });

  it('exits 1 at once on a signal a second or more after the first, without waiting for the stop', async () => {
    const s = setup();
    s.onSignal('SIGINT');
    s.advance(1_000);
    s.onSignal('SIGTERM');
    expect(s.exits).toEqual([1]);
    expect(s.lines[1]).toBe('SIGTERM again: exiting now; the next start takes over the work still in flight');
    // The stop finishing later exits nothing more.
    s.settle().resolve();
    await flush();
    s.advance(60_000);
    expect(s.exits).toEqual([1]);
    expect(s.stops).toHaveLength(1);
  });

  it('exits 1 when the stop takes longer than its limit', async () => {
    const s = setup(5_000);
    s.onSignal('SIGTERM');
    s.advance(4_999);
    expect(s.exits).toEqual([]);
    s.advance(1);
    expect(s.exits).toEqual([1]);
    expect(s.lines[1]).toBe('still stopping after 5 s: exiting now; the next start takes over the work still in flight');
    s.settle().resolve();
    await flush();
    expect(s.exits).toEqual([1]);
  });

  it('exits 1 and says why when the stop fails', async () => {
    const s = setup();
    s.onSignal('SIGTERM');
    s.settle().reject(new Error('the table would not close'));
    await flush();
    expect(s.exits).toEqual([1]);
    expect(s.lines[1]).toMatch(/^the stop failed: Error: the table would not close/);
    s.advance(60_000);
    expect(s.exits).toEqual([1]);
  });
});
