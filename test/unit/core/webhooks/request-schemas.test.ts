import { z } from 'zod';
import { PrivateTargetAllowlist } from '../../../../functions/core/net/allowlist';
import { NetworkGuard } from '../../../../functions/core/net/guard';
import {
  createWebhookBodySchema,
  historyQuerySchema,
  parseCreateWebhook,
  parseHistoryQuery,
  parseRotation,
  parseUpdateWebhook,
  parseWebhookListQuery,
  rotateSecretBodySchema,
  updateWebhookBodySchema,
  webhookListQuerySchema,
} from '../../../../functions/core/webhooks/requests';
import { refusal } from '../../../support/errors';

const guard = new NetworkGuard({ resolve: jest.fn(async () => [{ address: '93.184.216.34', family: 4 as const }]) }, new PrivateTargetAllowlist(undefined));
const url = 'https://hooks.example.com/a';

describe('webhook body schemas', () => {
  it('null means the default on create', () => {
    expect(parseCreateWebhook({ url, name: null, events: null, is_active: null }, guard)).toEqual({ url, name: 'hooks.example.com', events: ['job.completed'], is_active: true });
  });

  it('null is refused on update, naming the field with its own code', () => {
    expect(refusal(() => parseUpdateWebhook({ is_active: null }, guard)).details).toEqual({ parameter: 'is_active' });
    expect(refusal(() => parseUpdateWebhook({ events: null }, guard)).code).toBe('INVALID_EVENTS');
    // Not "url is required" (url is optional on update): null itself is what is refused.
    expect(refusal(() => parseUpdateWebhook({ url: null }, guard)).details).toEqual({ reason: 'url cannot be null; leave it out to keep the current URL' });
  });

  it('keeps the details of each refusal', () => {
    expect(refusal(() => parseCreateWebhook({}, guard)).details).toEqual({ reason: 'url is required' });
    expect(refusal(() => parseCreateWebhook({ url: 7 }, guard)).details).toEqual({ reason: 'url must be a string' });
    expect(refusal(() => parseCreateWebhook({ url: '' }, guard)).details).toEqual({ reason: 'url is empty' });
    const long = `https://example.com/${'x'.repeat(2100)}`;
    expect(refusal(() => parseCreateWebhook({ url: long }, guard)).details).toEqual({ reason: `url is ${long.length} characters long`, url: long.slice(0, 200) });
    expect(refusal(() => parseCreateWebhook({ url: 'https://10.0.0.1/x' }, guard)).details).toMatchObject({ url: 'https://10.0.0.1/x' });
    expect(refusal(() => parseCreateWebhook({ url, events: [] }, guard)).details).toEqual({ parameter: 'events', allowed: expect.arrayContaining(['job.completed']) });
    expect(refusal(() => parseCreateWebhook({ url, events: ['job.completed', 3, 'x'] }, guard)).details).toEqual({ parameter: 'events', invalid: [3, 'x'], allowed: expect.any(Array) });
    expect(refusal(() => parseCreateWebhook({ url, name: ' '.repeat(3) }, guard)).details).toEqual({ parameter: 'name' });
  });

  it('reports problems in the order of the spec: url, name, events, is_active on create; name, url, events, is_active on update', () => {
    // The network guard's verdict stands where the URL stands, ahead of the other fields.
    expect(refusal(() => parseCreateWebhook({ is_active: 'yes', events: [], name: '', url: 'https://localhost/' }, guard)).code).toBe('INVALID_WEBHOOK_URL');
    expect(refusal(() => parseCreateWebhook({ is_active: 'yes', events: [], name: '', url }, guard)).details).toEqual({ parameter: 'name' });
    expect(refusal(() => parseCreateWebhook({ is_active: 'yes', events: [], url }, guard)).code).toBe('INVALID_EVENTS');
    expect(refusal(() => parseCreateWebhook({ is_active: 'yes', url }, guard)).details).toEqual({ parameter: 'is_active' });
    expect(refusal(() => parseUpdateWebhook({ url: 'https://localhost/', name: '' }, guard)).details).toEqual({ parameter: 'name' });
    expect(refusal(() => parseUpdateWebhook({ is_active: 1, url: 'ftp://x/' }, guard)).code).toBe('INVALID_WEBHOOK_URL');
    // "At least one field" only when every field sent is fine.
    expect(refusal(() => parseUpdateWebhook({ name: '' }, guard)).details).toEqual({ parameter: 'name' });
    expect(refusal(() => parseUpdateWebhook({ other: 1 }, guard)).details).toEqual({ parameter: 'body' });
  });

  it('trims names and measures them trimmed', () => {
    expect(parseUpdateWebhook({ name: `  ${'n'.repeat(100)}  ` }, guard)).toEqual({ name: 'n'.repeat(100) });
    expect(refusal(() => parseUpdateWebhook({ name: 'n'.repeat(101) }, guard)).details).toEqual({ parameter: 'name' });
    // The same label rule as API key names: no half surrogate pairs, control or text-direction characters.
    for (const name of ['\ud800', 'hook\u0007', 'hook\u202e', '\u200b']) expect(refusal(() => parseUpdateWebhook({ name }, guard)).details).toEqual({ parameter: 'name' });
  });

  it('the grace period refusal keeps its bounds; null means the default', () => {
    expect(parseRotation({ grace_period_seconds: null })).toEqual({ graceSeconds: 86400 });
    expect(parseRotation(null)).toEqual({ graceSeconds: 86400 });
    expect(refusal(() => parseRotation({ grace_period_seconds: 1.5 })).details).toEqual({ parameter: 'grace_period_seconds', min: 0, max: 604800 });
    expect(refusal(() => parseRotation('x')).details).toEqual({ parameter: 'body' });
  });

  it('query refusals keep their details; an empty next_token means the first page', () => {
    expect(refusal(() => parseWebhookListQuery({ limit: '' })).details).toEqual({ parameter: 'limit', min: 1, max: 100 });
    expect(refusal(() => parseWebhookListQuery({ event: '' }))).toMatchObject({ code: 'INVALID_EVENTS', details: { parameter: 'event', invalid: [''], allowed: expect.arrayContaining(['job.failed']) } });
    expect(refusal(() => parseHistoryQuery({ event_type: 'job.nope' }))).toMatchObject({ code: 'INVALID_EVENTS', details: { parameter: 'event_type', invalid: ['job.nope'] } });
    expect(refusal(() => parseHistoryQuery({ status: 'ok' })).details).toEqual({ parameter: 'status', allowed: ['success', 'failed', 'timeout'] });
    expect(refusal(() => parseHistoryQuery({ event_type: 'ok', limit: '0' })).details).toMatchObject({ parameter: 'limit' });
    expect(parseWebhookListQuery({ next_token: '', is_active: 'true' })).toEqual({ limit: 50, isActive: true });
    expect(parseHistoryQuery({ next_token: '' }).nextToken).toBeUndefined();
  });

  it('every documented field has a description, and the schemas convert to JSON Schema', () => {
    for (const schema of [createWebhookBodySchema, updateWebhookBodySchema, rotateSecretBodySchema, webhookListQuerySchema, historyQuerySchema]) {
      const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, { description?: string }> };
      for (const [field, property] of Object.entries(json.properties)) expect(`${field}: ${typeof property.description}`).toBe(`${field}: string`);
    }
    const list = z.toJSONSchema(webhookListQuerySchema, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, unknown> };
    expect(list.properties.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
  });

  it('documents two deliberate behaviours: DNS that fails or is slow at registration is left to delivery, and names are trimmed', () => {
    for (const schema of [createWebhookBodySchema, updateWebhookBodySchema]) {
      const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, { description?: string }> };
      expect(json.properties.url.description).toMatch(/DNS lookup fails or takes longer than 2 s is accepted/);
      expect(json.properties.url.description).toMatch(/every delivery resolves and checks it again/);
      expect(json.properties.name.description).toMatch(/1 to 100 characters of text once leading and trailing white space is trimmed/);
    }
  });
});
