import { newAccount } from '../../../../functions/core/accounts/account';
import { newJob } from '../../../../functions/core/jobs/job';
import { jobFailedEmail, jobReadyEmail, wantsJobEmail } from '../../../../functions/core/notifications/job-emails';

describe('jobReadyEmail', () => {
  const now = new Date('2026-11-23T10:00:00Z');
  const account = newAccount({ account_id: 'a1', email: 'owner@example.com', plan_id: 'standard', now });
  const job = { ...newJob({ job_id: 'job_1', account_id: 'a1', job_type: 'long', status: 'completed', now }), pages: 3 };

  it('gives the hour-long link and, since mail is often read later, the route that makes a new one', () => {
    const mail = jobReadyEmail(account, job, 'https://bucket.example/out.pdf?X-Amz-Expires=3600&X-Amz-Signature=abc');
    expect(mail).toMatchObject({ to: 'owner@example.com', subject: 'Your PDF is ready (job_1)' });
    expect(mail.text).toContain('Download it within the hour: https://bucket.example/out.pdf?X-Amz-Expires=3600&X-Amz-Signature=abc');
    expect(mail.text).toContain('GET /jobs/job_1/download gives a new download link');
    expect(mail.html).toContain('X-Amz-Expires=3600&amp;X-Amz-Signature=abc');
    expect(mail.html).toContain('<p>GET /jobs/job_1/download gives a new download link');
  });

  it('gives only the route when no link could be made', () => {
    const mail = jobReadyEmail(account, job, null);
    expect(mail.text).not.toContain('within the hour');
    expect(mail.text).toContain('GET /jobs/job_1/download gives a new download link');
  });

  it('counts pages in words: one page, or several', () => {
    expect(jobReadyEmail(account, { ...job, pages: 1 }, null).text).toMatch(/^Your PDF job job_1 is ready \(1 page\)\./);
    expect(jobReadyEmail(account, job, null).text).toMatch(/^Your PDF job job_1 is ready \(3 pages\)\./);
  });
});

describe('wantsJobEmail', () => {
  const now = new Date('2026-11-23T10:00:00Z');
  const on = newAccount({ account_id: 'a1', email: 'owner@example.com', plan_id: 'standard', now });
  const off = { ...on, email_notifications: false };
  const job = newJob({ job_id: 'job_1', account_id: 'a1', job_type: 'long', status: 'completed', now });

  it('follows the account setting, which a request can switch off but never on', () => {
    expect(wantsJobEmail(on, job)).toBe(true);
    expect(wantsJobEmail(on, { ...job, email_notification: true })).toBe(true);
    expect(wantsJobEmail(on, { ...job, email_notification: false })).toBe(false);
    expect(wantsJobEmail(off, job)).toBe(false);
    expect(wantsJobEmail(off, { ...job, email_notification: true })).toBe(false);
  });
});

describe('jobFailedEmail', () => {
  const now = new Date('2026-11-23T10:00:00Z');
  const account = newAccount({ account_id: 'a1', email: 'owner@example.com', plan_id: 'standard', now });
  const base = newJob({ job_id: 'job_1', account_id: 'a1', job_type: 'long', status: 'queued', now });

  it('says why in the job\'s own words, with the error code, and that nothing was charged (rule 4)', () => {
    const failed = jobFailedEmail(account, { ...base, status: 'failed', error_code: 'RENDER_FAILED', error_message: 'the page crashed' });
    expect(failed).toMatchObject({ to: 'owner@example.com', subject: 'Your PDF job failed (job_1)' });
    expect(failed.text).toBe('Your PDF job job_1 failed.\n\nthe page crashed.\n\nError code: RENDER_FAILED. Nothing was charged.');
    // The job's messages are whole sentences: one full stop, not two.
    const sentence = jobFailedEmail(account, { ...base, status: 'failed', error_code: 'PDF_GENERATION_FAILED', error_message: 'The renderer failed to produce a PDF.' });
    expect(sentence.text).toBe('Your PDF job job_1 failed.\n\nThe renderer failed to produce a PDF.\n\nError code: PDF_GENERATION_FAILED. Nothing was charged.');
    // Without a message, a timeout says how long it had.
    const timedOut = jobFailedEmail(account, { ...base, status: 'timeout', error_code: 'RENDER_TIMEOUT', error_message: null });
    expect(timedOut.text).toContain('It did not finish within 15 minutes.');
    expect(timedOut.html).toContain('<p>Error code: RENDER_TIMEOUT. Nothing was charged.</p>');
  });

  it('keeps the advice of a message that says nothing was charged, and does not say it twice', () => {
    const error_message = 'Rendering took longer than 15 minutes; nothing was charged. Split the document or simplify it (large images, heavy scripts).';
    const mail = jobFailedEmail(account, { ...base, status: 'timeout', error_code: 'RENDER_TIMEOUT', error_message });
    expect(mail.text).toBe(`Your PDF job job_1 failed.\n\n${error_message}\n\nError code: RENDER_TIMEOUT.`);
    expect(mail.text.match(/nothing was charged/gi)).toHaveLength(1);
  });
});
