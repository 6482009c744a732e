import http from 'node:http';
import { startTestStack } from '../support/stack';

/**
 * A stop with clients that keep their connections open (every HTTP client pools them): found by a soak audit, where a
 * stop took new requests on kept-alive connections for its whole 35 s wait, then cut them mid-answer — quick jobs
 * charged for PDFs that never reached their client, a long job failed as SERVICE_UNAVAILABLE because its queue was
 * stopped under it.
 */
describe('stopping the local stack while a client keeps its connection alive', () => {
  it('answers the request in flight with Connection: close and takes no new request on that connection', async () => {
    const stack = await startTestStack();
    const user = await stack.account({ credits_usd: 1 });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const { hostname, port } = new URL(stack.baseUrl);
    const send = (method: string, path: string, body?: string) =>
      new Promise<{ status: number; connection?: string }>((resolve, reject) => {
        const headers: Record<string, string> = { 'X-API-Key': user.api_key };
        if (body) headers['Content-Type'] = 'application/json';
        const req = http.request({ host: hostname, port, method, path, headers, agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
        });
        req.on('error', reject);
        req.end(body);
      });
    try {
      expect((await send('GET', '/me')).status).toBe(200);
      // A document that takes a moment, on the kept-alive connection; the stop begins while it prints.
      const html = '<p>slow</p><script>const t = Date.now(); while (Date.now() - t < 1500) {}</script>';
      const slow = send('POST', '/quickjob', JSON.stringify({ input_type: 'html', html }));
      await new Promise((r) => setTimeout(r, 500));
      const startedAt = Date.now();
      const stopped = stack.stop().then(() => Date.now() - startedAt);
      const answer = await slow;
      expect(answer.status).toBe(200);
      expect(answer.connection).toBe('close');
      // The client goes on sending: nothing more is taken (before, each of these was answered on the old connection).
      let served = 0;
      for (let i = 0; i < 10; i++) {
        const next = await send('GET', '/me').catch((err: NodeJS.ErrnoException) => err.code);
        if (typeof next === 'object') served++;
      }
      expect(served).toBe(0);
      expect(await stopped).toBeLessThan(15_000);
    } finally {
      agent.destroy();
    }
  }, 90_000);
});
