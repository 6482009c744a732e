/**
 * Task handlers of the `pdfop` workflow (statemachines/pdfop.asl.json). Each takes and returns plain JSON;
 * the logic lives in functions/core/pdfops/background.ts.
 */
import { services } from '../../composition';
import { type TaskInput, markProcessing as markCore, processPdfJob, recordPdfJobFailure } from '../../core/pdfops/background';
import { pdfJobDeps } from '../../job-deps';

export const markProcessing = async (input: TaskInput) => markCore(pdfJobDeps(services()), input);
export const processJob = async (input: TaskInput) => processPdfJob(pdfJobDeps(services()), input);
export const recordFailure = async (input: TaskInput) => recordPdfJobFailure(pdfJobDeps(services()), input);
