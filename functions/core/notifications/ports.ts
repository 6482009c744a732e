export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** Outgoing service email (job ready/failed). Best effort: a failure to send never changes a job. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}
