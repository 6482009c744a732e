import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { abandonDeadLetteredLongJob } from '../../core/conversion/longjob';
import { readyServices } from '../../composition';
import { readRenderJobMessage } from '../../core/jobs/queue';
import { longJobEndingDeps } from '../../job-deps';

/**
 * The render queue's dead-letter worker. A message lands here after its last delivery failed; when the worker died
 * each time (out of memory, killed at its timeout) nothing recorded the failure, so the job is ended here instead of
 * staying processing for ever. A record that cannot be handled now is reported back and comes again.
 */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const svc = await readyServices();
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    const jobId = readRenderJobMessage(record.body)?.job_id;
    if (!jobId) {
      svc.log.error(`render dead letter ${record.messageId} is not a job message; dropped`);
      continue;
    }
    try {
      const outcome = await abandonDeadLetteredLongJob(longJobEndingDeps(svc), jobId);
      svc.log.warn(`render dead letter for job ${jobId}: ${outcome}`);
    } catch (err) {
      svc.log.error(`could not end job ${jobId} from the render dead-letter queue`, err);
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
}
