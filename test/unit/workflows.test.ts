import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BULK_SLOT_LEASE_SECONDS } from '../../functions/core/bulk/limits';
import { PDF_JOB_LEASE_SECONDS } from '../../functions/core/pdfops/background';
import { functionTimeoutSeconds } from '../../functions/profiles';
import { WORKFLOWS } from '../../functions/workflows';

const timeoutOf = (name: string) => {
  const file = WORKFLOWS.find((w) => w.name === name)!.definition;
  return (JSON.parse(readFileSync(path.resolve(__dirname, '../..', file), 'utf8')) as { TimeoutSeconds: number }).TimeoutSeconds;
};

describe('active-job slots outlast their workflows', () => {
  it.each([
    ['bulk', BULK_SLOT_LEASE_SECONDS],
    ['pdfop', PDF_JOB_LEASE_SECONDS],
  ])('a %s slot is held longer than its state machine may run', (workflow, lease) => {
    expect(timeoutOf(workflow)).toBeGreaterThan(0);
    expect(lease).toBeGreaterThan(timeoutOf(workflow));
  });
});

/**
 * Lambda's transient service errors (a 500 on the invoke itself), as Step Functions names them. AWS's best practice
 * (https://docs.aws.amazon.com/step-functions/latest/dg/bp-lambda-serviceexception.html) retries all four; the local
 * runner calls handlers in-process and never raises one, so only the definition can say they are retried.
 */
const LAMBDA_SERVICE_EXCEPTIONS = ['Lambda.ClientExecutionTimeoutException', 'Lambda.ServiceException', 'Lambda.AWSLambdaException', 'Lambda.SdkClientException'];

function taskStates(states: Record<string, any>): [string, any][] {
  return Object.entries(states).flatMap(([name, state]) => [
    ...(state.Type === 'Task' ? [[name, state] as [string, any]] : []),
    ...(state.ItemProcessor ? taskStates(state.ItemProcessor.States) : []),
    ...(state.Iterator ? taskStates(state.Iterator.States) : []),
    ...(state.Branches ?? []).flatMap((b: { States: Record<string, any> }) => taskStates(b.States)),
  ]);
}

describe('every Task state retries Lambda service exceptions', () => {
  it.each(WORKFLOWS.map((w) => [w.name, w.definition]))('%s', (_name, file) => {
    const asl = JSON.parse(readFileSync(path.resolve(__dirname, '../..', file), 'utf8'));
    for (const [state, task] of taskStates(asl.States)) {
      const retried = new Set<string>((task.Retry ?? []).flatMap((r: { ErrorEquals: string[] }) => r.ErrorEquals));
      // States.TaskFailed and States.ALL match every one of them.
      const missing = retried.has('States.ALL') || retried.has('States.TaskFailed') ? [] : LAMBDA_SERVICE_EXCEPTIONS.filter((e) => !retried.has(e));
      expect(`${state}: ${missing.join(', ')}`).toBe(`${state}: `);
    }
  });
});

describe('every Task state waits as long as its Lambda may run', () => {
  // A state that gives up first retries or fails a Lambda that is still running, and an execution shorter than one
  // of its states cuts that state short.
  it.each(WORKFLOWS.map((w) => [w.name, w]))('%s', (_name, workflow) => {
    const asl = JSON.parse(readFileSync(path.resolve(__dirname, '../..', workflow.definition), 'utf8'));
    for (const [state, task] of taskStates(asl.States)) {
      const fn = workflow.tasks[state];
      expect(`${state}: ${task.TimeoutSeconds >= functionTimeoutSeconds(fn.profile, fn.timeoutSeconds)}`).toBe(`${state}: true`);
      expect(`${state}: ${asl.TimeoutSeconds >= task.TimeoutSeconds}`).toBe(`${state}: true`);
    }
  });
});

describe('every Retry is one Step Functions accepts and spaces its attempts', () => {
  // The local runner's tests set every wait to 0 (LOCAL_SFN_RETRY_MS), so only the definition can say the retries
  // wait at all. Step Functions refuses IntervalSeconds below 1 and BackoffRate below 1.0 at deploy.
  it.each(WORKFLOWS.map((w) => [w.name, w.definition]))('%s', (_name, file) => {
    const asl = JSON.parse(readFileSync(path.resolve(__dirname, '../..', file), 'utf8'));
    for (const [state, task] of taskStates(asl.States)) {
      for (const retry of (task.Retry ?? []) as { ErrorEquals: string[]; IntervalSeconds?: number; BackoffRate?: number; MaxAttempts?: number }[]) {
        const what = `${state} ${retry.ErrorEquals.join(',')}`;
        expect(`${what}: ${Number.isInteger(retry.IntervalSeconds ?? 1) && (retry.IntervalSeconds ?? 1) >= 1}`).toBe(`${what}: true`);
        expect(`${what}: ${(retry.BackoffRate ?? 2) >= 1}`).toBe(`${what}: true`);
        expect(`${what}: ${Number.isInteger(retry.MaxAttempts ?? 3) && (retry.MaxAttempts ?? 3) >= 0}`).toBe(`${what}: true`);
      }
    }
  });
});
