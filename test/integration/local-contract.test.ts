import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLocalStack } from '../../local/stack';

describe('local contract', () => {
  it('keeps accounts, keys and jobs under DATA_DIR across a restart', async () => {
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pdfsvc-restart-'));
    try {
      let stack = await startLocalStack({ port: 0, dataDir });
      const created = await (await fetch(`${stack.baseUrl}/_local/accounts`, { method: 'POST', body: JSON.stringify({ credits_usd: 2, email: 'keep@example.com' }) })).json();
      const quick = await fetch(`${stack.baseUrl}/quickjob`, { method: 'POST', headers: { 'X-API-Key': created.api_key, 'Content-Type': 'application/json' }, body: JSON.stringify({ input_type: 'html', html: '<p>x</p>', store: true }) });
      const { job_id } = await quick.json();
      await stack.stop();

      stack = await startLocalStack({ port: 0, dataDir });
      try {
        const me = await (await fetch(`${stack.baseUrl}/me`, { headers: { 'X-API-Key': created.api_key } })).json();
        expect(me).toMatchObject({ account_id: created.account_id, email: 'keep@example.com', billing: { credits_balance: 1.99, total_pdf_count: 1 } });
        const token = await fetch(`${stack.baseUrl}/me`, { headers: { Authorization: `Bearer ${created.id_token}` } });
        expect(token.status).toBe(200);
        const link = await (await fetch(`${stack.baseUrl}/jobs/${job_id}/download`, { headers: { 'X-API-Key': created.api_key } })).json();
        expect((await fetch(link.download_url)).status).toBe(200);
      } finally {
        await stack.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('creates accounts per the contract: defaults, pending, credits, subscription, validation', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pdfsvc-contract-'));
    const stack = await startLocalStack({ port: 0, dataDir });
    const post = (body: unknown) => fetch(`${stack.baseUrl}/_local/accounts`, { method: 'POST', body: body === undefined ? undefined : JSON.stringify(body) });
    try {
      const plain = await post(undefined);
      expect(plain.status).toBe(201);
      const a = await plain.json();
      expect(Object.keys(a).sort()).toEqual(['account_id', 'api_key', 'email', 'id_token', 'plan_id']);
      expect(a.plan_id).toBe('standard');

      const sub = await (await post({ subscription: { name: 'Business', monthly_pdfs: 10000, price: 100 }, free_credits_usd: 0.5 })).json();
      const billing = (await (await fetch(`${stack.baseUrl}/me`, { headers: { 'X-API-Key': sub.api_key } })).json()).billing;
      expect(billing).toMatchObject({ subscription_credits_remaining: 100, subscription_pdfs_remaining: 10000, free_credits_remaining: 0.5, credits_balance: 0 });
      expect(billing.subscription).toMatchObject({ name: 'Business', status: 'active', monthly_pdfs: 10000, price: 100, active: true });

      for (const bad of [{ plan_id: 'gold' }, { credits_usd: -1 }, { subscription: { name: 'x' } }, { email: 'nope' }]) {
        const res = await post(bad);
        expect(res.status).toBe(400);
        expect((await res.json()).error.code).toBe('INVALID_PARAMETER');
      }
    } finally {
      await stack.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
