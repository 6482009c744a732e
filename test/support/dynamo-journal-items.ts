/**
 * The items of the emulator's journal tests: one that a Put replaces (an attribute it had goes), one a Put creates,
 * one an Update changes (removing an attribute), one a Delete removes, and 40 more the Put creates, so that putting
 * the transaction back takes long enough to be seen half done.
 */
const key = (id: string) => ({ pk: `J#${id}`, sk: 'X' });
export const FILLERS = Array.from({ length: 40 }, (_, i) => `f${String(i).padStart(2, '0')}`);
/** Every item the transaction writes, in its order; the ones it creates have no seed. */
export const JOURNAL_IDS = ['a', 'b', 'c', 'd', ...FILLERS];

/** The items as they are before the transaction. */
export const journalSeed = () => [
  { ...key('a'), v: 1, gone: 'yes' },
  { ...key('c'), v: 1, keep: 'c' },
  { ...key('d'), v: 1 },
];

export const journalTransaction = (table: string) => [
  { Put: { TableName: table, Item: { ...key('a'), v: 2 } } },
  { Put: { TableName: table, Item: { ...key('b'), v: 2 } } },
  { Update: { TableName: table, Key: key('c'), UpdateExpression: 'SET v = :two REMOVE keep', ExpressionAttributeValues: { ':two': 2 } } },
  { Delete: { TableName: table, Key: key('d') } },
  ...FILLERS.map((id) => ({ Put: { TableName: table, Item: { ...key(id), v: 2 } } })),
];

export const journalKey = key;
