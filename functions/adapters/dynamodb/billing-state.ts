import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { BillingCommitOutcome, BillingStateStore, BillingStateWrite, Purchase } from '../../core/subscriptions/ports';
import { type Dynamo, stripKeys } from './client';
import { keys } from './schema';

/** Applied-event markers outlive Stripe's retry window (3 days) by far. */
const EVENT_MARKER_TTL_SECONDS = 60 * 86_400;

type ItemKind = 'event' | 'purchase' | 'customer' | 'account';

/**
 * An account's billing state (plan, subscription, purchases) changes in one transaction: the applied-event
 * marker and the purchase entry must not exist yet (exactly once), the customer mapping must be free or
 * already ours, and the account must be as it was read — same `billing_version`, and the same allowance,
 * which charges spend concurrently. One-off credits are added (ADD), never overwritten, so a charge
 * debiting them at the same moment is never lost.
 */
export class DynamoBillingStateStore implements BillingStateStore {
  constructor(private readonly db: Dynamo) {}

  async commit(write: BillingStateWrite, at: Date): Promise<BillingCommitOutcome> {
    const { seen, next } = write;
    const now = at.toISOString();
    const items: { kind: ItemKind; op: Record<string, unknown> }[] = [];
    const table = this.db.table;

    if (write.eventId) {
      items.push({
        kind: 'event',
        op: {
          Put: {
            TableName: table,
            Item: { ...keys.stripeEvent(write.eventId), event_id: write.eventId, account_id: seen.account_id, applied_at: now, ttl: Math.floor(at.getTime() / 1000) + EVENT_MARKER_TTL_SECONDS },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      });
    }
    if (write.purchase) {
      items.push({
        kind: 'purchase',
        op: {
          Put: {
            TableName: table,
            Item: { ...keys.purchase(seen.account_id, write.purchase.purchase_id), account_id: seen.account_id, ...write.purchase },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      });
    }
    if (write.linkCustomer) {
      items.push({
        kind: 'customer',
        op: {
          Put: {
            TableName: table,
            Item: { ...keys.stripeCustomer(write.linkCustomer), customer_id: write.linkCustomer, account_id: seen.account_id, linked_at: now },
            ConditionExpression: 'attribute_not_exists(pk) OR account_id = :account',
            ExpressionAttributeValues: { ':account': seen.account_id },
          },
        },
      });
    }

    const version = seen.billing_version ?? 0;
    const conditions = ['attribute_exists(pk)', version === 0 ? 'attribute_not_exists(billing_version)' : 'billing_version = :version'];
    const values: Record<string, unknown> = {
      ':plan': next.plan_id,
      ':status': next.status,
      ':sub': next.subscription,
      ':customer': next.stripe_customer_id,
      ':next': version + 1,
      ':at': now,
    };
    if (version !== 0) values[':version'] = version;
    if (seen.subscription) {
      // Charges spend the allowance without touching billing_version: the allowance must be what we read.
      conditions.push('subscription.allowance_micros = :seenAllowance');
      values[':seenAllowance'] = seen.subscription.allowance_micros;
    }
    let update = 'SET plan_id = :plan, #status = :status, subscription = :sub, stripe_customer_id = :customer, billing_version = :next, updated_at = :at';
    if (write.purchase) {
      update += ' ADD credits_micros :credits';
      values[':credits'] = write.purchase.amount_micros;
    }
    items.push({
      kind: 'account',
      op: {
        Update: {
          TableName: table,
          Key: keys.account(seen.account_id),
          ConditionExpression: conditions.join(' AND '),
          UpdateExpression: update,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: values,
        },
      },
    });

    try {
      await this.db.doc.send(new TransactWriteCommand({ TransactItems: items.map((i) => i.op) as never }));
      return 'committed';
    } catch (err) {
      if (!(err instanceof TransactionCanceledException || (err as Error).name === 'TransactionCanceledException')) throw err;
      const reasons = (err as TransactionCanceledException).CancellationReasons ?? [];
      const failed = reasons.findIndex((r) => r?.Code === 'ConditionalCheckFailed');
      const kind = failed >= 0 ? items[failed]?.kind : undefined;
      if (kind === 'event' || kind === 'purchase') return 'duplicate';
      if (kind === 'customer') return 'customer_conflict';
      // The account changed since it was read, or a concurrent transaction touched it: decide again.
      return 'conflict';
    }
  }

  async eventApplied(eventId: string): Promise<boolean> {
    const { Item } = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: keys.stripeEvent(eventId), ConsistentRead: true }));
    return !!Item;
  }

  async accountForCustomer(customerId: string): Promise<string | null> {
    const { Item } = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: keys.stripeCustomer(customerId), ConsistentRead: true }));
    return typeof Item?.account_id === 'string' ? Item.account_id : null;
  }

  async purchases(accountId: string, limit: number): Promise<Purchase[]> {
    const { Items = [] } = await this.db.doc.send(
      new QueryCommand({
        TableName: this.db.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': keys.account(accountId).pk, ':prefix': keys.purchasePrefix },
      }),
    );
    return Items.map((i) => {
      const { account_id: _account, ...p } = stripKeys<Purchase & { account_id: string }>(i);
      return p;
    })
      .sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0))
      .slice(0, limit);
  }
}
