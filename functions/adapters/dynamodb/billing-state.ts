import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { BillingCommitOutcome, BillingStateStore, BillingStateWrite, Purchase, ReversalWrite } from '../../core/subscriptions/ports';
import { type Dynamo, queryAll, stripKeys } from './client';
import { keys } from './schema';

/** Applied-event markers outlive Stripe's retry window (3 days) by far. */
const EVENT_MARKER_TTL_SECONDS = 60 * 86_400;

type ItemKind = 'event' | 'purchase' | 'payment' | 'customer' | 'account';
type TransactItem = { kind: ItemKind; op: Record<string, unknown> };

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
    const items: TransactItem[] = [];
    const table = this.db.table;

    if (write.eventId) items.push(this.eventMarker(write.eventId, seen.account_id, at));
    if (write.purchase?.payment_ref) {
      // Refunds and disputes name the payment, not the checkout: this finds the purchase they take back from.
      items.push({
        kind: 'payment',
        op: {
          Put: {
            TableName: table,
            Item: { ...keys.stripePayment(write.purchase.payment_ref), account_id: seen.account_id, purchase_id: write.purchase.purchase_id, recorded_at: now },
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

    const failed = await this.transact(items);
    if (failed === null) return 'committed';
    if (failed === 'event' || failed === 'purchase' || failed === 'payment') return 'duplicate';
    if (failed === 'customer') return 'customer_conflict';
    // The account changed since it was read, or a concurrent transaction touched it: decide again.
    return 'conflict';
  }

  /**
   * The event marker, the purchase's reversal (over the one read) and the debit (only while the balance covers it) or
   * the credits given back for a failed refund, in one transaction: a refund takes credits back once, never more than
   * the balance holds, and a failed one gives back only what was taken.
   */
  async reverse(write: ReversalWrite, at: Date): Promise<'committed' | 'duplicate' | 'conflict'> {
    const table = this.db.table;
    const seenVersion = write.seen.reversal?.version;
    const items: TransactItem[] = [
      this.eventMarker(write.eventId, write.account_id, at),
      {
        kind: 'purchase',
        op: {
          Update: {
            TableName: table,
            Key: keys.purchase(write.account_id, write.seen.purchase_id),
            ConditionExpression: `attribute_exists(pk) AND ${seenVersion === undefined ? 'attribute_not_exists(reversal)' : 'reversal.version = :version'}`,
            UpdateExpression: 'SET reversal = :reversal',
            ExpressionAttributeValues: { ':reversal': write.reversal, ...(seenVersion === undefined ? {} : { ':version': seenVersion }) },
          },
        },
      },
    ];
    // Credits given back for a failed refund, or taken for a refund only while the balance covers them (never negative).
    // A debit of the whole balance as read needs that balance still: one raised meanwhile (a job refund) owes more.
    const whole = write.whole_balance_micros;
    const change =
      write.restore_micros > 0
        ? { condition: 'attribute_exists(pk)', update: 'credits_micros + :amount', amount: write.restore_micros, values: {} }
        : whole !== undefined
          ? { condition: 'attribute_exists(pk) AND credits_micros = :whole', update: 'credits_micros - :amount', amount: write.debit_micros, values: { ':whole': whole } }
          : write.debit_micros > 0
            ? { condition: 'attribute_exists(pk) AND credits_micros >= :amount', update: 'credits_micros - :amount', amount: write.debit_micros, values: {} }
            : null;
    if (change) {
      items.push({
        kind: 'account',
        op: {
          Update: {
            TableName: table,
            Key: keys.account(write.account_id),
            ConditionExpression: change.condition,
            UpdateExpression: `SET credits_micros = ${change.update}, updated_at = :at`,
            ExpressionAttributeValues: { ':amount': change.amount, ':at': at.toISOString(), ...change.values },
          },
        },
      });
    }
    const failed = await this.transact(items);
    if (failed === null) return 'committed';
    return failed === 'event' ? 'duplicate' : 'conflict';
  }

  async purchaseForPayment(paymentRef: string): Promise<{ account_id: string; purchase: Purchase } | null> {
    const { Item: link } = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: keys.stripePayment(paymentRef), ConsistentRead: true }));
    if (typeof link?.account_id !== 'string' || typeof link.purchase_id !== 'string') return null;
    const { Item } = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: keys.purchase(link.account_id, link.purchase_id), ConsistentRead: true }));
    return Item ? { account_id: link.account_id, purchase: toPurchase(Item) } : null;
  }

  private eventMarker(eventId: string, accountId: string, at: Date): TransactItem {
    return {
      kind: 'event',
      op: {
        Put: {
          TableName: this.db.table,
          Item: { ...keys.stripeEvent(eventId), event_id: eventId, account_id: accountId, applied_at: at.toISOString(), ttl: Math.floor(at.getTime() / 1000) + EVENT_MARKER_TTL_SECONDS },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    };
  }

  /** Runs the transaction; null when it went through, else the kind of the item whose condition failed (undefined: none named). */
  private async transact(items: TransactItem[]): Promise<ItemKind | undefined | null> {
    try {
      await this.db.doc.send(new TransactWriteCommand({ TransactItems: items.map((i) => i.op) as never }));
      return null;
    } catch (err) {
      if (!(err instanceof TransactionCanceledException || (err as Error).name === 'TransactionCanceledException')) throw err;
      const reasons = (err as TransactionCanceledException).CancellationReasons ?? [];
      const failed = reasons.findIndex((r) => r?.Code === 'ConditionalCheckFailed');
      return failed >= 0 ? items[failed]?.kind : undefined;
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
    // Purchase ids do not sort by time: every page is read (a 1 MB page could leave out the newest).
    const items = await queryAll(this.db, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.account(accountId).pk, ':prefix': keys.purchasePrefix },
    });
    return items
      .map(toPurchase)
      .sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0))
      .slice(0, limit);
  }
}

function toPurchase(item: Record<string, unknown>): Purchase {
  const { account_id: _account, ...p } = stripKeys<Purchase & { account_id: string }>(item);
  return p;
}
