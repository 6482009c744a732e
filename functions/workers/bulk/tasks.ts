/**
 * Task handlers of the `bulk` workflow (statemachines/bulk.asl.json). Each takes and returns plain JSON;
 * the logic lives in functions/core/bulk.
 */
import { readyServices } from '../../composition';
import { finishBulkJob, recordBulkJobFailure } from '../../core/bulk/finish';
import { type BulkTaskInput, prepareBulkJob } from '../../core/bulk/prepare';
import { type RenderFileInput, renderBulkFile } from '../../core/bulk/render-file';
import { bulkDeps } from '../../job-deps';

export const prepare = async (input: BulkTaskInput) => prepareBulkJob(bulkDeps(await readyServices()), input);
export const renderFile = async (input: RenderFileInput) => renderBulkFile(bulkDeps(await readyServices()), input);
export const finish = async (input: BulkTaskInput) => finishBulkJob(bulkDeps(await readyServices()), input);
export const recordFailure = async (input: BulkTaskInput) => recordBulkJobFailure(bulkDeps(await readyServices()), input);
