import { QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type Dynamo, createDynamo } from '../../functions/adapters/dynamodb/client';
import { DynamoChargeStore } from '../../functions/adapters/dynamodb/charges';
import { DynamoAccountRepository } from '../../functions/adapters/dynamodb/accounts';
import { Billing, type Charge } from '../../functions/core/billing/charging';
import { usdToMicros } from '../../functions/core/billing/money';
import { completed, failed, newJob } from '../../functions/core/jobs/job';
import { type TestStack, startTestStack } from '../support/stack';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.stop());

function ledger(accountId: string) {
  const { config } = stack.services;
  const db = createDynamo({ tableName: config.tableName, region: config.region, endpoint: config.dynamodbEndpoint });
  return db.doc
    .send(new QueryCommand({ TableName: db.table, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :c)', ExpressionAttributeValues: { ':pk': `ACCOUNT#${accountId}`, ':c': 'CHARGE#' } }))
    .then((r) => r.Items ?? []);
}

describe('charging over HTTP', () => {
  it('20 concurrent quick jobs against a balance for 10 charge exactly 10 and never overdraw', async () => {
    const user = await stack.account({ credits_usd: 0.1 });
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: `<p>doc ${i}</p>` } })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 403)).toHaveLength(10);
    for (const r of responses.filter((x) => x.status === 403)) expect((await r.json()).error.code).toBe('INSUFFICIENT_CREDITS');
    const account = await stack.services.accounts.get(user.account_id);
    expect(account).toMatchObject({ credits_micros: 0, total_pdf_count: 10, total_amount_micros: usdToMicros(0.1) });
    expect(await ledger(user.account_id)).toHaveLength(10);
  });

  it('takes the subscription allowance first and leaves one-off credits alone', async () => {
    const user = await stack.account({ credits_usd: 1, subscription: { name: 'Starter', monthly_pdfs: 2000, price: 20 } });
    const res = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>x</p>' } });
    expect(res.status).toBe(200);
    const account = await stack.services.accounts.get(user.account_id);
    expect(account!.subscription!.allowance_micros).toBe(usdToMicros(19.99));
    expect(account!.credits_micros).toBe(usdToMicros(1));
  });

  it('stops using an allowance whose period ended, without touching credits beyond the charge', async () => {
    const user = await stack.account({ credits_usd: 1, subscription: { name: 'Starter', monthly_pdfs: 2000, price: 20, period_end: '2020-01-01T00:00:00Z' } });
    const res = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>x</p>' } });
    expect(res.status).toBe(200);
    const account = await stack.services.accounts.get(user.account_id);
    expect(account!.subscription!.allowance_micros).toBe(usdToMicros(20));
    expect(account!.credits_micros).toBe(usdToMicros(0.99));
  });

  it('uses free credits before one-off credits', async () => {
    const user = await stack.account({ credits_usd: 1, free_credits_usd: 0.01 });
    await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>1</p>' } });
    await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>2</p>' } });
    const account = await stack.services.accounts.get(user.account_id);
    expect(account).toMatchObject({ free_credits_micros: 0, credits_micros: usdToMicros(0.99) });
  });
});

