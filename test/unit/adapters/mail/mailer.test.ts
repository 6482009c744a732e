import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { DisabledMailer, FolderMailer, MailSendError, SMTP_TIMEOUTS, SmtpMailer } from '../../../../functions/adapters/mail/mailer';

/** Listens on a free loopback port; returns the port and a closer. */
async function listen(server: net.Server | SMTPServer): Promise<{ port: number; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = (server as net.Server).address?.() ?? (server as unknown as { server: net.Server }).server.address();
  return { port: (address as AddressInfo).port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('SmtpMailer', () => {
  it('delivers a message to the SMTP server of the URL', async () => {
    const received: string[] = [];
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, _session, callback) {
        let data = '';
        stream.on('data', (c: Buffer) => (data += c.toString()));
        stream.on('end', () => (received.push(data), callback()));
      },
    });
    const { port, close } = await listen(server);
    try {
      await new SmtpMailer(`smtp://127.0.0.1:${port}`, 'PDF service <pdf@example.com>').send({ to: 'owner@example.com', subject: 'Ready', text: 'Your PDF is ready.', html: '<p>Your PDF is <b>ready</b>.</p>' });
      expect(received).toHaveLength(1);
      expect(received[0]).toContain('Subject: Ready');
      expect(received[0]).toContain('From: PDF service <pdf@example.com>');
      expect(received[0]).toContain('To: owner@example.com');
      expect(received[0]).toContain('Your PDF is ready.');
      expect(received[0]).toMatch(/Content-Type: text\/html[\s\S]*<p>Your PDF is <b>ready<\/b>.<\/p>/);
    } finally {
      await close();
    }
  });

  it("reports a refused recipient without the customer's address (it goes to the logs)", async () => {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onRcptTo(address, _session, callback) {
        callback(Object.assign(new Error(`Email address is not verified: ${address.address}`), { responseCode: 554 }));
      },
    });
    const { port, close } = await listen(server);
    try {
      const err = await new SmtpMailer(`smtp://127.0.0.1:${port}`, 'pdf@example.com').send({ to: 'customer.name@client.example', subject: 'x', text: 'x' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MailSendError);
      expect((err as MailSendError).message).not.toContain('customer.name@client.example');
      expect((err as MailSendError).message).toContain('c***@client.example');
      expect(err).toMatchObject({ responseCode: 554, command: 'RCPT TO' });
      expect(JSON.stringify({ ...(err as object), stack: (err as Error).stack })).not.toContain('customer.name@');
    } finally {
      await close();
    }
  });

  it('gives up on a server that accepts the connection and never greets, instead of waiting for minutes', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => void sockets.push(socket));
    const { port, close } = await listen(silent);
    // The waits nodemailer sets (its own: 2 minutes to connect, 30 s for the greeting, 10 minutes of a silent socket).
    const timers = jest.spyOn(global, 'setTimeout');
    const socketTimeouts = jest.spyOn(net.Socket.prototype, 'setTimeout');
    try {
      const send = new SmtpMailer(`smtp://127.0.0.1:${port}`, 'pdf@example.com', { greetingTimeout: 300 }).send({ to: 'owner@example.com', subject: 'x', text: 'x' });
      await expect(send).rejects.toThrow(/greeting/i);
      // The greeting wait given wins over the mailer's; the mailer's bound the connection and the socket.
      expect(timers.mock.calls.map(([, ms]) => ms)).toContain(300);
      expect(socketTimeouts.mock.calls.map(([ms]) => ms)).toEqual(expect.arrayContaining([SMTP_TIMEOUTS.connectionTimeout, SMTP_TIMEOUTS.socketTimeout]));
    } finally {
      timers.mockRestore();
      socketTimeouts.mockRestore();
      for (const s of sockets) s.destroy();
      await close();
    }
    expect(SMTP_TIMEOUTS.greetingTimeout).toBeLessThanOrEqual(10_000);
  });
});

