import { DescribeExecutionCommand, ExecutionAlreadyExists, ExecutionDoesNotExist, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { SfnWorkflowStarter } from '../../../../functions/adapters/sfn/workflow-starter';

const machine = 'arn:aws:states:eu-west-1:123456789012:stateMachine:Workflow-bulk';
const execution = 'arn:aws:states:eu-west-1:123456789012:execution:Workflow-bulk:job_1';

describe('SfnWorkflowStarter', () => {
  const sfn = mockClient(SFNClient);
  afterEach(() => sfn.reset());
  afterAll(() => sfn.restore());
  const starter = () => new SfnWorkflowStarter(new SFNClient({ region: 'eu-west-1' }), { bulk: machine });

  it('starts an execution named as asked, and takes an existing one of that name for the start', async () => {
    sfn.on(StartExecutionCommand).resolvesOnce({ executionArn: execution, startDate: new Date() }).rejectsOnce(new ExecutionAlreadyExists({ message: 'exists', $metadata: {} }));
    expect(await starter().start('bulk', { job_id: 'job_1' }, { name: 'job_1' })).toEqual({ executionId: execution });
    expect(await starter().start('bulk', { job_id: 'job_1' }, { name: 'job_1' })).toEqual({ executionId: execution });
    expect(sfn.commandCalls(StartExecutionCommand)[0].args[0].input).toEqual({ stateMachineArn: machine, input: '{"job_id":"job_1"}', name: 'job_1' });
    await expect(starter().start('pdfop', {})).rejects.toThrow(/no state machine ARN configured for workflow pdfop/);
  });

  it('knows the refusal of a taken name by its error name too (an error made by another copy of the SDK), and passes other errors on', async () => {
    sfn
      .on(StartExecutionCommand)
      .rejectsOnce(Object.assign(new Error('exists'), { name: 'ExecutionAlreadyExists' }))
      .rejectsOnce(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    expect(await starter().start('bulk', { job_id: 'job_1' }, { name: 'job_1' })).toEqual({ executionId: execution });
    await expect(starter().start('bulk', { job_id: 'job_1' }, { name: 'job_1' })).rejects.toThrow('Rate exceeded');
    sfn.on(DescribeExecutionCommand).rejectsOnce(Object.assign(new Error('none'), { name: 'ExecutionDoesNotExist' }));
    expect(await starter().status('bulk', 'job_1')).toBeNull();
  });

  it("reads an execution's status by its ARN, none for an execution that does not exist, and passes other errors on", async () => {
    sfn
      .on(DescribeExecutionCommand)
      .resolvesOnce({ status: 'RUNNING' })
      .resolvesOnce({ status: 'TIMED_OUT' })
      .rejectsOnce(new ExecutionDoesNotExist({ message: 'none', $metadata: {} }))
      .rejectsOnce(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    expect(await starter().status('bulk', 'job_1')).toBe('RUNNING');
    expect(await starter().status('bulk', 'job_1')).toBe('TIMED_OUT');
    expect(await starter().status('bulk', 'job_1')).toBeNull();
    await expect(starter().status('bulk', 'job_1')).rejects.toThrow('Rate exceeded');
    expect(sfn.commandCalls(DescribeExecutionCommand).map((c) => c.args[0].input)).toEqual(Array(4).fill({ executionArn: execution }));
  });
});
