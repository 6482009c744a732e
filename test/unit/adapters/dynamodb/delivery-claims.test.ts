import { DynamoDeliveryStore } from '../../../../functions/adapters/dynamodb/webhooks';
import { withLocalTable } from '../../../support/local-table';

/** Against dynalite: a delivery claim taken over after its worker died says how many attempts that worker made. */
describe('DynamoDeliveryStore: claims and attempts', () => {
  const table = withLocalTable('claims', (db) => ({ store: new DynamoDeliveryStore(db) }));

  const at = (s: number) => new Date(Date.UTC(2026, 10, 22, 12, 0, s)).toISOString();
  const claim = (pair: { job_id: string; event_id: string; webhook_id: string }, deliveryId: string, now: number) =>
    table.store.claim({ ...pair, delivery_id: deliveryId, now: at(now), lease_until: at(now + 10) });

  it('starts a fresh claim at 0 attempts; a takeover goes on from the last attempt noted, or 1 when none was', async () => {
    const noted = { job_id: 'job_1', event_id: 'evt_1', webhook_id: 'wh_1' };
    expect(await claim(noted, 'dlv_A', 0)).toEqual({ state: 'claimed', delivery_id: 'dlv_A', attempts_before: 0 });
    await table.store.noteAttempt({ ...noted, delivery_id: 'dlv_A', attempt: 3 });
    expect(await claim(noted, 'dlv_B', 5)).toEqual({ state: 'busy' });
    // The first worker died: past its lease the claim is taken over, keeping its delivery id and its count.
    expect(await claim(noted, 'dlv_B', 11)).toEqual({ state: 'claimed', delivery_id: 'dlv_A', attempts_before: 3 });

    const silent = { job_id: 'job_1', event_id: 'evt_2', webhook_id: 'wh_1' };
    await claim(silent, 'dlv_C', 0);
    expect(await claim(silent, 'dlv_D', 11)).toEqual({ state: 'claimed', delivery_id: 'dlv_C', attempts_before: 1 });
  });

  it('notes attempts only on a claim still pending under the same delivery id', async () => {
    const pair = { job_id: 'job_2', event_id: 'evt_1', webhook_id: 'wh_1' };
    await claim(pair, 'dlv_E', 0);
    await table.store.noteAttempt({ ...pair, delivery_id: 'dlv_other', attempt: 4 });
    expect(await claim(pair, 'dlv_F', 11)).toEqual({ state: 'claimed', delivery_id: 'dlv_E', attempts_before: 1 });
    await table.store.release({ ...pair, delivery_id: 'dlv_E', at: at(12) });
    // A closed claim takes no note (and the call does not fail).
    await table.store.noteAttempt({ ...pair, delivery_id: 'dlv_E', attempt: 2 });
    expect(await claim(pair, 'dlv_G', 30)).toEqual({ state: 'done' });
  });

  it('completes a series of a webhook deleted meanwhile: the record is kept and the claim closed, without counters', async () => {
    const pair = { job_id: 'job_3', event_id: 'evt_1', webhook_id: 'wh_gone' };
    await claim(pair, 'dlv_H', 0);
    const record = {
      ...pair,
      delivery_id: 'dlv_H',
      account_id: 'acc_1',
      event_type: 'job.completed' as const,
      status: 'success' as const,
      status_code: 200,
      error_message: null,
      retry_count: 0,
      started_at: at(0),
      delivered_at: at(1),
      duration_ms: 5,
      payload_size_bytes: 10,
    };
    await table.store.complete(record);
    expect((await table.store.listForJob('job_3', { limit: 10 })).records).toEqual([record]);
    expect(await claim(pair, 'dlv_I', 30)).toEqual({ state: 'done' });
  });
});
