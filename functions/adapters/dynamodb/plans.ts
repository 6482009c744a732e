import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { PlanRepository } from '../../core/accounts/ports';
import type { Plan } from '../../core/billing/plans';
import { type Dynamo, stripKeys, writeBatches } from './client';
import { keys } from './schema';

const CACHE_MS = 60_000;

/**
 * Plans change rarely and are read on every conversion, so they are cached for a minute per process. Only plans that
 * exist: ids come from request paths too, and caching every unknown id would let anyone grow the process's memory.
 */
export class DynamoPlanRepository implements PlanRepository {
  private cache = new Map<string, { plan: Plan; at: number }>();

  constructor(private readonly db: Dynamo) {}

  async get(planId: string): Promise<Plan | null> {
    const hit = this.cache.get(planId);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.plan;
    const { Item } = await this.db.doc.send(new GetCommand({ TableName: this.db.table, Key: keys.plan(planId) }));
    if (!Item) return null;
    const plan = stripKeys<Plan>(Item);
    this.cache.set(planId, { plan, at: Date.now() });
    return plan;
  }

  async list(): Promise<Plan[]> {
    const { Items = [] } = await this.db.doc.send(
      new QueryCommand({ TableName: this.db.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.planPartition } }),
    );
    return Items.map((i) => stripKeys<Plan>(i));
  }

  async put(plans: Plan[]): Promise<void> {
    await writeBatches(this.db, plans.map((plan) => ({ PutRequest: { Item: { ...keys.plan(plan.plan_id), ...plan } } })), 'plans');
    this.cache.clear();
  }
}
