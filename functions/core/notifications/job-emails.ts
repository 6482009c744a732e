import type { Account } from '../accounts/account';
import { escapeHtml } from '../render/markdown';
import type { Job } from '../jobs/job';
import type { MailMessage } from './ports';

/**
 * Whether a long job mails its owner: the account setting decides, and the request may only switch it
 * off (`email_notification: false`), never on.
 */
export function wantsJobEmail(account: Account, job: Job): boolean {
  return account.email_notifications && job.email_notification !== false;
}

export function jobReadyEmail(account: Account, job: Job, link: string | null): MailMessage {
  // The signed link lasts an hour; mail is often read later, so the way to a fresh one is always given too.
  const fresh = `GET /jobs/${job.job_id}/download gives a new download link whenever you need one; the file is kept for 30 days.`;
  const lines = [`Your PDF job ${job.job_id} is ready (${job.pages} page${job.pages === 1 ? '' : 's'}).`, ...(link ? [`Download it within the hour: ${link}`] : []), fresh];
  return {
    to: account.email,
    subject: `Your PDF is ready (${job.job_id})`,
    text: lines.join('\n\n'),
    html: lines.map((l) => `<p>${escapeHtml(l)}</p>`).join(''),
  };
}

export function jobFailedEmail(account: Account, job: Job): MailMessage {
  // Job error messages are whole sentences ("The renderer failed to produce a PDF."): their stop would double this one's.
  const why = job.status === 'timeout' ? 'it did not finish within 15 minutes' : (job.error_message?.replace(/\.+$/, '') ?? 'the renderer failed');
  const lines = [`Your PDF job ${job.job_id} failed: ${why}.`, `Error code: ${job.error_code ?? 'unknown'}. Nothing was charged.`];
  return { to: account.email, subject: `Your PDF job failed (${job.job_id})`, text: lines.join('\n\n'), html: lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('') };
}
