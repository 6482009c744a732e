/**
 * Task handlers of the `pdfop` workflow (statemachines/pdfop.asl.json). Each takes and returns plain JSON;
 * the logic lives in functions/core/pdfops/background.ts.
 */
import { readyServices } from '../../composition';
import { type TaskInput, markProcessing as markCore, processPdfJob, recordPdfJobFailure } from '../../core/pdfops/background';
import { type ExecutionEndedEvent, failureTaskInput } from '../../core/workflows/ended';
import { pdfJobDeps } from '../../job-deps';

export const markProcessing = async (input: TaskInput) => markCore(pdfJobDeps(await readyServices()), input);
export const processJob = async (input: TaskInput) => processPdfJob(pdfJobDeps(await readyServices()), input);
/** The ASL's Catch, and the ending of an execution that never reached it (see core/workflows/ended.ts). */
export const recordFailure = async (input: TaskInput | ExecutionEndedEvent) => {
  const task = failureTaskInput(input);
  return task ? recordPdfJobFailure(pdfJobDeps(await readyServices()), task) : { job_id: null, status: 'not_a_job' };
};
