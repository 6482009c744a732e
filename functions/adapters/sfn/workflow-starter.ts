import { ExecutionAlreadyExists, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { WorkflowStarter } from '../../core/workflows/ports';

/** StartExecution on the state machine of each workflow (ARNs from the environment, see composition). */
export class SfnWorkflowStarter implements WorkflowStarter {
  constructor(
    private readonly client: SFNClient,
    private readonly arns: Record<string, string | undefined>,
  ) {}

  async start(workflow: string, input: Record<string, unknown>, opts: { name?: string } = {}): Promise<{ executionId: string }> {
    const arn = this.arns[workflow];
    if (!arn) throw new Error(`no state machine ARN configured for workflow ${workflow}`);
    try {
      const res = await this.client.send(new StartExecutionCommand({ stateMachineArn: arn, input: JSON.stringify(input), name: opts.name }));
      return { executionId: res.executionArn! };
    } catch (err) {
      // Same name, same input: the execution already runs (a retried request), which is what the caller wanted.
      if (err instanceof ExecutionAlreadyExists || (err as Error).name === 'ExecutionAlreadyExists') {
        return { executionId: `${arn.replace(':stateMachine:', ':execution:')}:${opts.name}` };
      }
      throw err;
    }
  }
}

export function createSfnClient(region: string): SFNClient {
  return new SFNClient({ region });
}
