import { PageTokens, parseJobListQuery, presentJobSummary } from '../../../../functions/core/jobs/list';
import { newJob } from '../../../../functions/core/jobs/job';

describe('parseJobListQuery', () => {
  it('defaults to 50 and accepts 1 to 100', () => {
    expect(parseJobListQuery({})).toEqual({ limit: 50, filters: {}, nextToken: undefined });
    expect(parseJobListQuery({ limit: '1' }).limit).toBe(1);
    expect(parseJobListQuery({ limit: '100' }).limit).toBe(100);
    for (const limit of ['0', '101', '007a', '1.0', ' 5', '1000']) {
      expect(() => parseJobListQuery({ limit })).toThrow(expect.objectContaining({ code: 'INVALID_PARAMETER', details: expect.objectContaining({ parameter: 'limit' }) }));
    }
  });

  it('reads the filters', () => {
    expect(parseJobListQuery({ status: 'partial_failed', job_type: 'bulk', truncated: 'false', month: '2026-02', next_token: 'x' })).toEqual({
      limit: 50,
      filters: { status: 'partial_failed', jobType: 'bulk', truncated: false, month: '2026-02' },
      nextToken: 'x',
    });
    expect(() => parseJobListQuery({ month: '2026-00' })).toThrow(expect.objectContaining({ details: expect.objectContaining({ parameter: 'month' }) }));
  });
});

describe('PageTokens', () => {
  const tokens = new PageTokens('secret-1');
  const position = { created_at: '2026-11-01T00:00:00.000Z', job_id: 'job_1' };

  it('round-trips a position for the same account and filters', () => {
    const token = tokens.seal('acc1', { status: 'failed' }, position);
    expect(tokens.open('acc1', { status: 'failed' }, token)).toEqual(position);
    expect(token).not.toContain('acc1');
  });

  it('refuses the token for another account, other filters, another secret, or any edit', () => {
    const token = tokens.seal('acc1', {}, position);
    const refused = expect.objectContaining({ code: 'INVALID_PARAMETER', details: expect.objectContaining({ parameter: 'next_token' }) });
    expect(() => tokens.open('acc2', {}, token)).toThrow(refused);
    expect(() => tokens.open('acc1', { month: '2026-11' }, token)).toThrow(refused);
    expect(() => new PageTokens('secret-2').open('acc1', {}, token)).toThrow(refused);
    // Every single-character edit, including the low bits of the signature's last character.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (let i = 0; i < token.length; i++) {
      if (token[i] === '.') continue;
      for (const c of [alphabet[(alphabet.indexOf(token[i]) + 1) % 64], alphabet[alphabet.indexOf(token[i]) ^ 1]]) {
        const edited = token.slice(0, i) + c + token.slice(i + 1);
        expect(() => tokens.open('acc1', {}, edited)).toThrow(refused);
      }
    }
  });
});

describe('presentJobSummary', () => {
  it('has exactly the summary fields of the spec', () => {
    const job = newJob({ job_id: 'job_1', account_id: 'a', job_type: 'quick', status: 'completed', now: new Date('2026-11-01T00:00:00Z') });
    expect(presentJobSummary({ ...job, pages: 3 })).toEqual({
      job_id: 'job_1', status: 'completed', job_type: 'quick', bundle_type: null, file_count: null, success_count: null, failure_count: null,
      pages_total: 3, created_at: '2026-11-01T00:00:00.000Z', completed_at: null,
    });
  });
});
