/**
 * What the service logs, read back from its stderr at debug level: no credential, secret or customer content in
 * any line (known canaries fed through auth, conversions, long-job mail, webhooks and Stripe, on their failure paths
 * too), and lines an operator can use (the request id a 500 gives the caller, why Stripe refused).
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { type CapturedLogs, captureLogs } from '../support/log-capture';
import { type TestCa, type TestServer, httpsServer, makeTestCa } from '../support/servers';
import { type TestStack, startTestStack } from '../support/stack';
import { PRICES, type StripeDouble, TEST_WEBHOOK_SECRET, startStripeDouble } from '../support/stripe-double';
import { type TableFaults, interceptTable, tableError } from '../support/table-faults';

const SMTP_PASSWORD = 'smtp-pass-CANARY-1f3a';
const CANARY = {
  smtpPassword: SMTP_PASSWORD,
  signature: 'sig-CANARY-9b2e',
  credential: 'cred-CANARY-77aa',
  userinfo: 'userinfo-CANARY-c0de',
  html: 'html-CANARY-4242',
  markdown: 'markdown-CANARY-5151',
  stripeSignature: 'stripe-sig-CANARY-e3e3',
  paginationSecret: 'pagination-CANARY-0123456789abcdef0123456789abcdef',
};

let logs: CapturedLogs;
let stack: TestStack;
let smtp: SMTPServer;
let double: StripeDouble;
let ca: TestCa;
let site: TestServer;
let faults: TableFaults;

beforeAll(async () => {
  logs = captureLogs();
  // The stack's logger is made at its start: debug shows every line there is.
  process.env.LOG_LEVEL = 'debug';
  smtp = new SMTPServer({ disabledCommands: ['STARTTLS'], allowInsecureAuth: true, onAuth: (_auth, _session, cb) => cb(new Error('Authentication credentials invalid')) });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const smtpPort = ((smtp as unknown as { server: import('node:net').Server }).server.address() as AddressInfo).port;
  double = await startStripeDouble();
  ca = makeTestCa();
  site = await httpsServer(ca, (req, res) => {
    const url = req.url ?? '/';
    if (url.startsWith('/page')) return res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<p>${CANARY.html}</p>`);
    // A Location no URL parser takes (a password with a slash), and one with credentials and a signature.
    if (url.startsWith('/bad-redirect')) return res.writeHead(302, { Location: `https://u:pa/ss${CANARY.userinfo}@elsewhere.example/?X-Amz-Signature=${CANARY.signature}` }).end();
    if (url.startsWith('/credential-redirect')) return res.writeHead(302, { Location: `https://u:${CANARY.userinfo}@elsewhere.example/?X-Amz-Signature=${CANARY.signature}` }).end();
    if (url.startsWith('/fail')) return res.writeHead(500).end(`<p>${CANARY.html}</p>`);
    res.writeHead(404).end();
  });
  stack = await startTestStack(
    double.env({
      MAIL_SMTP_URL: `smtp://mailer:${SMTP_PASSWORD}@127.0.0.1:${smtpPort}`,
      PAGINATION_SECRET: CANARY.paginationSecret,
      ALLOW_PRIVATE_TARGETS: `localhost:${site.port}`,
      NODE_EXTRA_CA_CERTS: ca.caFile,
      LOCAL_SFN_RETRY_MS: '0',
    }),
  );
  faults = interceptTable(stack);
});
afterAll(async () => {
  await stack?.stop();
  await double?.stop();
  await site?.close();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  logs?.restore();
});
afterEach(() => {
  faults.hook = null;
});

/** A Starter subscription bought through checkout, so the account has a Stripe customer. */
async function subscribed() {
  const user = await stack.account({ plan_id: 'pending' });
  const customer = `cus_${randomBytes(6).toString('hex')}`;
  const now = Date.now();
  const sub = double.subscription({ customer, price: PRICES.starter, periodStart: new Date(now - 86_400_000).toISOString(), periodEnd: new Date(now + 29 * 86_400_000).toISOString() });
  const { payload, signature } = double.signedEvent('checkout.session.completed', double.checkoutSession({ mode: 'subscription', accountId: user.account_id, customer, subscription: sub.id }));
  const res = await stack.request('POST', '/stripe/webhook', { body: payload, headers: { 'Content-Type': 'application/json', 'Stripe-Signature': signature } });
  expect(res.status).toBe(200);
  return user;
}

