/**
 * Scheduled functions as plain data: the CDK app builds an EventBridge rule and a Lambda for each; the local
 * stack runs the same handler on a timer (LOCAL_SCHEDULE_INTERVAL_MS overrides the interval, tests only).
 */
import type { FunctionProfile, Permission } from './routes';

export interface ScheduleDef {
  name: string;
  /** "<file under functions/>#<export>" */
  handler: string;
  everyMinutes: number;
  profile: FunctionProfile;
  timeoutSeconds: number;
  permissions: Permission[];
  /** It sends the service's email (gets the mail settings and the SMTP secret). */
  sendsMail?: boolean;
}

export const SCHEDULES: readonly ScheduleDef[] = [
  {
    // Outbox events still pending two minutes after their write (lost notice, failed dispatch) go to the
    // webhook dispatcher again; those pending for a day leave the pending index (a write).
    name: 'outbox-sweep',
    handler: 'workers/webhooks/sweep#handler',
    everyMinutes: 1,
    profile: 'light',
    timeoutSeconds: 60,
    permissions: ['table:read', 'table:write', 'queue:webhooks'],
  },
  {
    // Queued jobs whose start (render-queue message, workflow execution) was never sent — the writer died in
    // between — are started again after two minutes; long jobs whose render worker was killed mid-render are ended
    // as timeouts (job.failed, the failure email) two minutes after its lease ran out; bulk and merge/split jobs
    // whose execution ended without finishing them are ended by their workflow's failure recorder (which reads and
    // deletes what the job staged in the bucket); see core/jobs/starts.ts.
    name: 'start-sweep',
    handler: 'workers/jobs/start-sweep#handler',
    everyMinutes: 1,
    profile: 'light',
    timeoutSeconds: 60,
    permissions: ['table:read', 'table:write', 'bucket:read', 'bucket:delete', 'queue:render', 'workflow:start', 'workflow:watch', 'queue:webhooks'],
    sendsMail: true,
  },
];
