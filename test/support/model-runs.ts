/** Plumbing shared by the model-based tests (test/unit/core/billing/model*.test.ts); each keeps its own model and checks. */
import type fc from 'fast-check';

/** Commands that check the stored state against the model after every step (`verify` names the step that broke it). */
export function commandsVerifiedBy<M extends object, R>(verify: (m: M, r: R, after: string) => Promise<void>) {
  return (name: string, run: (m: M, r: R) => Promise<void>, check: (m: M) => boolean = () => true): fc.AsyncCommand<M, R> => ({
    check,
    run: async (m, r) => {
      await run(m, r);
      await verify(m, r, name);
    },
    toString: () => name,
  });
}

/** Runs a fixed sequence of commands (a shrunk counterexample) with the same checks after every step. */
export async function replaySteps<M extends object, R>(setup: { model: M; real: R }, steps: fc.AsyncCommand<M, R>[]): Promise<void> {
  for (const step of steps) {
    if (!step.check(setup.model)) throw new Error(`step not applicable: ${step.toString()}`);
    await step.run(setup.model, setup.real);
  }
}

/** What the runs exercised, counted by kind; printed when `envVar` is set (to see that the generators reach the interesting states). */
export function runStats(envVar: string) {
  const stats = new Map<string, number>();
  return {
    tally: (what: string) => void stats.set(what, (stats.get(what) ?? 0) + 1),
    print: () => {
      if (process.env[envVar]) console.log([...stats].sort().map(([k, n]) => `${n}\t${k}`).join('\n'));
    },
  };
}

/** Every order of `xs` (steps run at once must end as some order of them one by one would). */
export function permutations<T>(xs: T[]): T[][] {
  return xs.length <= 1 ? [xs] : xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
}

/**
 * Commands over a pool of provider events that arrive late, out of order and again: `deliverOne(i)` delivers the
 * i-th pending event (modulo), `redeliver(i)` one already delivered. `deliver` applies an event to the real service
 * (and to the model, if it follows events).
 */
export function eventDeliveryCommands<M extends { pending: E[]; delivered: E[] }, R, E>(
  command: ReturnType<typeof commandsVerifiedBy<M, R>>,
  deliver: (m: M, r: R, e: E) => Promise<void>,
) {
  const deliverOneCmd = (i: number) =>
    command(
      `deliver pending event #${i}`,
      async (m, r) => {
        const [e] = m.pending.splice(i % m.pending.length, 1);
        m.delivered.push(e);
        await deliver(m, r, e);
      },
      (m) => m.pending.length > 0,
    );
  const redeliverCmd = (i: number) =>
    command(`redeliver event #${i}`, (m, r) => deliver(m, r, m.delivered[i % m.delivered.length]), (m) => m.delivered.length > 0);
  return { deliverOneCmd, redeliverCmd };
}

/** A provider event handed to the subscription service; an ignore only a broken generator causes fails the run. */
export async function handleChecked(
  subs: { handleEvent(e: { type: string }): Promise<{ result: string; reason?: string }> },
  e: { type: string },
  tally: (what: string) => void,
): Promise<void> {
  const res = await subs.handleEvent(e);
  tally(`${e.type}: ${res.result}${res.reason ? ` (${res.reason})` : ''}`);
  if (res.result === 'ignored' && ['malformed_event', 'unknown_price', 'event_type_not_handled'].includes(res.reason ?? '')) throw new Error(`${e.type} ignored: ${res.reason}`);
}
