/**
 * The single-table key schema. The CDK table (lib/storage.ts) and the local table (local/emulators/dynamodb.ts)
 * are both created from TABLE_SCHEMA, and every item key is built by `keys` below — never by hand in a handler.
 *
 * | entity        | pk                      | sk                         | gsi1pk                       | gsi1sk                 |
 * |---------------|-------------------------|----------------------------|------------------------------|------------------------|
 * | account       | ACCOUNT#<account_id>    | ACCOUNT                    |                              |                        |
 * | ledger entry  | ACCOUNT#<account_id>    | CHARGE#<job_id>#<unit>     |                              |                        |
 * | plan          | PLAN                    | PLAN#<plan_id>             |                              |                        |
 * | API key       | APIKEY#<lookup prefix>  | KEY#<api_key_id>           | ACCOUNT#<account_id>#APIKEYS | <created_at>#<key id>  |
 * | API key owner | APIKEYID#<api_key_id>   | OWNER                      |                              |                        |
 * | API key count | ACCOUNT#<account_id>    | APIKEYS                    |                              |                        |
 * | job           | JOB#<job_id>            | JOB                        | ACCOUNT#<account_id>#JOBS    | <created_at>#<job_id>  |
 * | rate window   | RATE#<account_id>       | MINUTE#<yyyy-mm-ddThh:mm>  |                              |                        |
 * | outbox event  | JOB#<job_id>            | EVENT#<event_id>           | OUTBOX#<shard> (while pending)| <created_at or last postponed>#<event id>|
 * | job file row  | JOB#<job_id>            | FILE#<index, 6 digits>     |                              |                        |
 * | unsent start  | JOB#<job_id>            | START                      | STARTS#<shard>               | <due_at>#<job_id>      |
 * | workflow watch| JOB#<job_id>            | START                      | WATCHES#<shard>              | <due_at>#<job_id>      |
 * | job slot      | ACCOUNT#<account_id>    | SLOT#<kind>#<n>            |                              |                        |
 * | purchase      | ACCOUNT#<account_id>    | PURCHASE#<purchase_id>     |                              |                        |
 * | Stripe event  | STRIPE_EVENT#<event_id> | EVENT                      |                              |                        |
 * | Stripe customer| STRIPE_CUSTOMER#<cus_id>| CUSTOMER                  |                              |                        |
 * | Stripe payment| STRIPE_PAYMENT#<pi_id>  | PAYMENT                    |                              |                        |
 * | webhook       | WEBHOOK#<webhook_id>    | WEBHOOK                    | ACCOUNT#<account_id>#WEBHOOKS| <created_at>#<webhook id>|
 * | webhook count | ACCOUNT#<account_id>    | WEBHOOKS                   |                              |                        |
 * | delivery record| WEBHOOK#<webhook_id>   | DELIVERY#<delivery_id>     | JOB#<job_id>#DELIVERIES      | <delivery_id>          |
 * | delivery claim| JOB#<job_id>            | DELIVERY#<event_id>#<webhook_id>|                         |                        |
 *
 * API keys: the owner item says which account and lookup prefix a key id belongs to (a consistent lookup by id,
 * e.g. to revoke, which the listing index is not); the count item holds how many keys the account has, checked
 * against the limit in the transaction that creates a key (an account whose keys predate it gets it from its
 * listing first). Key, owner and count are written together.
 *
 * Webhooks: the count item holds how many webhooks the account has (checked against the plan's
 * `max_webhooks` in the creating transaction). A delivery record is one attempt series (history, kept
 * indefinitely; newest first by ULID under its webhook, and per job through the index). A delivery claim
 * (TTL 7 days) makes each (event, webhook) pair one series under at-least-once dispatch.
 *
 * Unsent starts: a queued job is written with a record of how it is started (render queue, workflow), removed
 * once the start was sent; the sweeper finds the ones a dying writer left through their sharded index partition.
 * Due at the job's creation; a render worker's claim re-arms it as a watch due at the claim's lease end. A
 * workflow-run job's record moves to the WATCHES#<shard> partitions once its execution started (`watchStart`), so
 * running workflow jobs, however many, never hold back a lost start.
 *
 * A purchase (one-off credits bought) is recorded once per checkout session. A Stripe event item marks an
 * applied event (TTL 60 days, beyond Stripe's 3 days of retries); a customer item maps a Stripe customer
 * to its account; a payment item maps the payment a pack was paid with to its purchase (refunds and disputes name
 * the payment), written with the purchase.
 */
