import { ChromiumBrowser } from '../../functions/adapters/chromium/browser';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';

let stack: TestStack;
let user: TestAccount;

beforeAll(async () => {
  // The 30 s and 28 s limits, shortened so the test is quick; the details report the limit in force.
  stack = await startTestStack({ QUICKJOB_TIMEOUT_SECONDS: '3', LONGJOB_SUBMISSION_SECONDS: '2' });
  user = await stack.account({ credits_usd: 1 });
});
afterAll(() => stack?.stop());

describe('quick job time limit', () => {
  it('answers 408 QUICKJOB_TIMEOUT, records a timeout job, charges nothing, and keeps serving', async () => {
    const before = (await stack.services.accounts.get(user.account_id))!.credits_micros;
    // That the 3 s limit ended it (not some other, longer one) is what timeout_seconds below says.
    const res = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>spin</p><script>for(;;){}</script>' } });
    expect(res.status).toBe(408);
    const { error } = await res.json();
    expect(error).toMatchObject({ code: 'QUICKJOB_TIMEOUT', details: { timeout_seconds: 3, suggestion: 'use_longjob_endpoint' } });

    const job = await (await stack.request('GET', `/jobs/${error.details.job_id}`, { key: user.api_key })).json();
    expect(job).toMatchObject({ status: 'timeout', timeout_occurred: true, error_code: 'QUICKJOB_TIMEOUT', error_message: expect.any(String) });
    // A timed-out job has ended: completed_at is when, as an ISO 8601 time no earlier than created_at.
    expect(job.completed_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Date.parse(job.completed_at)).toBeGreaterThanOrEqual(Date.parse(job.created_at));
    expect((await stack.services.accounts.get(user.account_id))!.credits_micros).toBe(before);

    const next = await stack.request('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: '<p>after</p>' } });
    expect(next.status).toBe(200);
  });
});

describe('a document a script reopened after load (document.write without document.close)', () => {
  const html = `<p>first</p><script>onload = () => setTimeout(() => document.write('<p>written late</p>'), 0)</script>`;
  // An account of its own: the long-job test below counts the other account's jobs.
  let writer: TestAccount;
  beforeAll(async () => {
    writer = await stack.account({ credits_usd: 1 });
  });

  it('prints as a quick job within the limit (it waited for a load that never comes and answered 408)', async () => {
    const res = await stack.request('POST', '/quickjob', { key: writer.api_key, json: { input_type: 'html', html } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
  });

  it('can be submitted as a long job (counting its pages ran out the submission limit: 408 RENDER_TIMEOUT)', async () => {
    const res = await stack.request('POST', '/longjob', { key: writer.api_key, json: { input_type: 'html', html } });
    expect(res.status).toBe(202);
  });
});

describe('long-job submission time limit', () => {
  it('answers 408 RENDER_TIMEOUT when counting the pages takes too long, and creates no job', async () => {
    const res = await stack.request('POST', '/longjob', { key: user.api_key, json: { input_type: 'html', html: '<p>spin</p><script>for(;;){}</script>' } });
    expect(res.status).toBe(408);
    expect((await res.json()).error).toMatchObject({ code: 'RENDER_TIMEOUT', details: { timeout_seconds: 2 } });
    const jobs = await (await stack.request('GET', '/jobs?job_type=long', { token: user.id_token })).json();
    expect(jobs.count).toBe(0);
  });
});

describe('printing slots shared between accounts', () => {
  let shared: TestStack;
  beforeAll(async () => {
    // Three printing slots (the default on two cores), whatever the machine: six documents are more than they hold.
    shared = await startTestStack({ QUICKJOB_TIMEOUT_SECONDS: '10', RENDER_MAX_CONCURRENT: '3' });
  });
  afterAll(() => shared?.stop());

  it("lets another account's document print at once while one account's spinning documents hold every slot", async () => {
    const [hog, other] = [await shared.account({ credits_usd: 1 }), await shared.account({ credits_usd: 1 })];
    // Watches the browser's pages (calls go through unchanged): the hog's documents that asked for one, and those
    // that got one (a page is handed over with a printing slot).
    let hogAsked = 0;
    let hogPrinting = 0;
    const withPage = ChromiumBrowser.prototype.withPage;
    const spy = jest.spyOn(ChromiumBrowser.prototype, 'withPage').mockImplementation(function (this: ChromiumBrowser, work, placement) {
      const mine = placement?.tenant === hog.account_id;
      if (mine) hogAsked++;
      return withPage.call(this, (page) => (mine && hogPrinting++, work(page)), placement);
    });
    const finished: string[] = [];
    try {
      const spinning = Array.from({ length: 6 }, (_, i) =>
        shared.request('POST', '/quickjob', { key: hog.api_key, json: { input_type: 'html', html: `<p>spin ${i}</p><script>for(;;){}</script>` } }).then((res) => {
          finished.push(`hog ${res.status}`);
        }),
      );
      // The six reach the renderer: three print (spinning), three wait for a slot.
      for (const until = Date.now() + 9_000; !(hogAsked === 6 && hogPrinting === 3) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
      // The moment the test is about: had the wait run out, the other account's document would come at some other point.
      expect({ hogAsked, hogPrinting }).toEqual({ hogAsked: 6, hogPrinting: 3 });
      const res = await shared.request('POST', '/quickjob', { key: other.api_key, json: { input_type: 'html', html: '<p>meanwhile</p>' } });
      finished.push(`other ${res.status}`);
      await Promise.all(spinning);
    } finally {
      spy.mockRestore();
    }
    // Answered before any spinning document reached its limit; first come, first served would have made it wait for one.
    expect(finished).toEqual(['other 200', ...Array(6).fill('hog 408')]);
  });
});
