import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { MailMessage, Mailer } from '../../core/notifications/ports';

/**
 * Bounds on a conversation with the SMTP server. Nodemailer's own (2 minutes to connect, 10 minutes of a silent
 * socket) would let a hung server hold a worker or the start sweeper (60 s) until its Lambda is stopped. A URL's own
 * `connectionTimeout`/`greetingTimeout`/`socketTimeout` parameters win.
 */
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };

/** Service mail through an SMTP server (MAIL_SMTP_URL, e.g. smtps://user:pass@email-smtp.eu-west-1.amazonaws.com). */
export class SmtpMailer implements Mailer {
  private readonly transport;
  /** Why no mail can be sent (an invalid URL): each send fails with it, so a bad setting costs the emails, not the jobs. */
  private readonly unusable: Error | null = null;

  constructor(
    smtpUrl: string,
    private readonly from: string,
    timeouts: Partial<typeof SMTP_TIMEOUTS> = {},
  ) {
    // Nodemailer reads the URL with Node's legacy url.parse, which prints a URL it finds invalid — password and all —
    // to stderr (DEP0170), i.e. to the logs; SMTP passwords (SES's are base64) often hold a `/`. So the URL is read by
    // the WHATWG parser first, and nodemailer gets its normalised form (credentials percent-encoded), which the legacy
    // parser reads the same. Errors name the setting, never its value.
    const invalid = () => new Error('MAIL_SMTP_URL is not a valid URL: percent-encode reserved characters in the user name and password (/ as %2F, @ as %40, : as %3A, # as %23, ? as %3F, % as %25)');
    let transport = null;
    try {
      if (URL.canParse(smtpUrl)) transport = nodemailer.createTransport({ ...SMTP_TIMEOUTS, ...timeouts, url: new URL(smtpUrl).href });
    } catch {
      // The legacy parser's own errors (a `%` that starts no escape) say nothing useful and may carry the URL.
    }
    this.transport = transport;
    if (!transport) this.unusable = invalid();
  }

  async send(message: MailMessage): Promise<void> {
    if (!this.transport) throw this.unusable;
    try {
      await this.transport.sendMail({ from: this.from, ...message });
    } catch (err) {
      throw new MailSendError(err);
    }
  }
}

/** An address as the logs may show it: `o***@example.com`. */
const maskAddresses = (text: string) => text.replace(/([A-Za-z0-9._%+-])[A-Za-z0-9._%+-]*@([A-Za-z0-9.-]+)/g, '$1***@$2');

/**
 * A failed send as the logs see it. Nodemailer's message quotes the server's reply, which names the recipients
 * (a customer's address, when the server refuses it): addresses are masked, and only the SMTP command and reply code
 * are kept besides.
 */
export class MailSendError extends Error {
  readonly code: string | null;
  readonly responseCode: number | null;
  readonly command: string | null;

  constructor(cause: unknown) {
    const e = (cause ?? {}) as { message?: string; code?: string; responseCode?: number; command?: string };
    super(`the mail was not sent: ${maskAddresses(String(e.message ?? cause)).slice(0, 300)}`);
    this.name = 'MailSendError';
    this.code = typeof e.code === 'string' ? e.code : null;
    this.responseCode = typeof e.responseCode === 'number' ? e.responseCode : null;
    this.command = typeof e.command === 'string' ? e.command : null;
  }
}

/** Local development mailbox: every message becomes an .eml file under the data dir. */
export class FolderMailer implements Mailer {
  private readonly transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });

  constructor(
    private readonly dir: string,
    private readonly from: string,
  ) {}

  async send(message: MailMessage): Promise<void> {
    const info = await this.transport.sendMail({ from: this.from, ...message });
    mkdirSync(this.dir, { recursive: true });
    const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${Math.random().toString(36).slice(2, 8)}.eml`;
    writeFileSync(path.join(this.dir, name), info.message as Buffer);
  }
}

/** Mail switched off (no SMTP configured in AWS): say so once in the logs, send nothing. */
export class DisabledMailer implements Mailer {
  constructor(private readonly warn: (message: string) => void) {}
  private warned = false;
  async send(): Promise<void> {
    if (!this.warned) this.warn('service email is not configured (MAIL_SMTP_URL); job notifications are not sent');
    this.warned = true;
  }
}
