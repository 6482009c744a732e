import { newAccount } from '../../../../functions/core/accounts/account';
import { newJob } from '../../../../functions/core/jobs/job';
import { jobReadyEmail } from '../../../../functions/core/notifications/job-emails';

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
});
