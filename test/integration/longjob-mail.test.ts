import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { type TestStack, startTestStack } from '../support/stack';

/** Long-job emails through a real SMTP server, and what a mail server that is down does to a job (nothing). */
let stack: TestStack;
let smtp: SMTPServer;
let front: net.Server;
const received: { to: string[]; raw: string }[] = [];
/** The SMTP port the service is given: forwards to the server, or refuses every connection while `down`. */
let down = false;

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (c: Buffer) => (raw += c.toString()));
      stream.on('end', () => (received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw }), callback()));
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const inner = ((smtp as unknown as { server: net.Server }).server.address() as AddressInfo).port;
  front = net.createServer((socket) => {
    if (down) return void socket.destroy();
    const upstream = net.connect(inner, '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const port = (front.address() as AddressInfo).port;
  stack = await startTestStack({ MAIL_SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'PDF service <pdf@example.com>', LOCAL_QUEUE_RETRY_MS: '100' });
});
afterAll(async () => {
  await stack?.stop();
  await new Promise<void>((resolve) => front?.close(() => resolve()));
  await new Promise<void>((resolve) => smtp?.close(() => resolve()));
});

const queue = () => stack.queues.get('render')!;

it('mails the owner the ready email over SMTP, with an hour-long link to the PDF', async () => {
  const owner = await stack.account({ credits_usd: 1, email: 'reader@example.com' });
  const res = await stack.request('POST', '/longjob', { key: owner.api_key, json: { input_type: 'html', html: '<p>mailed</p>' } });
  expect(res.status).toBe(202);
  const { job_id } = await res.json();
  await queue().drained();
  const mails = received.filter((m) => m.to.includes('reader@example.com'));
  expect(mails).toHaveLength(1);
  const mail = await simpleParser(mails[0].raw);
  expect(mail.subject).toBe(`Your PDF is ready (${job_id})`);
  expect(mail.from?.value[0]).toMatchObject({ name: 'PDF service', address: 'pdf@example.com' });
  const link = mail.text!.match(/https?:\/\/\S+/)![0];
  expect(new URL(link).searchParams.get('X-Amz-Expires')).toBe('3600');
  const pdf = await fetch(link);
  expect(pdf.status).toBe(200);
  expect(Buffer.from(await pdf.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');
  expect(mail.text).toContain(`GET /jobs/${job_id}/download`);
});

it('completes and charges a job once while the mail server is down; the email is dropped, not retried', async () => {
  const owner = await stack.account({ credits_usd: 1, email: 'unlucky@example.com' });
  down = true;
  let jobId: string;
  try {
    const res = await stack.request('POST', '/longjob', { key: owner.api_key, json: { input_type: 'html', html: '<p>no mail</p>' } });
    jobId = (await res.json()).job_id;
    await queue().drained();
  } finally {
    down = false;
  }
  const job = await (await stack.request('GET', `/jobs/${jobId}`, { key: owner.api_key })).json();
  expect(job).toMatchObject({ status: 'completed', error_code: null, s3_url: expect.any(String) });
  expect(await stack.services.accounts.get(owner.account_id)).toMatchObject({ total_pdf_count: 1, credits_micros: 990_000 });
  // The server is back; the message was finished, so nothing comes again (LOCAL_QUEUE_RETRY_MS is 100 ms here).
  await new Promise((resolve) => setTimeout(resolve, 500));
  await queue().drained();
  expect(received.filter((m) => m.to.includes('unlucky@example.com'))).toEqual([]);
});
