/**
 * Task handlers of the `bulk` workflow (statemachines/bulk.asl.json). Each takes and returns plain JSON;
 * the logic lives in functions/core/bulk.
 */
import { readyServices } from '../../composition';
import { finishBulkJob, recordBulkJobFailure } from '../../core/bulk/finish';
import { type BulkTaskInput, prepareBulkJob } from '../../core/bulk/prepare';
import { type RenderFileInput, renderBulkFile } from '../../core/bulk/render-file';
import { type ExecutionEndedEvent, failureTaskInput } from '../../core/workflows/ended';
import { bulkDeps } from '../../job-deps';

export const prepare = async (input: BulkTaskInput) => prepareBulkJob(bulkDeps(await readyServices()), input);
export const renderFile = async (input: RenderFileInput) => renderBulkFile(bulkDeps(await readyServices()), input);
export const finish = async (input: BulkTaskInput) => finishBulkJob(bulkDeps(await readyServices()), input);
/** The ASL's Catch, and the ending of an execution that never reached it (see core/workflows/ended.ts). */
export const recordFailure = async (input: BulkTaskInput | ExecutionEndedEvent) => {
  const task = failureTaskInput(input);
  return task ? recordBulkJobFailure(bulkDeps(await readyServices()), task) : { job_id: null, status: 'not_a_job' };
};
