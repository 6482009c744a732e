import { MailSendError } from '../../functions/adapters/mail/mailer';
import { createLogger } from '../../functions/logger';
import { captureLogs } from '../support/log-capture';

describe('createLogger', () => {
  it("writes an error's own codes and its cause (MailSendError's SMTP reply, the reason under 'fetch failed'), not the whole object", () => {
    const logs = captureLogs();
    try {
      const mail = new MailSendError(Object.assign(new Error('Invalid login: 535 Authentication failed'), { code: 'EAUTH', responseCode: 535, command: 'AUTH PLAIN' }));
      const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:443'), { code: 'ECONNREFUSED' });
      const wrapped = Object.assign(new TypeError('fetch failed', { cause: refused }), { request: { headers: { authorization: 'Bearer pk_live_secret' } } });
      const sdk = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $fault: 'client', $metadata: { httpStatusCode: 400, requestId: 'REQ123' }, $response: { body: '<html>customer</html>' } });
      const log = createLogger('debug');
      log.warn('mail', mail);
      log.warn('fetch', wrapped);
      log.error('sdk', sdk);
      const [m, f, s] = logs.entries();
      expect(m.extra).toMatchObject({ name: 'MailSendError', code: 'EAUTH', responseCode: 535, command: 'AUTH PLAIN' });
      expect(f.extra).toMatchObject({ name: 'TypeError', message: 'fetch failed', cause: { name: 'Error', message: 'connect ECONNREFUSED 10.0.0.7:443', code: 'ECONNREFUSED' } });
      expect(s.extra).toMatchObject({ name: 'ThrottlingException', $fault: 'client', http_status: 400, aws_request_id: 'REQ123' });
      expect(logs.text()).not.toContain('pk_live_secret');
      expect(logs.text()).not.toContain('customer');
    } finally {
      logs.restore();
    }
  });
});
