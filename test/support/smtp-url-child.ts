/**
 * Child of the mailer test: makes an SmtpMailer from each URL given (argv) and tries one send, printing each error's
 * message. Its own process, because Node prints a deprecation warning (DEP0170) once per process only.
 */
import { SmtpMailer } from '../../functions/adapters/mail/mailer';

async function main() {
  for (const url of process.argv.slice(2)) {
    try {
      await new SmtpMailer(url, 'pdf@example.com', { connectionTimeout: 1000, greetingTimeout: 1000, socketTimeout: 1000 }).send({ to: 'owner@example.com', subject: 'x', text: 'x' });
      process.stdout.write('sent\n');
    } catch (err) {
      process.stdout.write(`${(err as Error).message}\n`);
    }
  }
}

void main();
