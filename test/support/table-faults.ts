import type { TestStack } from './stack';

/** A command sent to the table, as a fault hook sees it. */
export type TableCommand = { constructor: { name: string }; input: any };
type Send = (cmd: TableCommand) => Promise<unknown>;

/**
 * Faults at the test stack's table. Every repository shares one document client; its `send` goes through `hook` when
 * one is set: the hook answers with a promise of its own (a failure, a write whose reply is lost: `send` it, then
 * throw, or one that never settles: a handler stopped there), or undefined to send the command as it is.
 */
export interface TableFaults {
  hook: ((cmd: TableCommand, send: Send) => Promise<unknown> | undefined) | null;
}

export function interceptTable(stack: TestStack): TableFaults {
  const doc = (stack.services.jobs as unknown as { db: { doc: { send: (cmd: TableCommand, ...rest: unknown[]) => Promise<unknown> } } }).db.doc;
  const send = doc.send.bind(doc);
  const faults: TableFaults = { hook: null };
  doc.send = (cmd, ...rest) => faults.hook?.(cmd, (c) => send(c, ...rest)) ?? send(cmd, ...rest);
  return faults;
}

/** The items a command puts (a transaction's Puts, or a PutCommand's item). */
export function putItems(cmd: TableCommand): Record<string, any>[] {
  if (cmd.constructor.name === 'TransactWriteCommand') return cmd.input.TransactItems.map((t: { Put?: { Item: Record<string, any> } }) => t.Put?.Item).filter(Boolean);
  return cmd.constructor.name === 'PutCommand' ? [cmd.input.Item] : [];
}

/** What a failing DynamoDB request throws. */
export function tableError(message = 'injected DynamoDB outage', name = 'InternalServerError'): Error {
  return Object.assign(new Error(message), { name });
}
