import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEAD_LETTER_PERMISSIONS, type QueueDef } from '../functions/queues';
import type { FunctionFactory, SecretSetting } from './functions';

const DEAD_LETTER_WORKER_TIMEOUT_SECONDS = 30;

/**
 * One SQS queue feeding one worker Lambda: a dead-letter queue after `maxReceiveCount` deliveries, a
 * visibility timeout longer than the worker may run (a message is never redelivered mid-render), partial
 * batch failures reported by the worker, and alarms on dead letters and on messages waiting too long. A queue whose
 * definition names a dead-letter worker gets one, reading the dead-letter queue.
 */
export class WorkerQueue extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetters: sqs.Queue;
  readonly worker: lambda.IFunction;

  constructor(
    scope: Construct,
    id: string,
    props: { def: QueueDef; functions: FunctionFactory; workerEnvironment?: Record<string, string>; workerSecrets?: SecretSetting[]; alarms: sns.ITopic },
  ) {
    super(scope, id);
    const { def } = props;
    this.deadLetters = new sqs.Queue(this, 'DeadLetters', {
      retentionPeriod: Duration.days(14),
      enforceSSL: true,
      // Longer than its worker may run (below), as Lambda requires of a queue it reads.
      visibilityTimeout: Duration.seconds(6 * DEAD_LETTER_WORKER_TIMEOUT_SECONDS),
    });
    this.queue = new sqs.Queue(this, 'Queue', {
      visibilityTimeout: Duration.seconds(def.visibilityTimeoutSeconds),
      retentionPeriod: Duration.days(4),
      enforceSSL: true,
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: def.maxReceiveCount },
    });
    // Its own role: the event source grants it the right to consume this queue, which no other function needs.
    this.worker = props.functions.forHandler({
      ref: def.handler,
      profile: def.profile,
      permissions: def.permissions,
      timeoutSeconds: def.timeoutSeconds,
      environment: props.workerEnvironment,
      secrets: props.workerSecrets,
      dedicatedRole: true,
    });
    this.worker.addEventSource(new SqsEventSource(this.queue, { batchSize: 1, reportBatchItemFailures: true, maxConcurrency: def.maxConcurrency }));
    let deadLetterWorker: lambda.IFunction | undefined;
    if (def.deadLetterHandler) {
      // Ends what a dead letter was about (a job whose workers all died without recording it). The alarm below still
      // fires if this worker cannot: its failed records stay in the queue.
      // It sends the failure email the worker would have sent, so it gets the worker's mail settings.
      deadLetterWorker = props.functions.forHandler({
        ref: def.deadLetterHandler,
        profile: 'light',
        permissions: DEAD_LETTER_PERMISSIONS,
        timeoutSeconds: DEAD_LETTER_WORKER_TIMEOUT_SECONDS,
        environment: props.workerEnvironment,
        secrets: props.workerSecrets,
        dedicatedRole: true,
      });
      deadLetterWorker.addEventSource(new SqsEventSource(this.deadLetters, { batchSize: 1, reportBatchItemFailures: true }));
    }

    const notify = new cloudwatchActions.SnsAction(props.alarms);
    new cloudwatch.Alarm(this, 'DeadLettersAlarm', {
      alarmDescription: `Messages of the ${def.name} queue failed ${def.maxReceiveCount} times`,
      // Dead letters a worker drains within seconds are seen by its invocations; one left waiting, by the queue.
      metric: deadLetterWorker
        ? new cloudwatch.MathExpression({
            expression: 'invocations + waiting',
            usingMetrics: {
              invocations: deadLetterWorker.metricInvocations({ period: Duration.minutes(5), statistic: 'Sum' }),
              waiting: this.deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
            },
            period: Duration.minutes(5),
          })
        : this.deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }).addAlarmAction(notify);
    new cloudwatch.Alarm(this, 'BacklogAlarm', {
      alarmDescription: `The oldest message of the ${def.name} queue has waited over 15 minutes`,
      metric: this.queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5) }),
      threshold: 900,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 2,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }).addAlarmAction(notify);
  }
}
