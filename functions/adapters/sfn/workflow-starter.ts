import { DescribeExecutionCommand, ExecutionAlreadyExists, ExecutionDoesNotExist, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { ExecutionStatus, WorkflowStarter } from '../../core/workflows/ports';

/** StartExecution and DescribeExecution on the state machine of each workflow (ARNs from the environment, see composition). */
export class SfnWorkflowStarter implements WorkflowStarter {
  constructor(
    private readonly client: SFNClient,
    private readonly arns: Record<string, string | undefined>,
  ) {}

  private machineArn(workflow: string): string {
    const arn = this.arns[workflow];
    if (!arn) throw new Error(`no state machine ARN configured for workflow ${workflow}`);
    return arn;
  }

  async start(workflow: string, input: Record<string, unknown>, opts: { name?: string } = {}): Promise<{ executionId: string }> {
    const arn = this.machineArn(workflow);
    try {
      const res = await this.client.send(new StartExecutionCommand({ stateMachineArn: arn, input: JSON.stringify(input), name: opts.name }));
      return { executionId: res.executionArn! };
    } catch (err) {
      // Same name, same input: the execution already runs (a retried request), which is what the caller wanted.
      if (err instanceof ExecutionAlreadyExists || (err as Error).name === 'ExecutionAlreadyExists') {
        return { executionId: executionArn(arn, opts.name!) };
      }
      throw err;
    }
  }

  async status(workflow: string, name: string): Promise<ExecutionStatus | null> {
    try {
      const res = await this.client.send(new DescribeExecutionCommand({ executionArn: executionArn(this.machineArn(workflow), name) }));
      return (res.status as ExecutionStatus | undefined) ?? null;
    } catch (err) {
      if (err instanceof ExecutionDoesNotExist || (err as Error).name === 'ExecutionDoesNotExist') return null;
      throw err;
    }
  }
}

/** An execution's ARN is its state machine's, with `execution` for `stateMachine` and its name appended. */
function executionArn(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}

export function createSfnClient(region: string): SFNClient {
  return new SFNClient({ region });
}
