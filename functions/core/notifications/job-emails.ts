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
  // The job's own message is whole sentences with what to do ("…; nothing was charged. Split the document…"), so it
  // is quoted as it is, and the no-charge line (rule 4) is added only when it does not already say so.
  const fallback = job.status === 'timeout' ? 'It did not finish within 15 minutes.' : 'The renderer failed to produce a PDF.';
  const message = job.error_message?.trim() || fallback;
  const reason = /[.!?]$/.test(message) ? message : `${message}.`;
  const charged = /nothing was charged/i.test(reason) ? '' : ' Nothing was charged.';
  const lines = [`Your PDF job ${job.job_id} failed.`, reason, `Error code: ${job.error_code ?? 'unknown'}.${charged}`];
  return { to: account.email, subject: `Your PDF job failed (${job.job_id})`, text: lines.join('\n\n'), html: lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('') };
}
