/**
 * Which refusal a conversion request gets when several apply at once. Document 1 lists the codes but not their order;
 * the order chosen (README, "Order of refusals") is pinned here over HTTP: plan (402), the body (400), the plan's
 * gates (403 type, 403 rate limit), the balance (403), then what needs decoding or fetching (images, URLs).
 */
import { multipart, png } from '../support/images';
import { type TestStack, startTestStack } from '../support/stack';
import { rawZip } from '../support/zips';

let stack: TestStack;
/** While set, the service's clock stands still at this moment, so rate-limited requests share one window. */
let pinned: Date | undefined;

beforeAll(async () => {
  stack = await startTestStack({}, { clock: { now: () => (pinned ? new Date(pinned) : new Date()) } });
  const standard = (await stack.services.plans.get('standard'))!;
  await stack.services.plans.put([
    { ...standard, plan_id: 'order_html_only', name: 'HTML only', enabled_conversion_types: ['html'] },
    { ...standard, plan_id: 'order_limited', name: 'Limited', rate_limit_per_minute: 1 },
  ]);
}, 60_000);
afterAll(() => stack?.stop());

async function codeOf(res: Response): Promise<[number, string]> {
  return [res.status, (await res.json()).error.code];
}

const post = (route: string, key: string, json: unknown) => stack.request('POST', route, { key, json });

describe('order of refusals on /quickjob and /longjob', () => {
  it('answers 402 for a pending account before looking at the body', async () => {
    const pending = await stack.account({ plan_id: 'pending' });
    expect(await codeOf(await post('/quickjob', pending.api_key, { input_type: 'pdf' }))).toEqual([402, 'UPGRADE_REQUIRED']);
    expect(await codeOf(await post('/longjob', pending.api_key, {}))).toEqual([402, 'UPGRADE_REQUIRED']);
  });

  it('names an unknown input_type before the missing content field', async () => {
    const user = await stack.account({ credits_usd: 1 });
    expect(await codeOf(await post('/quickjob', user.api_key, { input_type: 'pdf' }))).toEqual([400, 'INVALID_INPUT_TYPE']);
    expect(await codeOf(await post('/quickjob', user.api_key, { input_type: 'docx', markdown: '# x' }))).toEqual([400, 'INVALID_INPUT_TYPE']);
  });

  it('refuses an invalid body (400) before an empty balance (403)', async () => {
    const broke = await stack.account({ credits_usd: 0 });
    const badOption = { input_type: 'html', html: '<p>x</p>', options: { scale: 9 } };
    expect(await codeOf(await post('/quickjob', broke.api_key, badOption))).toEqual([400, 'INVALID_PARAMETER']);
    expect(await codeOf(await post('/longjob', broke.api_key, badOption))).toEqual([400, 'INVALID_PARAMETER']);
    expect(await codeOf(await post('/longjob', broke.api_key, { input_type: 'html', html: '<p>x</p>', email_notification: 'yes' }))).toEqual([400, 'INVALID_PARAMETER']);
    expect(await codeOf(await post('/quickjob', broke.api_key, { input_type: 'url', url: 'http://example.com/' }))).toEqual([400, 'INVALID_URL']);
    expect(await codeOf(await post('/quickjob', broke.api_key, { input_type: 'html', html: '<p>x</p>' }))).toEqual([403, 'INSUFFICIENT_CREDITS']);
  });

  it('checks the body before the plan\'s conversion types, and the types before the balance', async () => {
    const htmlOnly = await stack.account({ plan_id: 'order_html_only', credits_usd: 0 });
    expect(await codeOf(await post('/quickjob', htmlOnly.api_key, { input_type: 'markdown' }))).toEqual([400, 'MISSING_CONTENT_FIELD']);
    expect(await codeOf(await post('/quickjob', htmlOnly.api_key, { input_type: 'markdown', markdown: '# x' }))).toEqual([403, 'CONVERSION_TYPE_NOT_ENABLED']);
  });

  it('answers the plan rate limit before the balance', async () => {
    const limitedBroke = await stack.account({ plan_id: 'order_limited', credits_usd: 0 });
    pinned = new Date();
    try {
      const body = { input_type: 'html', html: '<p>x</p>' };
      expect(await codeOf(await post('/quickjob', limitedBroke.api_key, body))).toEqual([403, 'INSUFFICIENT_CREDITS']);
      expect(await codeOf(await post('/quickjob', limitedBroke.api_key, body))).toEqual([403, 'RATE_LIMIT_EXCEEDED']);
    } finally {
      pinned = undefined;
    }
  });

  it('decodes images only for an account that can pay: an unusable image behind an empty balance is 403', async () => {
    const broke = await stack.account({ credits_usd: 0 });
    const send = (fields: Parameters<typeof multipart>[0]) => {
      const { body, contentType } = multipart(fields);
      return stack.request('POST', '/quickjob', { key: broke.api_key, body, headers: { 'Content-Type': contentType } });
    };
    const corrupt = { name: 'images', value: png(20, 20).subarray(0, 60), filename: 'corrupt.png', type: 'image/png' };
    expect(await codeOf(await send([{ name: 'input_type', value: 'image' }, corrupt]))).toEqual([403, 'INSUFFICIENT_CREDITS']);
    // The form itself is read first: options that are not JSON are refused whatever the balance.
    const usable = { name: 'images', value: png(2, 2), filename: 'a.png', type: 'image/png' };
    expect(await codeOf(await send([{ name: 'input_type', value: 'image' }, { name: 'options', value: '{fit:' }, usable]))).toEqual([400, 'INVALID_OPTIONS_JSON']);
  });

  it('takes options in a JSON body as an object only: a string is INVALID_PARAMETER, INVALID_OPTIONS_JSON is for form fields', async () => {
    const user = await stack.account({ credits_usd: 1 });
    const res = await post('/quickjob', user.api_key, { input_type: 'html', html: '<p>x</p>', options: '{"format":' });
    expect(await res.json()).toMatchObject({ error: { code: 'INVALID_PARAMETER', details: { parameter: 'options' } } });
  });
});

describe('order of refusals on /bulkjob', () => {
  it('answers the plan rate limit before the balance', async () => {
    const limitedBroke = await stack.account({ plan_id: 'order_limited', credits_usd: 0 });
    pinned = new Date();
    try {
      const body = { zip_base64: rawZip([{ name: 'a.html', data: '<p>a</p>' }]).toString('base64') };
      expect(await codeOf(await post('/bulkjob', limitedBroke.api_key, body))).toEqual([403, 'INSUFFICIENT_CREDITS']);
      expect(await codeOf(await post('/bulkjob', limitedBroke.api_key, body))).toEqual([403, 'RATE_LIMIT_EXCEEDED']);
    } finally {
      pinned = undefined;
    }
  });
});