describe('log lines an operator can use', () => {
  it("names the request id of a 500 (what the answer tells the caller to quote to support), and the answer shows nothing else", async () => {
    const user = await stack.account();
    logs.clear();
    faults.hook = () => Promise.reject(tableError('injected DynamoDB outage'));
    const res = await stack.request('GET', '/accounts/me', { token: user.id_token });
    faults.hook = null;
    expect(res.status).toBe(500);
    const body = await res.json();
    expect(body).toEqual({ error: { code: 'INTERNAL_SERVER_ERROR', message: expect.any(String), details: { request_id: res.headers.get('x-request-id') } } });
    expect(JSON.stringify(body)).not.toContain('DynamoDB');
    const errors = logs.entries().filter((e) => e.level === 'error');
    expect(errors).toEqual([expect.objectContaining({ message: expect.stringContaining(body.error.details.request_id), extra: expect.objectContaining({ message: 'injected DynamoDB outage' }) })]);
  });

  it('names the request id when the authorizer fails', async () => {
    const user = await stack.account();
    logs.clear();
    faults.hook = () => Promise.reject(tableError('injected DynamoDB outage'));
    const res = await stack.request('GET', '/me', { key: user.api_key });
    faults.hook = null;
    expect(res.status).toBe(500);
    const requestId = res.headers.get('x-request-id')!;
    expect(logs.entries().filter((e) => e.level === 'error' && e.message.includes(requestId))).toContainEqual(expect.objectContaining({ message: expect.stringContaining('authorizer failed') }));
  });

  it('says at error level why Stripe refused a request the caller got 502 for', async () => {
    const user = await subscribed();
    logs.clear();
    double.failNext = { status: 401, error: { type: 'invalid_request_error', message: 'Invalid API Key provided: sk_test_****0123' } };
    const res = await stack.request('POST', '/accounts/me/subscription/portal', { token: user.id_token, json: {} });
    expect(res.status).toBe(502);
    expect(logs.entries()).toEqual([
      expect.objectContaining({ level: 'error', message: expect.stringContaining('Stripe refused'), extra: expect.objectContaining({ status: 401, message: expect.stringContaining('Invalid API Key') }) }),
    ]);
  });
});