describe('the charge path against the local transaction shim', () => {
  function billing() {
    const { config, clock } = stack.services;
    const db = createDynamo({ tableName: config.tableName, region: config.region, endpoint: config.dynamodbEndpoint });
    return new Billing(new DynamoAccountRepository(db), new DynamoChargeStore(db), clock);
  }
  const charge = (accountId: string, jobId: string, unit = 'pdf'): Charge => ({ account_id: accountId, job_id: jobId, unit, operation: 'pdf', amount_micros: 10_000, pdf_count: 1 });

  it('50 concurrent charges against 10 credits leave exactly 10 charges and a zero balance', async () => {
    const user = await stack.account({ credits_usd: 0.1 });
    const b = billing();
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => b.charge(charge(user.account_id, `job_c${i}`))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    for (const r of results.filter((x) => x.status === 'rejected')) expect((r as PromiseRejectedResult).reason.code).toBe('INSUFFICIENT_CREDITS');
    expect(await stack.services.accounts.get(user.account_id)).toMatchObject({ credits_micros: 0, total_pdf_count: 10 });
    expect(await ledger(user.account_id)).toHaveLength(10);
  });

  it('charges a (job, unit) exactly once even when retried concurrently', async () => {
    const user = await stack.account({ credits_usd: 1 });
    const b = billing();
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => b.charge(charge(user.account_id, 'job_retried', 'file#3'))));
    expect(outcomes.filter((o) => o.outcome === 'charged')).toHaveLength(1);
    expect(outcomes.filter((o) => o.outcome === 'already_charged')).toHaveLength(9);
    expect((await stack.services.accounts.get(user.account_id))!.credits_micros).toBe(usdToMicros(0.99));
  });

  it('completes a job only from a running state: one another task ended is left as it is, and nothing is charged', async () => {
    const user = await stack.account({ credits_usd: 1 });
    const b = billing();
    const now = new Date();
    const running = newJob({ job_id: 'job_raced', account_id: user.account_id, job_type: 'long', status: 'processing', mode: 'html', now });
    await stack.services.jobs.put(running);
    await stack.services.jobs.put(failed(running, now, 'RENDER_TIMEOUT', 'Rendering took too long.'));
    const refused = await b.charge(charge(user.account_id, 'job_raced'), { job: completed(running, now, { pages: 1 }) }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({ code: 'JOB_ALREADY_FINISHED', details: { job_id: 'job_raced' } });
    expect(await stack.services.jobs.get('job_raced')).toMatchObject({ status: 'failed', error_code: 'RENDER_TIMEOUT' });
    expect((await stack.services.accounts.get(user.account_id))!.credits_micros).toBe(usdToMicros(1));
    expect(await ledger(user.account_id)).toHaveLength(0);
    // A running job, or one first written by its charge (a quick job), completes with its charge.
    const quick = newJob({ job_id: 'job_first', account_id: user.account_id, job_type: 'quick', status: 'processing', mode: 'html', now });
    expect((await b.charge(charge(user.account_id, 'job_first'), { job: completed(quick, now, { pages: 1 }) })).outcome).toBe('charged');
    expect(await stack.services.jobs.get('job_first')).toMatchObject({ status: 'completed' });
  });

  it('charges many units in batched transactions exactly once, across buckets, even when runs overlap', async () => {
    const user = await stack.account({ credits_usd: 1, free_credits_usd: 0.25 });
    const units = Array.from({ length: 120 }, (_, i) => charge(user.account_id, 'job_batch', `file#${i}`));
    const b = billing();
    // Two finishes of one job at once (a retried step): each unit is charged once, whoever wins each batch.
    const done = await Promise.all([b.chargeInOrder(units), b.chargeInOrder(units)]);
    expect(done).toEqual([120, 120]);
    expect(await stack.services.accounts.get(user.account_id)).toMatchObject({ free_credits_micros: 0, credits_micros: usdToMicros(0.05), total_pdf_count: 120, total_amount_micros: usdToMicros(1.2) });
    const entries = (await ledger(user.account_id)) as { unit: string; bucket: string }[];
    expect(entries).toHaveLength(120);
    expect(entries.filter((e) => e.bucket === 'free_credits')).toHaveLength(25);
  });

  it('stops a batched run where the balance ends, charging what it covers', async () => {
    const user = await stack.account({ credits_usd: 0.07 });
    const units = Array.from({ length: 10 }, (_, i) => charge(user.account_id, 'job_short', `file#${i}`));
    expect(await billing().chargeInOrder(units)).toBe(7);
    expect(await stack.services.accounts.get(user.account_id)).toMatchObject({ credits_micros: 0, total_pdf_count: 7 });
    expect(await ledger(user.account_id)).toHaveLength(7);
  });

  /** Billing whose charge writes lose their reply: after the write reached the table, before it, or through the SDK retrying a committed write. */
  function billingLosingReplies(lose: 'after' | 'before' | 'retried') {
    const { config, clock } = stack.services;
    const db = createDynamo({ tableName: config.tableName, region: config.region, endpoint: config.dynamodbEndpoint });
    const send = (command: unknown) => (db.doc.send as (c: unknown) => Promise<unknown>)(command);
    const lost = () => Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
    const flaky = {
      table: db.table,
      doc: {
        send: async (command: unknown) => {
          if (!(command instanceof TransactWriteCommand)) return send(command);
          if (lose === 'before') throw lost();
          await send(command);
          if (lose === 'retried') return send(command);
          throw lost();
        },
      },
    } as unknown as Dynamo;
    return new Billing(new DynamoAccountRepository(db), new DynamoChargeStore(flaky), clock);
  }

  it('knows a charge whose reply was lost committed, and charges it once', async () => {
    const user = await stack.account({ credits_usd: 1 });
    expect(await billingLosingReplies('after').charge(charge(user.account_id, 'job_lost_reply'))).toMatchObject({ outcome: 'charged', bucket: 'credits' });
    expect(await billingLosingReplies('retried').charge(charge(user.account_id, 'job_sdk_retry'))).toMatchObject({ outcome: 'charged' });
    expect((await billing().charge(charge(user.account_id, 'job_lost_reply'))).outcome).toBe('already_charged');
    expect((await stack.services.accounts.get(user.account_id))!.credits_micros).toBe(usdToMicros(0.98));
    expect(await ledger(user.account_id)).toHaveLength(2);
  });

  it('reports a charge that never reached the table as failed, with nothing written', async () => {
    const user = await stack.account({ credits_usd: 1 });
    await expect(billingLosingReplies('before').charge(charge(user.account_id, 'job_unsent'))).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(await ledger(user.account_id)).toHaveLength(0);
    expect((await stack.services.accounts.get(user.account_id))!.credits_micros).toBe(usdToMicros(1));
  });

  it('counts a batch whose reply was lost as charged once', async () => {
    const user = await stack.account({ credits_usd: 1 });
    const units = Array.from({ length: 5 }, (_, i) => charge(user.account_id, 'job_lost_batch', `file#${i}`));
    expect(await billingLosingReplies('after').chargeInOrder(units)).toBe(5);
    expect(await ledger(user.account_id)).toHaveLength(5);
    expect((await stack.services.accounts.get(user.account_id))!.credits_micros).toBe(usdToMicros(0.95));
  });

  it('refunds each charge of a job once, into the bucket it came from, also when refunds overlap', async () => {
    const user = await stack.account({ credits_usd: 1, free_credits_usd: 0.01, subscription: { name: 'Starter', monthly_pdfs: 2000, price: 20 } });
    const b = billing();
    const amount = (unit: string, usd: number): Charge => ({ ...charge(user.account_id, 'job_refunded', unit), amount_micros: usdToMicros(usd) });
    // Allowance 20 → 0.01; 0.02 from credits (nothing else covers it); the last cent of allowance; then free credits.
    for (const [unit, usd] of [['a', 19.99], ['b', 0.02], ['c', 0.01], ['d', 0.01]] as const) await b.charge(amount(unit, usd));
    expect(((await ledger(user.account_id)) as { bucket: string }[]).map((e) => e.bucket)).toEqual(['subscription', 'credits', 'subscription', 'free_credits']);
    const refunds = await Promise.all([b.refundJob(user.account_id, 'job_refunded'), b.refundJob(user.account_id, 'job_refunded')]);
    expect(refunds[0] + refunds[1]).toBe(usdToMicros(20.03));
    expect(await b.refundJob(user.account_id, 'job_refunded')).toBe(0);
    const account = await stack.services.accounts.get(user.account_id);
    expect(account).toMatchObject({ credits_micros: usdToMicros(1), free_credits_micros: usdToMicros(0.01), total_pdf_count: 0, total_amount_micros: 0 });
    expect(account!.subscription!.allowance_micros).toBe(usdToMicros(20));
    // The entries stay (the unit can never be charged again) and say where the money went.
    expect(((await ledger(user.account_id)) as { refunded_at?: string }[]).every((e) => !!e.refunded_at)).toBe(true);
    expect((await b.charge(amount('a', 0.01))).outcome).toBe('already_charged');
  });

  it.each([
    ['cancelled (its allowance is 0 and can never be spent)', "SET subscription.#status = :canceled, subscription.allowance_micros = :zero", { ':canceled': 'canceled', ':zero': 0 }],
    ['renewed since the charge (the new allowance is the plan amount: no rollover)', 'SET subscription.allowance_period_start = :later', { ':later': '2999-01-01T00:00:00.000Z' }],
  ])('refunds an allowance charge to one-off credits once the subscription is %s', async (_state, update, values) => {
    const user = await stack.account({ credits_usd: 1, subscription: { name: 'Starter', monthly_pdfs: 2000, price: 20 } });
    const b = billing();
    await b.charge(charge(user.account_id, 'job_sub_gone'));
    const allowanceAfterCharge = (await stack.services.accounts.get(user.account_id))!.subscription!.allowance_micros;
    const { config } = stack.services;
    const db = createDynamo({ tableName: config.tableName, region: config.region, endpoint: config.dynamodbEndpoint });
    await db.doc.send(
      new UpdateCommand({
        TableName: db.table,
        Key: { pk: `ACCOUNT#${user.account_id}`, sk: 'ACCOUNT' },
        UpdateExpression: update,
        ExpressionAttributeValues: values,
        ...(update.includes('#status') ? { ExpressionAttributeNames: { '#status': 'status' } } : {}),
      }),
    );
    expect(await b.refundJob(user.account_id, 'job_sub_gone')).toBe(10_000);
    const after = (await stack.services.accounts.get(user.account_id))!;
    expect(after.credits_micros).toBe(usdToMicros(1.01));
    expect(after.subscription!.allowance_micros).toBe(update.includes('#status') ? 0 : allowanceAfterCharge);
  });

  it('refunds an allowance charge to the allowance while its period lasts', async () => {
    const user = await stack.account({ credits_usd: 1, subscription: { name: 'Starter', monthly_pdfs: 2000, price: 20 } });
    const before = (await stack.services.accounts.get(user.account_id))!.subscription!.allowance_micros;
    const b = billing();
    await b.charge(charge(user.account_id, 'job_sub_live'));
    expect(await b.refundJob(user.account_id, 'job_sub_live')).toBe(10_000);
    const after = (await stack.services.accounts.get(user.account_id))!;
    expect(after.subscription!.allowance_micros).toBe(before);
    expect(after.credits_micros).toBe(usdToMicros(1));
  });

  it('writes nothing when the transaction is cancelled', async () => {
    const user = await stack.account({ credits_usd: 0 });
    await expect(billing().charge(charge(user.account_id, 'job_none'))).rejects.toMatchObject({ code: 'INSUFFICIENT_CREDITS' });
    expect(await ledger(user.account_id)).toHaveLength(0);
  });
});
