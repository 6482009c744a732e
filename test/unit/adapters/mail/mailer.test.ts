import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { MailSendError, SMTP_TIMEOUTS, SmtpMailer } from '../../../../functions/adapters/mail/mailer';

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
      await new SmtpMailer(`smtp://127.0.0.1:${port}`, 'PDF service <pdf@example.com>').send({ to: 'owner@example.com', subject: 'Ready', text: 'Your PDF is ready.' });
      expect(received).toHaveLength(1);
      expect(received[0]).toContain('Subject: Ready');
      expect(received[0]).toContain('From: PDF service <pdf@example.com>');
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
    try {
      // Bounded by jest's 5 s test timeout: nodemailer's own greeting wait is 30 s.
      const send = new SmtpMailer(`smtp://127.0.0.1:${port}`, 'pdf@example.com', { greetingTimeout: 300 }).send({ to: 'owner@example.com', subject: 'x', text: 'x' });
      await expect(send).rejects.toThrow(/greeting/i);
    } finally {
      for (const s of sockets) s.destroy();
      await close();
    }
    expect(SMTP_TIMEOUTS.greetingTimeout).toBeLessThanOrEqual(10_000);
  });
});
