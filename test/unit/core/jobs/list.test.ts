import { createHmac } from 'node:crypto';
import { jobPageTokens, listJobs, parseJobListQuery, presentJobSummary, type JobListFilters } from '../../../../functions/core/jobs/list';
import type { JobListQuery, JobRepository } from '../../../../functions/core/jobs/ports';
import { newJob } from '../../../../functions/core/jobs/job';
import { presentJob } from '../../../../functions/core/jobs/access';
import { MemoryBlobs, MemoryJobs } from '../../../support/memory';

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

/** Tokens as GET /jobs sealed them before it used the shared scheme (the former `PageTokens.seal`, verbatim). */
function legacySeal(secret: string, accountId: string, filters: JobListFilters, position: { created_at: string; job_id: string }): string {
  const payload = Buffer.from(JSON.stringify([position.created_at, position.job_id])).toString('base64url');
  const scope = JSON.stringify([accountId, filters.status ?? null, filters.jobType ?? null, filters.truncated ?? null, filters.month ?? null]);
  const mac = createHmac('sha256', secret).update(`jobs.v1\n${scope}\n${payload}`).digest();
  return `${payload}.${mac.toString('base64url')}`;
}

describe('GET /jobs page tokens', () => {
  const position = { created_at: '2026-11-01T00:00:00.000Z', job_id: 'job_1' };
  const lastRow = { job_id: position.job_id, created_at: position.created_at };

  /** A repository whose one page ends at `position`, recording the position each query starts after. */
  function repository() {
    const afters: JobListQuery['after'][] = [];
    const jobs = {
      list: async (q: JobListQuery) => {
        afters.push(q.after);
        return { jobs: [], last: lastRow };
      },
    } as unknown as JobRepository;
    return { jobs, afters };
  }

  it('round-trips a position for the same account and filters', async () => {
    const { jobs, afters } = repository();
    const first = await listJobs(jobs, jobPageTokens('secret-1'), 'acc1', { limit: 50, filters: { status: 'failed' } });
    expect(first.next_token).not.toContain('acc1');
    await listJobs(jobs, jobPageTokens('secret-1'), 'acc1', { limit: 50, filters: { status: 'failed' }, nextToken: first.next_token! });
    expect(afters).toEqual([undefined, position]);
  });

  it('still opens tokens issued before, and issues the same ones', async () => {
    const filterSets: JobListFilters[] = [{}, { status: 'failed' }, { jobType: 'bulk', truncated: false, month: '2026-02' }, { status: 'completed', jobType: 'quick', truncated: true, month: '2026-11' }];
    for (const filters of filterSets) {
      const legacy = legacySeal('secret-1', 'acc1', filters, position);
      const { jobs, afters } = repository();
      const page = await listJobs(jobs, jobPageTokens('secret-1'), 'acc1', { limit: 50, filters, nextToken: legacy });
      expect(afters).toEqual([position]);
      expect(page.next_token).toBe(legacy);
    }
  });

  it('refuses the token for another account, other filters, another secret, or any edit', async () => {
    const token = legacySeal('secret-1', 'acc1', {}, position);
    const { jobs } = repository();
    const open = (secret: string, accountId: string, filters: JobListFilters, nextToken: string) => listJobs(jobs, jobPageTokens(secret), accountId, { limit: 50, filters, nextToken });
    const refused = expect.objectContaining({
      code: 'INVALID_PARAMETER',
      message: 'next_token is not valid for this account and these filters. Send it back unchanged, with the same filters as the request that returned it.',
      details: expect.objectContaining({ parameter: 'next_token' }),
    });
    await expect(open('secret-1', 'acc2', {}, token)).rejects.toEqual(refused);
    await expect(open('secret-1', 'acc1', { month: '2026-11' }, token)).rejects.toEqual(refused);
    await expect(open('secret-2', 'acc1', {}, token)).rejects.toEqual(refused);
    // Every single-character edit, including the low bits of the signature's last character.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (let i = 0; i < token.length; i++) {
      if (token[i] === '.') continue;
      for (const c of [alphabet[(alphabet.indexOf(token[i]) + 1) % 64], alphabet[alphabet.indexOf(token[i]) ^ 1]]) {
        const edited = token.slice(0, i) + c + token.slice(i + 1);
        await expect(open('secret-1', 'acc1', {}, edited)).rejects.toEqual(refused);
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

  it('gives a job without a PDF (queued, running, failed, timed out) the page count GET /jobs/{job_id} shows: 0, not null', async () => {
    const now = new Date('2026-11-01T00:00:00Z');
    const deps = { jobs: new MemoryJobs(), blobs: new MemoryBlobs(), clock: { now: () => now } };
    for (const job_type of ['quick', 'long', 'pdfop'] as const) {
      for (const status of ['queued', 'processing', 'failed', 'timeout'] as const) {
        const job = { ...newJob({ job_id: 'job_n', account_id: 'a', job_type, status, now }), ...(job_type === 'pdfop' ? { operation: 'merge' as const } : {}) };
        const shown = await presentJob(deps, job);
        expect(shown.pages).toBe(0);
        expect(presentJobSummary(job).pages_total).toBe(shown.pages);
      }
    }
  });
});