describe('no secret or customer content in any log line', () => {
  it('feeds known canaries through auth, conversions, long-job mail, webhooks and Stripe, failures included, and finds none logged', async () => {
    const user = await subscribed();
    const { config } = stack.services;
    const secrets: Record<string, string> = {
      ...CANARY,
      apiKey: user.api_key,
      idToken: user.id_token,
      webhookSecretsKey: config.webhookSecretsKey!,
      stripeSecretKey: config.stripe.secretKey!,
      stripeWebhookSecret: TEST_WEBHOOK_SECRET,
    };
    expect(config.paginationSecret).toBe(CANARY.paginationSecret);
    logs.clear();
    const call = (method: string, route: string, init: Parameters<TestStack['request']>[2]) => stack.request(method, route, init).then(async (r) => ({ status: r.status, text: await r.text() }));
    const site_ = (path: string) => `https://localhost:${site.port}${path}`;

    // Credentials, good and bad, in every header they travel in.
    await call('GET', '/me', { key: user.api_key });
    await call('GET', '/me', { key: `${user.api_key.slice(0, -4)}zzzz` });
    await call('GET', '/me', { token: user.id_token });
    await call('GET', '/me', { token: `${user.id_token.slice(0, -4)}AAAA` });
    await call('GET', '/me', { headers: { Authorization: `Basic ${user.api_key}`, Cookie: `session=${user.id_token}` } });
    // Conversions, a signed URL's query and credentials in URLs (the caller's and a redirect's).
    await call('POST', '/quickjob', { key: user.api_key, json: { input_type: 'html', html: `<p>${CANARY.html}</p>` } });
    await call('POST', '/quickjob', { key: user.api_key, json: { input_type: 'markdown', markdown: `# ${CANARY.markdown}` } });
    await call('POST', '/quickjob', { key: user.api_key, json: { input_type: 'url', url: site_(`/page?X-Amz-Signature=${CANARY.signature}&X-Amz-Credential=${CANARY.credential}`) } });
    await call('POST', '/quickjob', { key: user.api_key, json: { input_type: 'url', url: `https://u:${CANARY.userinfo}@localhost:${site.port}/page` } });
    await call('POST', '/quickjob', { key: user.api_key, json: { input_type: 'url', url: site_('/bad-redirect') } });
    await call('POST', '/quickjob', { key: user.api_key, json: { input_type: 'url', url: site_('/credential-redirect') } });
    await call('POST', '/quickjob', { key: user.api_key, json: { input_type: 'url', url: site_(`/fail?X-Amz-Signature=${CANARY.signature}`) } });
    // A webhook whose receiver fails, and one refused for credentials in its URL.
    const hook = await call('POST', '/accounts/me/webhooks', { token: user.id_token, json: { url: site_(`/fail?X-Amz-Signature=${CANARY.signature}`), events: ['job.completed'] } });
    expect(hook.status).toBe(201);
    secrets.webhookSecret = JSON.parse(hook.text).webhook.secret;
    await call('POST', '/accounts/me/webhooks', { token: user.id_token, json: { url: `https://u:${CANARY.userinfo}@localhost:${site.port}/x` } });
    // A long job whose email the SMTP server refuses (the password is in MAIL_SMTP_URL), and whose webhook fails.
    const long = await call('POST', '/longjob', { key: user.api_key, json: { input_type: 'html', html: `<p>${CANARY.html}</p>`, email_notification: true } });
    expect(long.status).toBe(202);
    await stack.queues.get('render')!.drained();
    // Stripe: signatures that do not verify, and an API refusal.
    await call('POST', '/stripe/webhook', { body: `{"id":"evt_x","data":{"object":{"note":"${CANARY.html}"}}}`, headers: { 'Content-Type': 'application/json', 'Stripe-Signature': `t=${Math.floor(Date.now() / 1000)},v1=${CANARY.stripeSignature}` } });
    await call('POST', '/stripe/webhook', { body: `{"note":"${CANARY.html}"}`, headers: { 'Content-Type': 'application/json', 'Stripe-Signature': CANARY.stripeSignature } });
    double.failNext = { status: 500, error: { type: 'api_error', message: 'Something went wrong on Stripe.' } };
    await call('POST', '/accounts/me/subscription/portal', { token: user.id_token, json: {} });
    await call('GET', '/jobs?limit=1', { token: user.id_token });
    // The table failing under the authorizer and under a conversion.
    faults.hook = () => Promise.reject(tableError());
    await call('GET', '/me', { key: user.api_key });
    await call('POST', '/quickjob', { token: user.id_token, json: { input_type: 'html', html: `<p>${CANARY.html}</p>` } });
    faults.hook = null;
    await stack.queues.get('webhooks')!.drained();

    const text = logs.text();
    // The paths above were taken: their failures were logged (mail, webhook delivery, signature, Stripe, table).
    expect(text).toContain('could not email about job');
    expect(text).toContain('Stripe webhook signature refused');
    expect(text).toContain('Stripe refused');
    expect(text).toContain('authorizer failed');
    expect(Object.entries(secrets).filter(([, value]) => text.includes(value)).map(([name]) => name)).toEqual([]);
  });
});
