/**
 * Task handlers of the `pdfop` workflow (statemachines/pdfop.asl.json). Each takes and returns plain JSON;
 * the logic lives in functions/core/pdfops/background.ts.
 */
import { readyServices } from '../../composition';
import { type TaskInput, markProcessing as markCore, processPdfJob, recordPdfJobFailure } from '../../core/pdfops/background';
import { pdfJobDeps } from '../../job-deps';

export const markProcessing = async (input: TaskInput) => markCore(pdfJobDeps(await readyServices()), input);
export const processJob = async (input: TaskInput) => processPdfJob(pdfJobDeps(await readyServices()), input);
export const recordFailure = async (input: TaskInput) => recordPdfJobFailure(pdfJobDeps(await readyServices()), input);
