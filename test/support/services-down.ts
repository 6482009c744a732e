/** Services for tests of workflow task handlers (functions/workers/*\/tasks.ts) whose job table is down. */
import { type Services, setServices } from '../../functions/composition';

/**
 * Installs services whose job table fails every read: each task's logic fails on its first read of the job. Returns
 * the failing `jobs.get` so a test can see the task reached it. Clear them after each test with `setServices(null)`.
 */
export function jobTableDown(): { get: jest.Mock } {
  const log = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
  const jobs = { get: jest.fn(async () => Promise.reject(new Error('job table unavailable'))) };
  setServices({ jobs, clock: { now: () => new Date('2026-11-24T12:00:00Z') }, config: { bulkTiming: {} }, log } as unknown as Services);
  return jobs;
}
