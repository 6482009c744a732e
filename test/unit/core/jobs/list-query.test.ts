import { z } from 'zod';
import { jobListQuerySchema, parseJobListQuery } from '../../../../functions/core/jobs/list';
import { refusal } from '../../../support/errors';

describe('GET /jobs query schema', () => {
  it('keeps the details of each refusal', () => {
    expect(refusal(() => parseJobListQuery({ limit: '' })).details).toEqual({ parameter: 'limit', min: 1, max: 100 });
    expect(refusal(() => parseJobListQuery({ status: '' })).details).toEqual({ parameter: 'status', allowed: expect.arrayContaining(['partial_failed']) });
    expect(refusal(() => parseJobListQuery({ job_type: 'QUICK' })).details).toEqual({ parameter: 'job_type', allowed: ['quick', 'long', 'bulk', 'pdfop', 'mailmerge'] });
    expect(refusal(() => parseJobListQuery({ truncated: '1' })).details).toEqual({ parameter: 'truncated' });
    expect(refusal(() => parseJobListQuery({ month: '2026-1' })).details).toEqual({ parameter: 'month' });
  });

  it('reports the first bad parameter in the order limit, status, job_type, truncated, month', () => {
    expect(refusal(() => parseJobListQuery({ month: 'x', truncated: 'x', job_type: 'x', status: 'x', limit: 'x' })).details.parameter).toBe('limit');
    expect(refusal(() => parseJobListQuery({ month: 'x', truncated: 'x', job_type: 'x', status: 'x' })).details.parameter).toBe('status');
    expect(refusal(() => parseJobListQuery({ month: 'x', truncated: 'x', job_type: 'x' })).details.parameter).toBe('job_type');
    expect(refusal(() => parseJobListQuery({ month: 'x', truncated: 'x' })).details.parameter).toBe('truncated');
  });

  it('reads truncated=true and leaves absent filters out (page tokens are sealed over them)', () => {
    expect(parseJobListQuery({ truncated: 'true', next_token: '' })).toStrictEqual({ limit: 50, filters: { truncated: true }, nextToken: undefined });
  });

  it('documents every parameter', () => {
    const json = z.toJSONSchema(jobListQuerySchema, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, { description?: string }> };
    expect(Object.keys(json.properties)).toEqual(['limit', 'status', 'job_type', 'truncated', 'month', 'next_token']);
    for (const [name, property] of Object.entries(json.properties)) expect(`${name}: ${typeof property.description}`).toBe(`${name}: string`);
    expect(json.properties.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
  });
});
