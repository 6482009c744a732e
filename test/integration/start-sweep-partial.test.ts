import { BULK_SLOT_KIND } from '../../functions/core/bulk/deps';
import { PDFOP_SLOT_KIND } from '../../functions/core/pdfops/background';
import { handler as sweep } from '../../functions/workers/jobs/start-sweep';
import { simplePdf } from '../support/pdf-fixtures';
import { type TestStack, jobEventNames, startTestStack } from '../support/stack';
import { type TableCommand, interceptTable, tableError } from '../support/table-faults';
import { rawZip } from '../support/zips';

/**
 * A job its execution left unfinished (a long table outage failed its task, its RecordFailure and the report of its
 * end) is ended by the start sweeper through the failure recorder. When that recorder itself stops half-way (the
 * table fails again for a moment), the sweeper's next runs finish it: the charge comes back, slot and commitment go.
 */
describe('the start sweeper, when the failure recorder it calls stops half-way', () => {
  let stack: TestStack;
  let ahead = 0;
  let failIf: ((cmd: TableCommand) => boolean) | null = null;
  let outageAfter: ((cmd: TableCommand) => boolean) | null = null;
  beforeAll(async () => {
    stack = await startTestStack({ LOCAL_SFN_RETRY_MS: '0', LOCAL_SCHEDULE_INTERVAL_MS: '3600000' }, { clock: { now: () => new Date(Date.now() + ahead * 60_000) } });
    interceptTable(stack).hook = (cmd, send) => {
      if (failIf?.(cmd)) return Promise.reject(tableError());
      if (!outageAfter) return undefined;
      return send(cmd).then((out) => {
        if (outageAfter?.(cmd)) [outageAfter, failIf] = [null, () => true];
        return out;
      });
    };
  });
  afterAll(() => stack.stop());
  afterEach(() => {
    [failIf, outageAfter, ahead] = [null, null, 0];
  });

  const write = (name: string, text?: string) => (cmd: TableCommand) => cmd.constructor.name === name && (!text || JSON.stringify(cmd.input).includes(text));

  async function strand(submit: () => Promise<string>, after: (cmd: TableCommand) => boolean): Promise<string> {
    outageAfter = after;
    const id = await submit();
    await stack.workflows.idle();
    [failIf, outageAfter] = [null, null];
    expect((await stack.services.jobs.get(id))!.status).toBe('processing');
    return id;
  }

  async function sweepLater(failing: (cmd: TableCommand) => boolean) {
    ahead = 13;
    failIf = failing;
    expect((await sweep()).failed).toBe(1);
    failIf = null;
    for (const minutes of [14, 26]) {
      ahead = minutes;
      await sweep();
    }
  }

  async function leftOf(accountId: string, jobId: string, kind: string) {
    const svc = stack.services;
    const account = (await svc.accounts.get(accountId)) as unknown as { credits_micros: number; commitments?: Record<string, unknown> };
    return {
      status: (await svc.jobs.get(jobId))!.status,
      credits: account.credits_micros,
      commitments: Object.keys(account.commitments ?? {}),
      slots: await svc.jobSlots.holders({ accountId, kind, now: svc.clock.now() }),
      watches: (await svc.jobs.dueStartRecords(new Date(Date.now() + 2 * 86_400_000).toISOString(), 1000)).filter((s) => s.job_id === jobId).length,
    };
  }

  const bulk = async (apiKey: string) => {
    const zip = rawZip([0, 1].map((i) => ({ name: `f${i}.html`, data: `<p>file ${i}</p>` }))).toString('base64');
    const res = await stack.request('POST', '/bulkjob', { key: apiKey, json: { zip_base64: zip } });
    expect(res.status).toBe(202);
    return (await res.json()).job_id as string;
  };
  const merge = async (apiKey: string) => {
    const upload = async () => {
      const bytes = await simplePdf(2);
      const up = await (await stack.request('POST', '/pdf/upload-url', { key: apiKey, json: { content_length_bytes: bytes.length } })).json();
      expect((await fetch(up.upload_url, { method: 'PUT', headers: up.required_headers, body: Uint8Array.from(bytes) })).status).toBe(200);
      return up.s3_key as string;
    };
    const res = await stack.request('POST', '/pdf/jobs', { key: apiKey, json: { operation: 'merge', inputs: [{ s3_key: await upload(), filename: 'a.pdf' }, { s3_key: await upload(), filename: 'b.pdf' }] } });
    expect(res.status).toBe(202);
    return (await res.json()).job_id as string;
  };
  // The outage begins once Finish has charged the bulk job's files, or once MarkProcessing has run.
  const afterCharge = (cmd: TableCommand) => write('TransactWriteCommand', '"file#')(cmd);
  const afterMarkProcessing = (cmd: TableCommand) => cmd.constructor.name === 'PutCommand' && cmd.input.Item?.status === 'processing' && cmd.input.Item?.job_type === 'pdfop';

  it.each([
    ['its refund', write('TransactWriteCommand', 'refunded_at')],
    ['the deletion of its rows', write('BatchWriteCommand')],
  ])('bulk: %s failed once: the charge comes back, slot and commitment go', async (_what, failing) => {
    const { api_key, account_id } = await stack.account({ credits_usd: 1 });
    const before = (await stack.services.accounts.get(account_id))!.credits_micros;
    const id = await strand(() => bulk(api_key), afterCharge);
    expect((await stack.services.accounts.get(account_id))!.credits_micros).toBeLessThan(before);
    await sweepLater(failing);
    expect(await leftOf(account_id, id, BULK_SLOT_KIND)).toEqual({ status: 'failed', credits: before, commitments: [], slots: [], watches: 0 });
    expect(await jobEventNames(stack, id)).toEqual(['bulk.job.failed']);
  });

  it('merge: the write of its failed row failed once: slot and commitment go', async () => {
    const { api_key, account_id } = await stack.account({ credits_usd: 1 });
    const id = await strand(() => merge(api_key), afterMarkProcessing);
    await sweepLater(write('BatchWriteCommand'));
    expect(await leftOf(account_id, id, PDFOP_SLOT_KIND)).toEqual({ status: 'failed', credits: 1_000_000, commitments: [], slots: [], watches: 0 });
    expect(await jobEventNames(stack, id)).toEqual(['job.failed']);
  });
});
