import { readFileSync } from 'node:fs';
import { Aws, Fn, Names } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';

export interface AslStateMachineProps {
  /** Absolute path of the ASL file (statemachines/*.asl.json). */
  definitionFile: string;
  /** `${Name}` in the ASL → the Lambda function behind that Task state. */
  tasks: Record<string, lambda.IFunction>;
}

/**
 * A Step Functions state machine built from an ASL file: every `${Name}` placeholder becomes the ARN of the
 * task function registered under that name (the same names the local runner binds to handler modules), and
 * the state machine may invoke exactly those functions. Every execution event (without input and output, which
 * carry job data) goes to a log group of its own, and executions are traced with X-Ray.
 */
export class AslStateMachine extends Construct {
  readonly stateMachine: sfn.StateMachine;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: AslStateMachineProps) {
    super(scope, id);
    const text = readFileSync(props.definitionFile, 'utf8');
    const placeholders = new Set([...text.matchAll(/\$\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]));
    for (const name of placeholders) if (!props.tasks[name]) throw new Error(`${props.definitionFile}: no function given for \${${name}}`);
    for (const name of Object.keys(props.tasks)) if (!placeholders.has(name)) throw new Error(`${props.definitionFile}: task ${name} is not used by the definition`);
    // The ASL's own TimeoutSeconds is the only bound of an execution (CDK's `timeout` does not reach a string definition).
    if (!(Number((JSON.parse(text) as { TimeoutSeconds?: unknown }).TimeoutSeconds) > 0)) throw new Error(`${props.definitionFile}: set a top-level TimeoutSeconds`);
    // The prefix AWS asks for: Step Functions then needs no entry per group in the account's size-capped logs resource policy.
    // The group is retained (CDK's default for logs), also when a failed first deploy rolls back: the stack's id, new on
    // every creation, ends its name, so that a stack created again under the same name does not fail on "already exists".
    const stackGuid = Fn.select(2, Fn.split('/', Aws.STACK_ID));
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      logGroupName: `/aws/vendedlogs/states/${Names.uniqueResourceName(this, { maxLength: 200 })}-${stackGuid}`,
      retention: logs.RetentionDays.ONE_MONTH,
    });
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      // Inline (not an S3 asset), so the template shows exactly the ASL the local runner executes.
      definitionBody: sfn.DefinitionBody.fromString(text),
      definitionSubstitutions: Object.fromEntries(Object.entries(props.tasks).map(([name, fn]) => [name, fn.functionArn])),
      stateMachineType: sfn.StateMachineType.STANDARD,
      logs: { destination: this.logGroup, level: sfn.LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: true,
    });
    // Exactly the unqualified ARNs the definition names (`grantInvoke` would add `<arn>:*`, every version and alias).
    this.stateMachine.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: Object.values(props.tasks).map((fn) => fn.functionArn) }),
    );
  }
}
