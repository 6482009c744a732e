/**
 * Prepare run twice at once for one job: Step Functions starts a retry while the first attempt's Lambda may still be
 * running. The interleaving is forced by holding the two attempts' calls and letting them through in order.
 */
import { prepareBulkJob } from '../../../../functions/core/bulk/prepare';
import type { BulkRequest } from '../../../../functions/core/bulk/requests';
import { bulkKeys } from '../../../../functions/core/bulk/storage';
import { submitBulkJob } from '../../../../functions/core/bulk/submit';
import { parsePdfOptions } from '../../../../functions/core/render/options';
import { bulkWorld } from '../../../support/bulk-memory';
import { rawZip } from '../../../support/zips';

/**
 * Holds every call of `target[method]` until the test lets it through: `arrived(n)` resolves once n calls wait,
 * `held()` counts them, `pass(i)` runs the i-th and answers its result; after `open()` further calls go straight through.
 */
function holdCalls<T extends object>(target: T, method: keyof T) {
  const real = (target[method] as (...args: unknown[]) => Promise<unknown>).bind(target);
  const held: { go: () => void; result: Promise<unknown> }[] = [];
  const waiting: { n: number; resolve: () => void }[] = [];
  let opened = false;
  (target as Record<keyof T, unknown>)[method] = (...args: unknown[]) => {
    if (opened) return real(...args);
    let go!: () => void;
    const result = new Promise<void>((resolve) => (go = resolve)).then(() => real(...args));
    held.push({ go, result });
    for (const w of waiting) if (held.length >= w.n) w.resolve();
    return result;
  };
  return {
    held: () => held.length,
    arrived: (n: number) => (held.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ n, resolve }))),
    pass: (i: number) => (held[i].go(), held[i].result),
    open: () => void (opened = true),
  };
}

/** Resolves once `p` settled, either way. */
const settled = (p: Promise<unknown>) => p.then(() => undefined, () => undefined);

describe('prepareBulkJob run twice at once', () => {
  it('both attempts claim-check, commit and answer the same: one commitment for the whole job, nothing charged, the job processing', async () => {
    const files = 3;
    const plan = bulkWorld().plan;
    // Exactly enough for the files: the second attempt counting the first one's commitment as another job's would refuse it.
    const w = bulkWorld((files * plan.price_per_pdf_micros) / 1e6);
    const zip = rawZip(Array.from({ length: files }, (_, i) => ({ name: `f${i}.html`, data: '<p>x</p>' })));
    const request: BulkRequest = { bundle_type: 'html', options: parsePdfOptions({}), input: { kind: 'zip', bytes: zip } };
    const { job_id } = await submitBulkJob(w.deps, { account: w.account, plan: w.plan, request });
    const before = (await w.accounts.get(w.account.account_id))!;

    const claims = holdCalls(w.jobs, 'putIf');
    const commits = holdCalls(w.commitments, 'replace');
    const input = { job_id, account_id: w.account.account_id };
    const first = prepareBulkJob(w.deps, input);
    const retry = prepareBulkJob(w.deps, input);

    // The first attempt claims the queued job; the retry's claim finds it processing already.
    await Promise.race([claims.arrived(2), settled(first), settled(retry)]);
    expect(claims.held()).toBe(2);
    expect(await claims.pass(0)).toBe(true);
    expect(await claims.pass(1)).toBe(false);
    claims.open();
    // Both checked the balance on the same account version; the first attempt's commitment lands, the retry's write
    // then conflicts and it checks again, over the commitment of its own job.
    // (An attempt that answers without getting there ends the wait: it fails the test rather than hanging it.)
    await Promise.race([commits.arrived(2), settled(first), settled(retry)]);
    expect(commits.held()).toBe(2);
    expect(await commits.pass(0)).toBe(true);
    expect(await commits.pass(1)).toBe(false);
    commits.open();

    const answers = await Promise.all([first, retry]);
    const prepared = { job_id, account_id: w.account.account_id, status: 'processing', items: [0, 1, 2] };
    expect(answers).toEqual([prepared, prepared]);
    expect(await w.jobs.get(job_id)).toMatchObject({ status: 'processing', file_count: files, processed_count: 0, failure_count: 0, error_code: null });
    const account = (await w.accounts.get(w.account.account_id))!;
    expect(account.credits_micros).toBe(before.credits_micros);
    expect(account.commitments).toEqual({ [job_id]: expect.objectContaining({ charges: files, amount_micros: plan.price_per_pdf_micros }) });
    expect(w.chargeStore.ledger.size).toBe(0);
    expect(await w.files.list(job_id)).toEqual([]);
    expect(await w.blobs.get(bulkKeys.index(w.account.account_id, job_id))).not.toBeNull();
  });
});