export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  globalSecondaryIndexes: [{ indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' }],
  /** Epoch seconds; DynamoDB TTL removes rate windows and other short-lived items. */
  timeToLiveAttribute: 'ttl',
} as const;

export const GSI1 = TABLE_SCHEMA.globalSecondaryIndexes[0].indexName;

export type ItemKey = { pk: string; sk: string };

export const keys = {
  account: (accountId: string): ItemKey => ({ pk: `ACCOUNT#${accountId}`, sk: 'ACCOUNT' }),
  charge: (accountId: string, jobId: string, unit: string): ItemKey => ({ pk: `ACCOUNT#${accountId}`, sk: `CHARGE#${jobId}#${unit}` }),
  planPartition: 'PLAN',
  plan: (planId: string): ItemKey => ({ pk: 'PLAN', sk: `PLAN#${planId}` }),
  apiKeyPartition: (prefix: string) => `APIKEY#${prefix}`,
  apiKey: (prefix: string, apiKeyId: string): ItemKey => ({ pk: `APIKEY#${prefix}`, sk: `KEY#${apiKeyId}` }),
  apiKeysOfAccount: (accountId: string) => `ACCOUNT#${accountId}#APIKEYS`,
  /** Which account and prefix a key id belongs to: a consistent lookup by id (revoke), which the listing index is not. */
  apiKeyOwner: (apiKeyId: string): ItemKey => ({ pk: `APIKEYID#${apiKeyId}`, sk: 'OWNER' }),
  job: (jobId: string): ItemKey => ({ pk: `JOB#${jobId}`, sk: 'JOB' }),
  jobsOfAccount: (accountId: string) => `ACCOUNT#${accountId}#JOBS`,
  /** Position of a job in its account's newest-first listing. */
  jobListPosition: (createdAt: string, jobId: string) => `${createdAt}#${jobId}`,
  rateWindow: (accountId: string, minute: string): ItemKey => ({ pk: `RATE#${accountId}`, sk: `MINUTE#${minute}` }),
  event: (jobId: string, eventId: string): ItemKey => ({ pk: `JOB#${jobId}`, sk: `EVENT#${eventId}` }),
  /** Pending events are listed through a sparse, sharded index so a sweeper can find undelivered ones. */
  pendingEvents: (shard: number) => `OUTBOX#${shard}`,
  /** A pending event's place in that index: when it was written, or last postponed (the sweeper lists the oldest). */
  pendingEventSort: (at: string, eventId: string) => `${at}#${eventId}`,
  /** How a queued job is to be started, until its start was sent (see core/jobs/starts.ts). */
  jobStart: (jobId: string): ItemKey => ({ pk: `JOB#${jobId}`, sk: 'START' }),
  /** Unsent starts are listed through a sparse, sharded index, like pending outbox events. */
  dueStartRecords: (shard: number) => `STARTS#${shard}`,
  /** Watches on running workflow jobs, in partitions of their own: however many run, they never hold back a lost start. */
  workflowWatches: (shard: number) => `WATCHES#${shard}`,
  /** Per-file result rows of a job (GET /jobs/{id}/files), in index order under the job's partition. */
  jobFile: (jobId: string, index: number): ItemKey => ({ pk: `JOB#${jobId}`, sk: `FILE#${String(index).padStart(6, '0')}` }),
  jobFilePrefix: 'FILE#',
  /** Running-job slots of an account (e.g. 2 merge/split jobs); an item holds the job and its lease. */
  jobSlot: (accountId: string, kind: string, n: number): ItemKey => ({ pk: `ACCOUNT#${accountId}`, sk: `SLOT#${kind}#${n}` }),
  jobSlotPrefix: (kind: string) => `SLOT#${kind}#`,
  purchase: (accountId: string, purchaseId: string): ItemKey => ({ pk: `ACCOUNT#${accountId}`, sk: `PURCHASE#${purchaseId}` }),
  purchasePrefix: 'PURCHASE#',
  stripeEvent: (eventId: string): ItemKey => ({ pk: `STRIPE_EVENT#${eventId}`, sk: 'EVENT' }),
  stripeCustomer: (customerId: string): ItemKey => ({ pk: `STRIPE_CUSTOMER#${customerId}`, sk: 'CUSTOMER' }),
  stripePayment: (paymentRef: string): ItemKey => ({ pk: `STRIPE_PAYMENT#${paymentRef}`, sk: 'PAYMENT' }),
  webhook: (webhookId: string): ItemKey => ({ pk: `WEBHOOK#${webhookId}`, sk: 'WEBHOOK' }),
  webhooksOfAccount: (accountId: string) => `ACCOUNT#${accountId}#WEBHOOKS`,
  webhookCount: (accountId: string): ItemKey => ({ pk: `ACCOUNT#${accountId}`, sk: 'WEBHOOKS' }),
  /** How many API keys the account holds: the limit is checked in the transaction that creates a key. */
  apiKeyCount: (accountId: string): ItemKey => ({ pk: `ACCOUNT#${accountId}`, sk: 'APIKEYS' }),
  delivery: (webhookId: string, deliveryId: string): ItemKey => ({ pk: `WEBHOOK#${webhookId}`, sk: `DELIVERY#${deliveryId}` }),
  deliveryPrefix: 'DELIVERY#',
  deliveriesOfJob: (jobId: string) => `JOB#${jobId}#DELIVERIES`,
  deliveryClaim: (jobId: string, eventId: string, webhookId: string): ItemKey => ({ pk: `JOB#${jobId}`, sk: `DELIVERY#${eventId}#${webhookId}` }),
};

export const OUTBOX_SHARDS = 8;
export const START_SHARDS = 8;

/** The index shard of an id ending in ULID or base-36 characters (outbox events, unsent starts). */
export function shardOf(id: string, shards: number): number {
  return (parseInt(id.slice(-2), 36) || 0) % shards;
}

/** Attribute definitions and key schema in the shape of DynamoDB's CreateTable (used by the local table). */
export function createTableInput(tableName: string) {
  const gsi = TABLE_SCHEMA.globalSecondaryIndexes;
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [TABLE_SCHEMA.partitionKey, TABLE_SCHEMA.sortKey, ...gsi.flatMap((g) => [g.partitionKey, g.sortKey])].map((name) => ({
      AttributeName: name,
      AttributeType: 'S' as const,
    })),
    KeySchema: [
      { AttributeName: TABLE_SCHEMA.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: TABLE_SCHEMA.sortKey, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: gsi.map((g) => ({
      IndexName: g.indexName,
      KeySchema: [
        { AttributeName: g.partitionKey, KeyType: 'HASH' as const },
        { AttributeName: g.sortKey, KeyType: 'RANGE' as const },
      ],
      Projection: { ProjectionType: 'ALL' as const },
    })),
  };
}
