import { type Job, type JobStatus, type JobType, newJob } from '../../functions/core/jobs/job';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';

let stack: TestStack;
let user: TestAccount;
let other: TestAccount;
/** The user's jobs, newest first. */
let mine: Job[];

const SPEC_SUMMARY_FIELDS = ['job_id', 'status', 'job_type', 'bundle_type', 'file_count', 'success_count', 'failure_count', 'pages_total', 'created_at', 'completed_at'];

async function seed(account: TestAccount, n: number, prefix: string): Promise<Job[]> {
  const statuses: JobStatus[] = ['completed', 'failed', 'queued', 'partial_failed', 'timeout'];
  const types: JobType[] = ['quick', 'long', 'bulk'];
  const jobs: Job[] = [];
  for (let i = 0; i < n; i++) {
    // Spread over two months, one job per day, in an order unrelated to the ids.
    const created = new Date(Date.UTC(2026, 9, 1 + ((i * 7) % n), 12, 0, i));
    const base = newJob({ job_id: `job_${prefix}${String(i).padStart(3, '0')}`, account_id: account.account_id, job_type: types[i % 3], status: statuses[i % 5], mode: 'html', now: created });
    const job: Job =
      base.job_type === 'bulk'
        ? { ...base, bundle_type: 'html', file_count: 4, success_count: 3, failure_count: 1, pages_total: 9, completed_at: created.toISOString() }
        : { ...base, pages: 2, completed_at: base.status === 'queued' ? null : created.toISOString() };
    await stack.services.jobs.put(job);
    jobs.push(job);
  }
  return jobs.sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.job_id < b.job_id ? 1 : -1));
}

beforeAll(async () => {
  stack = await startTestStack();
  user = await stack.account();
  other = await stack.account();
  mine = await seed(user, 40, 'u');
  await seed(other, 12, 'o');
});
afterAll(() => stack?.stop());

async function list(query: string, account = user) {
  const res = await stack.request('GET', `/jobs${query}`, { token: account.id_token });
  return { status: res.status, body: await res.json() };
}

async function expectInvalid(query: string, parameter: string) {
  const { status, body } = await list(query);
  expect(status).toBe(400);
  expect(body.error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter } });
}

