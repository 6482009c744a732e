import { createDynamo } from '../../functions/adapters/dynamodb/client';

/** DynamoDB's answers, as its wire protocol carries them (the SDK parses them as it would in AWS). */
export interface ScriptedReply {
  status: number;
  body: unknown;
}

export const ok: ScriptedReply = { status: 200, body: {} };

/** A transaction cancelled with one reason per item (`None`, `ConditionalCheckFailed`, `TransactionConflict`). */
export const cancelled = (codes: string[]): ScriptedReply => ({
  status: 400,
  body: { __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException', Message: 'Transaction cancelled', CancellationReasons: codes.map((Code) => ({ Code })) },
});

/** A single-item write to an item that a transaction is writing. */
export const conflictException: ScriptedReply = {
  status: 400,
  body: { __type: 'com.amazonaws.dynamodb.v20120810#TransactionConflictException', message: 'Transaction is ongoing for the item' },
};

/**
 * A Dynamo whose transport answers from `replies` in turn (the last one repeats) and records each request's
 * operation: what real DynamoDB does under contention, which the local emulator (it serialises writes) never does.
 */
export function scriptedDynamo(replies: ScriptedReply[], conflictPause: (retry: number) => number = () => 0) {
  const sent: string[] = [];
  const requestHandler = {
    async handle(request: { headers: Record<string, string> }) {
      sent.push(String(request.headers['x-amz-target']).split('.')[1]);
      const reply = replies[Math.min(sent.length - 1, replies.length - 1)];
      return {
        response: { statusCode: reply.status, headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'scripted' }, body: Buffer.from(JSON.stringify(reply.body)) },
      };
    },
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
    destroy: () => undefined,
  };
  const db = createDynamo({ tableName: 't', region: 'us-east-1', endpoint: 'http://scripted.invalid', requestHandler: requestHandler as never, conflictPause });
  return { db, sent };
}
