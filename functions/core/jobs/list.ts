import { z } from 'zod';
import { invalidParameter } from '../errors';
import { parseRequest, queryInteger } from '../validation';
import { ScopedPageTokens } from '../validation/page-tokens';
import { JOB_STATUSES, JOB_TYPES, type Job, type JobStatus, type JobType } from './job';
import type { JobListQuery, JobRepository } from './ports';

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 100;

/** The filters of GET /jobs; a page token is valid only with the same filters. */
export interface JobListFilters {
  status?: JobStatus;
  jobType?: JobType;
  truncated?: boolean;
  month?: string;
}

export interface JobListRequest {
  limit: number;
  filters: JobListFilters;
  nextToken?: string;
}

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/** Query of GET /jobs. */
export const jobListQuerySchema = z.object({
  limit: queryInteger(1, MAX_LIST_LIMIT)
    .optional()
    .meta({ description: `Jobs per page, a whole number from 1 to ${MAX_LIST_LIMIT}. Default ${DEFAULT_LIST_LIMIT}.`, default: DEFAULT_LIST_LIMIT }),
  status: z.enum(JOB_STATUSES).optional().meta({ description: 'Lists only jobs in this status. Default: all.' }),
  job_type: z.enum(JOB_TYPES).optional().meta({ description: 'Lists only jobs of this type. Default: all.' }),
  truncated: z
    .enum(['true', 'false'])
    .optional()
    .transform((value) => (value === undefined ? undefined : value === 'true'))
    .meta({ description: 'Compatibility only: every new job has truncated false (pageRanges chooses pages, it never cuts a document short), so true lists no new job and false lists them all. Default: all.' }),
  month: z.string().regex(MONTH).optional().meta({ description: 'Lists only jobs created in this month (UTC), as YYYY-MM, e.g. 2026-11. Default: all.' }),
  next_token: z
    .string()
    .optional()
    .transform((token) => token || undefined)
    .meta({ description: "The previous page's next_token, unchanged, with the same filters; absent or empty for the first page." }),
});

/** Validates the query string of GET /jobs: 400 INVALID_PARAMETER naming the parameter. */
export function parseJobListQuery(query: Record<string, string>): JobListRequest {
  const q = parseRequest(jobListQuerySchema, query, {
    refusals: {
      limit: () => invalidParameter('limit', `limit must be a whole number from 1 to ${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT}).`, { min: 1, max: MAX_LIST_LIMIT }),
      status: () => invalidParameter('status', `status must be one of ${JOB_STATUSES.join(', ')}.`, { allowed: JOB_STATUSES }),
      job_type: () => invalidParameter('job_type', `job_type must be one of ${JOB_TYPES.join(', ')}.`, { allowed: JOB_TYPES }),
      truncated: () => invalidParameter('truncated', 'truncated must be true or false.'),
      month: () => invalidParameter('month', 'month must be YYYY-MM (creation month in UTC), e.g. 2026-11.'),
    },
  });
  const filters: JobListFilters = {};
  if (q.status !== undefined) filters.status = q.status;
  if (q.job_type !== undefined) filters.jobType = q.job_type;
  if (q.truncated !== undefined) filters.truncated = q.truncated;
  if (q.month !== undefined) filters.month = q.month;
  return { limit: q.limit ?? DEFAULT_LIST_LIMIT, filters, nextToken: q.next_token };
}

type Position = NonNullable<JobListQuery['after']>;

/**
 * Page tokens of GET /jobs: the shared sealed-token scheme (core/validation/page-tokens.ts) under purpose `jobs.v1`,
 * scoped to the account and the filters. The purpose and scope are exactly what tokens issued before have been
 * sealed with, so those stay valid.
 */
export function jobPageTokens(secret: string): ScopedPageTokens {
  return new ScopedPageTokens(
    secret,
    'jobs.v1',
    'next_token is not valid for this account and these filters. Send it back unchanged, with the same filters as the request that returned it.',
  );
}

function scopeOf(accountId: string, filters: JobListFilters): unknown[] {
  return [accountId, filters.status ?? null, filters.jobType ?? null, filters.truncated ?? null, filters.month ?? null];
}

/** A row of GET /jobs: the spec's job summary fields. */
export function presentJobSummary(job: Job) {
  return {
    job_id: job.job_id,
    status: job.status,
    job_type: job.job_type,
    bundle_type: job.bundle_type ?? null,
    file_count: job.file_count ?? null,
    success_count: job.success_count ?? null,
    failure_count: job.failure_count ?? null,
    // The page count GET /jobs/{job_id} shows as `pages` (0 until a PDF is made): null here beside 0 there disagreed.
    pages_total: job.pages_total ?? job.pages ?? 0,
    created_at: job.created_at,
    completed_at: job.completed_at,
  };
}

/** GET /jobs: newest first, from the account's index partition (never a scan). */
export async function listJobs(jobs: JobRepository, tokens: ScopedPageTokens, accountId: string, req: JobListRequest) {
  const scope = scopeOf(accountId, req.filters);
  let after: Position | undefined;
  if (req.nextToken) {
    const [created_at, job_id] = tokens.open(scope, req.nextToken, 2);
    after = { created_at, job_id };
  }
  const page = await jobs.list({ accountId, limit: req.limit, after, ...req.filters });
  const rows = page.jobs.map(presentJobSummary);
  return { jobs: rows, next_token: page.last ? tokens.seal(scope, [page.last.created_at, page.last.job_id]) : null, count: rows.length };
}
