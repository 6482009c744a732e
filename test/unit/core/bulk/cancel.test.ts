import { cancelJob } from '../../../../functions/core/bulk/cancel';
import { newJob } from '../../../../functions/core/jobs/job';
import { bulkWorld } from '../../../support/bulk-memory';

describe('cancelJob', () => {
  it('asks a job that started meanwhile to stop (202 processing), never writing it cancelled over its run', async () => {
    const w = bulkWorld();
    const queued = { ...newJob({ job_id: 'job_c', account_id: w.account.account_id, job_type: 'bulk', status: 'queued', now: new Date() }), bundle_type: 'html' };
    // Read as queued by the route; Prepare took it before the cancel's write.
    await w.jobs.put({ ...queued, status: 'processing' });
    const outcome = await cancelJob(w.deps, queued);
    expect(outcome).toMatchObject({ job_id: 'job_c', status: 'processing', cancel_requested: true });
    expect(await w.jobs.get('job_c')).toMatchObject({ status: 'processing', cancel_requested: true, completed_at: null });
    expect(w.jobs.events).toEqual([]);
  });
});
