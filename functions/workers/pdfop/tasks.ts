/**
 * Task handlers of the `pdfop` workflow (statemachines/pdfop.asl.json). Each takes and returns plain JSON;
 * the logic lives in functions/core/pdfops/background.ts.
 */
import { type Services, services } from '../../composition';
import { type PdfJobDeps, type TaskInput, markProcessing as markCore, processPdfJob, recordPdfJobFailure } from '../../core/pdfops/background';

function deps(svc: Services): PdfJobDeps {
  return {
    jobs: svc.jobs,
    files: svc.jobFiles,
    blobs: svc.blobs,
    billing: svc.billing,
    clock: svc.clock,
    slots: svc.jobSlots,
    workflows: svc.workflows,
    accounts: svc.accounts,
    plans: svc.plans,
    timeoutSeconds: svc.config.pdfJobTimeoutSeconds,
    log: (m, e) => svc.log.warn(m, e),
  };
}

export const markProcessing = async (input: TaskInput) => markCore(deps(services()), input);
export const processJob = async (input: TaskInput) => processPdfJob(deps(services()), input);
export const recordFailure = async (input: TaskInput) => recordPdfJobFailure(deps(services()), input);
