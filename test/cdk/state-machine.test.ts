import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { AslStateMachine } from '../../lib/state-machine';
import { tempDir } from '../support/temp';

function asl(definition: object): string {
  const file = path.join(tempDir('asl-'), 'test.asl.json');
  writeFileSync(file, JSON.stringify(definition));
  return file;
}

describe('AslStateMachine', () => {
  const states = { Work: { Type: 'Task', Resource: '${Work}', End: true } };
  const setup = () => {
    const stack = new Stack(new App({ outdir: tempDir('cdk.out-') }), 'T');
    const fn = new lambda.Function(stack, 'Fn', { runtime: lambda.Runtime.NODEJS_22_X, handler: 'index.handler', code: lambda.Code.fromInline('exports.handler = async () => ({})') });
    return { stack, fn };
  };

  it('refuses a definition without its own TimeoutSeconds, the only bound an execution has', () => {
    const { stack, fn } = setup();
    expect(() => new AslStateMachine(stack, 'NoBound', { definitionFile: asl({ StartAt: 'Work', States: states }), tasks: { Work: fn } })).toThrow(/TimeoutSeconds/);
    expect(() => new AslStateMachine(stack, 'Bound', { definitionFile: asl({ StartAt: 'Work', TimeoutSeconds: 60, States: states }), tasks: { Work: fn } })).not.toThrow();
  });
});