describe('GET /jobs', () => {
  it('lists the account’s jobs newest first with the spec’s summary fields', async () => {
    const { status, body } = await list('');
    expect(status).toBe(200);
    expect(body.count).toBe(40);
    expect(body.next_token).toBeNull();
    expect(body.jobs.map((j: Job) => j.job_id)).toEqual(mine.map((j) => j.job_id));
    expect(Object.keys(body.jobs[0]).sort()).toEqual([...SPEC_SUMMARY_FIELDS].sort());
    const bulk = body.jobs.find((j: Job) => j.job_type === 'bulk');
    expect(bulk).toMatchObject({ bundle_type: 'html', file_count: 4, success_count: 3, failure_count: 1, pages_total: 9 });
    const quick = body.jobs.find((j: Job) => j.job_type === 'quick');
    expect(quick).toMatchObject({ bundle_type: null, file_count: null, pages_total: 2 });
    expect(body.jobs.some((j: Job) => j.job_id.startsWith('job_o'))).toBe(false);
  });

  it('defaults to 50 per page and pages through everything exactly once with next_token', async () => {
    const many = await stack.account();
    const seeded = await seed(many, 55, 'm');
    const first = await list('', many);
    expect(first.body.count).toBe(50);
    expect(typeof first.body.next_token).toBe('string');

    const seen: string[] = [];
    let token: string | null = null;
    let pages = 0;
    do {
      const q: string = `?limit=7${token ? `&next_token=${encodeURIComponent(token)}` : ''}`;
      const { status, body } = await list(q, many);
      expect(status).toBe(200);
      expect(body.count).toBe(body.jobs.length);
      expect(body.count).toBeLessThanOrEqual(7);
      seen.push(...body.jobs.map((j: Job) => j.job_id));
      token = body.next_token;
      pages++;
    } while (token && pages < 20);
    expect(seen).toEqual(seeded.map((j) => j.job_id));
  });

  it('answers next_token null on a last page that is exactly full, and never a token leading to an empty page', async () => {
    const ten = await stack.account();
    await seed(ten, 10, 't');
    expect((await list('?limit=10', ten)).body).toMatchObject({ count: 10, next_token: null });
    const first = (await list('?limit=5', ten)).body;
    expect(typeof first.next_token).toBe('string');
    const second = (await list(`?limit=5&next_token=${encodeURIComponent(first.next_token)}`, ten)).body;
    expect(second).toMatchObject({ count: 5, next_token: null });
    // The same with a filter: 2 of the 10 are failed.
    expect((await list('?limit=2&status=failed', ten)).body).toMatchObject({ count: 2, next_token: null });
  });

  it('filters by status, job_type, truncated and creation month (UTC), also across pages', async () => {
    const failed = (await list('?status=failed')).body;
    expect(failed.jobs.map((j: Job) => j.job_id)).toEqual(mine.filter((j) => j.status === 'failed').map((j) => j.job_id));

    const bulk = (await list('?job_type=bulk&limit=3')).body;
    expect(bulk.jobs.every((j: Job) => j.job_type === 'bulk')).toBe(true);
    const rest = (await list(`?job_type=bulk&limit=100&next_token=${encodeURIComponent(bulk.next_token)}`)).body;
    expect([...bulk.jobs, ...rest.jobs].map((j: Job) => j.job_id)).toEqual(mine.filter((j) => j.job_type === 'bulk').map((j) => j.job_id));

    const october = (await list('?month=2026-10')).body;
    expect(october.jobs.map((j: Job) => j.job_id)).toEqual(mine.filter((j) => j.created_at.startsWith('2026-10')).map((j) => j.job_id));
    expect(october.count).toBe(31);
    expect((await list('?month=2026-11')).body.count).toBe(9);
    expect((await list('?month=2025-10')).body).toMatchObject({ count: 0, jobs: [], next_token: null });

    expect((await list('?truncated=false')).body.count).toBe(40);
    expect((await list('?truncated=true')).body.count).toBe(0);
    const combined = (await list('?status=completed&job_type=quick&month=2026-10')).body;
    expect(combined.jobs.map((j: Job) => j.job_id)).toEqual(
      mine.filter((j) => j.status === 'completed' && j.job_type === 'quick' && j.created_at.startsWith('2026-10')).map((j) => j.job_id),
    );
  });

  it('takes the creation month in UTC to the millisecond, and pages through combined filters', async () => {
    const edges = await stack.account();
    const at = (iso: string, id: string, job_type: JobType, status: JobStatus) =>
      stack.services.jobs.put({ ...newJob({ job_id: id, account_id: edges.account_id, job_type, status, mode: 'html', now: new Date(iso) }), completed_at: status === 'queued' ? null : iso });
    await at('2026-09-30T23:59:59.999Z', 'job_e_sep', 'long', 'failed');
    await at('2026-10-01T00:00:00.000Z', 'job_e_oct1', 'long', 'failed');
    await at('2026-10-15T12:00:00.000Z', 'job_e_oct2', 'quick', 'failed');
    await at('2026-10-20T12:00:00.000Z', 'job_e_oct3', 'long', 'completed');
    await at('2026-10-25T12:00:00.000Z', 'job_e_oct4', 'long', 'failed');
    await at('2026-10-31T23:59:59.999Z', 'job_e_oct5', 'long', 'failed');
    await at('2026-11-01T00:00:00.000Z', 'job_e_nov', 'long', 'failed');
    const ids = async (query: string) => (await list(query, edges)).body.jobs.map((j: Job) => j.job_id);
    expect(await ids('?month=2026-10')).toEqual(['job_e_oct5', 'job_e_oct4', 'job_e_oct3', 'job_e_oct2', 'job_e_oct1']);
    expect(await ids('?month=2026-09')).toEqual(['job_e_sep']);
    expect(await ids('?month=2026-11')).toEqual(['job_e_nov']);

    // status × job_type × month, one per page: every match once, the last page with a null token.
    const seen: string[] = [];
    let token: string | null = null;
    let pages = 0;
    do {
      const { status, body } = await list(`?status=failed&job_type=long&month=2026-10&limit=1${token ? `&next_token=${encodeURIComponent(token)}` : ''}`, edges);
      expect(status).toBe(200);
      expect(body.count).toBe(1);
      seen.push(...body.jobs.map((j: Job) => j.job_id));
      token = body.next_token;
      pages++;
    } while (token && pages < 10);
    expect(seen).toEqual(['job_e_oct5', 'job_e_oct4', 'job_e_oct1']);

    // The token of one filter set is refused under another (changed type, month, status, or a filter dropped).
    const first = (await list('?status=failed&job_type=long&month=2026-10&limit=1', edges)).body.next_token;
    for (const changed of ['?status=failed&job_type=quick&month=2026-10', '?status=failed&job_type=long&month=2026-11', '?status=completed&job_type=long&month=2026-10', '?status=failed&job_type=long']) {
      const { status, body } = await list(`${changed}&limit=1&next_token=${encodeURIComponent(first)}`, edges);
      expect([changed, status, body.error?.details?.parameter]).toEqual([changed, 400, 'next_token']);
    }
  });

  it('is for the dashboard ID token only: an API key is refused with 401', async () => {
    const res = await stack.request('GET', '/jobs', { key: user.api_key });
    expect(res.status).toBe(401);
    expect((await res.json()).error.code).toBe('UNAUTHORIZED');
  });

  it('refuses a limit outside 1–100 and bad filter values with 400 INVALID_PARAMETER', async () => {
    for (const limit of ['0', '101', '-1', 'abc', '1.5', '', '1e2']) await expectInvalid(`?limit=${limit}`, 'limit');
    expect((await list('?limit=1')).body.count).toBe(1);
    expect((await list('?limit=100')).body.count).toBe(40);
    await expectInvalid('?status=done', 'status');
    await expectInvalid('?job_type=fast', 'job_type');
    await expectInvalid('?truncated=yes', 'truncated');
    for (const month of ['2026-13', '2026-1', '26-10', '2026-10-01']) await expectInvalid(`?month=${month}`, 'month');
    // A repeated parameter: API Gateway keeps only its last value, which listed 5 for limit=500&limit=5 and dropped a filter.
    await expectInvalid('?limit=500&limit=5', 'limit');
    await expectInvalid('?status=failed&status=completed', 'status');
    await expectInvalid('?month=2026-10&month=2026-10', 'month');
  });

  it("refuses a tampered or forged next_token, and another account's token, with 400", async () => {
    const page = (await list('?limit=5')).body;
    const token: string = page.next_token;
    const [payload, mac] = token.split('.');
    // Point the position somewhere else and keep the signature: refused.
    const moved = Buffer.from(JSON.stringify(['2099-01-01T00:00:00.000Z', 'job_zzz'])).toString('base64url');
    await expectInvalid(`?limit=5&next_token=${moved}.${mac}`, 'next_token');
    const flipped = `${payload}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'AB' : 'AA'}`;
    await expectInvalid(`?limit=5&next_token=${encodeURIComponent(flipped)}`, 'next_token');
    await expectInvalid('?next_token=not-a-token', 'next_token');
    await expectInvalid(`?next_token=${'A'.repeat(5000)}`, 'next_token');

    // A genuine token of this account is refused for another account and for other filters.
    const res = await stack.request('GET', `/jobs?limit=5&next_token=${encodeURIComponent(token)}`, { token: other.id_token });
    expect(res.status).toBe(400);
    expect((await res.json()).error.details.parameter).toBe('next_token');
    await expectInvalid(`?limit=5&status=failed&next_token=${encodeURIComponent(token)}`, 'next_token');

    // Unchanged, it continues where the first page stopped (a different page size is fine).
    const next = (await list(`?limit=10&next_token=${encodeURIComponent(token)}`)).body;
    expect(next.jobs.map((j: Job) => j.job_id)).toEqual(mine.slice(5, 15).map((j) => j.job_id));
  });
});