describe('SmtpMailer and the password in MAIL_SMTP_URL', () => {
  it('never prints the URL (Node warned about one it found invalid, password and all, on stderr): an unencoded password is refused naming the setting', () => {
    const secret = 'Kx9CANARYpw';
    // SES SMTP passwords are base64 (a `/` is common); a backslash, a bare `%`.
    const urls = [`smtps://AKIAEXAMPLE:BKz/${secret}+d@127.0.0.1:1`, `smtps://AKIAEXAMPLE:${secret}\\x]{@127.0.0.1:1`, `smtps://AKIAEXAMPLE:${secret}%zz@127.0.0.1:1`];
    const child = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, '../../../support/smtp-url-child.ts'), ...urls], { encoding: 'utf8', timeout: 30_000 });
    expect(child.stderr).not.toContain(secret);
    expect(child.stdout).not.toContain(secret);
    const lines = child.stdout.trim().split('\n');
    expect(lines).toHaveLength(urls.length);
    for (const line of lines) expect(line).toMatch(/MAIL_SMTP_URL is not a valid URL|the mail was not sent/);
    expect(lines[0]).toMatch(/^MAIL_SMTP_URL is not a valid URL/);
  });

  it('an invalid URL costs the emails, not the jobs: the mailer is made, and each send fails naming the setting', async () => {
    // Made up front by the long-job worker: a constructor that threw failed every long job, not just its email.
    const mailer = new SmtpMailer('smtps://AKIAEXAMPLE:BKz/Kx9+d@127.0.0.1:1', 'pdf@example.com');
    await expect(mailer.send({ to: 'owner@example.com', subject: 'x', text: 'x' })).rejects.toThrow(/^MAIL_SMTP_URL is not a valid URL/);
  });

  it('logs in with the password as the URL encodes it', async () => {
    const seen: string[] = [];
    const server = new SMTPServer({
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        seen.push(`${auth.username} ${auth.password}`);
        callback(null, { user: auth.username });
      },
      onData(stream, _session, callback) {
        stream.resume();
        stream.on('end', () => callback());
      },
    });
    const { port, close } = await listen(server);
    try {
      await new SmtpMailer(`smtp://AKIA%40x:pa%2Fss%5Cw%25rd@127.0.0.1:${port}`, 'pdf@example.com').send({ to: 'owner@example.com', subject: 'x', text: 'x' });
      expect(seen).toEqual(['AKIA@x pa/ss\\w%rd']);
    } finally {
      await close();
    }
  });
});

describe('FolderMailer', () => {
  it('keeps each message, as sent, as an .eml file under its folder', async () => {
    const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'mailbox-')), 'mail');
    try {
      const mailer = new FolderMailer(dir, 'PDF service <pdf@example.com>');
      await mailer.send({ to: 'owner@example.com', subject: 'Ready', text: 'Your PDF is ready.', html: '<p>ready</p>' });
      await mailer.send({ to: 'owner@example.com', subject: 'Failed', text: 'Your PDF failed.' });
      const files = readdirSync(dir);
      expect(files).toHaveLength(2);
      expect(files.every((f) => f.endsWith('.eml'))).toBe(true);
      const ready = files.map((f) => readFileSync(path.join(dir, f), 'utf8')).find((m) => m.includes('Subject: Ready'))!;
      expect(ready).toContain('From: PDF service <pdf@example.com>');
      expect(ready).toContain('To: owner@example.com');
      expect(ready).toContain('Your PDF is ready.');
      expect(ready).toContain('<p>ready</p>');
    } finally {
      rmSync(path.dirname(dir), { recursive: true, force: true });
    }
  });
});

describe('DisabledMailer', () => {
  it('sends nothing and says so once', async () => {
    const warn = jest.fn();
    const mailer = new DisabledMailer(warn);
    await mailer.send();
    await mailer.send();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('MAIL_SMTP_URL'));
  });
});
