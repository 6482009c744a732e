/** In-memory stand-ins for the ports, for unit tests of domain orchestration (integration tests use the real stack). */
import { type Account, type JobCommitment, allowanceTakesRefund, newAccount, usableAllowanceMicros } from '../../functions/core/accounts/account';
import type { AccountRepository, PlanRepository } from '../../functions/core/accounts/ports';
import { type Bucket, Billing, type Charge, type ChargeEffects, type ChargeStore, type CommitOutcome, type LedgerEntry, afterDebit, chooseBucket } from '../../functions/core/billing/charging';
import type { CommitmentStore } from '../../functions/core/billing/commitments';
import { type Plan, planCatalogue } from '../../functions/core/billing/plans';
import type { Clock } from '../../functions/core/clock';
import type { OutboxEvent } from '../../functions/core/events/events';
import type { JobFileRepository, JobFileRow } from '../../functions/core/jobs/files';
import type { Job } from '../../functions/core/jobs/job';
import type { BlobStore, JobListQuery, JobRepository } from '../../functions/core/jobs/ports';
import type { JobSlots } from '../../functions/core/jobs/slots';
import type { JobStart, StartRecord } from '../../functions/core/jobs/starts';
import type { ExecutionStatus, WorkflowStarter } from '../../functions/core/workflows/ports';

export class MemoryJobs implements JobRepository {
  jobs = new Map<string, Job>();
  events: OutboxEvent[] = [];
  /** Starts recorded with their jobs and not yet confirmed as sent, by job id. */
  starts = new Map<string, StartRecord>();
  async get(id: string) {
    return this.jobs.get(id) ?? null;
  }
  async put(job: Job, events: OutboxEvent[] = [], start?: JobStart) {
    this.jobs.set(job.job_id, structuredClone(job));
    this.events.push(...events);
    if (start) {
      this.watches.delete(job.job_id);
      const due = job.status === 'processing' && job.lease_until ? job.lease_until : job.created_at;
      this.starts.set(job.job_id, { job_id: job.job_id, account_id: job.account_id, created_at: job.created_at, due_at: due, start });
    }
  }
  async startSent(jobId: string, due?: string) {
    const record = this.starts.get(jobId);
    if (due === undefined || (record && (record.due_at ?? record.created_at) === due)) {
      this.starts.delete(jobId);
      this.watches.delete(jobId);
    }
  }
  /** Records moved on by `watchStart` (listed apart, as the DynamoDB adapter keeps them in partitions of their own). */
  watches = new Set<string>();
  async watchStart(jobId: string, from: string, until: string) {
    const record = this.starts.get(jobId);
    if (!record || (record.due_at ?? record.created_at) !== from) return false;
    this.starts.set(jobId, { ...record, due_at: until });
    this.watches.add(jobId);
    return true;
  }
  async dueStartRecords(before: string, limit: number) {
    const due = (s: StartRecord) => s.due_at ?? s.created_at;
    const oldest = (watches: boolean) =>
      [...this.starts.values()]
        .filter((s) => this.watches.has(s.job_id) === watches && due(s) < before)
        .sort((a, b) => (due(a) < due(b) ? -1 : 1))
        .slice(0, limit);
    return [...oldest(false), ...oldest(true)];
  }
  async putIf(job: Job, from: Job['status'][], events: OutboxEvent[] = [], leaseExpiredBefore?: string, watch?: JobStart) {
    const current = this.jobs.get(job.job_id);
    const ok = !!current && (from.includes(current.status) || (!!leaseExpiredBefore && current.status === 'processing' && (current.lease_until ?? '') < leaseExpiredBefore));
    if (ok) await this.put(job, events, watch);
    return ok;
  }
  async putIfLeaseHeld(job: Job, leaseUntil: string, events: OutboxEvent[] = []) {
    const current = this.jobs.get(job.job_id);
    const ok = current?.status === 'processing' && current.lease_until === leaseUntil;
    if (ok) await this.put(job, events);
    return ok;
  }
  async list(_q: JobListQuery) {
    return { jobs: [...this.jobs.values()] };
  }
}

export class MemoryFiles implements JobFileRepository {
  rows = new Map<string, JobFileRow[]>();
  async putAll(jobId: string, rows: JobFileRow[]) {
    const current = (this.rows.get(jobId) ?? []).filter((r) => !rows.some((n) => n.index === r.index));
    this.rows.set(jobId, [...current, ...rows].sort((a, b) => a.index - b.index));
  }
  async list(jobId: string) {
    return this.rows.get(jobId) ?? [];
  }
  async get(jobId: string, index: number) {
    return (this.rows.get(jobId) ?? []).find((r) => r.index === index) ?? null;
  }
  async deleteAll(jobId: string) {
    this.rows.delete(jobId);
  }
}

export class MemoryBlobs implements BlobStore {
  objects = new Map<string, { body: Buffer; contentType: string }>();
  /** Keys whose put fails (storage trouble). */
  failPuts = new Set<string>();
  async put(key: string, body: Uint8Array, contentType: string) {
    if ([...this.failPuts].some((k) => key.includes(k))) throw new Error(`storage unavailable for ${key}`);
    this.objects.set(key, { body: Buffer.from(body), contentType });
  }
  async putParts(key: string, parts: readonly Uint8Array[], contentType: string) {
    await this.put(key, Buffer.concat(parts), contentType);
  }
  async get(key: string) {
    return this.objects.get(key)?.body ?? null;
  }
  async head(key: string) {
    const o = this.objects.get(key);
    return o ? { size_bytes: o.body.length, content_type: o.contentType } : null;
  }
  async delete(key: string) {
    this.objects.delete(key);
  }
  async signedGetUrl(key: string) {
    return `memory://${key}`;
  }
  async signedPutUrl(key: string) {
    return `memory://${key}?put`;
  }
}

export class MemoryAccounts implements AccountRepository {
  accounts = new Map<string, Account>();
  /** A fresh copy on every read, as a database gives. */
  async get(id: string) {
    const a = this.accounts.get(id);
    return a ? structuredClone(a) : null;
  }
  async create(a: Account) {
    if (this.accounts.has(a.account_id)) return false;
    this.accounts.set(a.account_id, a);
    return true;
  }
}

export class MemoryPlans implements PlanRepository {
  plans = new Map<string, Plan>(planCatalogue().map((p) => [p.plan_id, p]));
  async get(id: string) {
    return this.plans.get(id) ?? null;
  }
  async list() {
    return [...this.plans.values()];
  }
  async put(plans: Plan[]) {
    for (const p of plans) this.plans.set(p.plan_id, p);
  }
}

/** Ledger, debit and effects, like the DynamoDB transaction. `fail` makes the next commits throw. */
export class MemoryChargeStore implements ChargeStore {
  ledger = new Map<string, LedgerEntry>();
  fail: Error | null = null;
  constructor(
    private readonly accounts: MemoryAccounts,
    private readonly jobs: MemoryJobs,
  ) {}
  async commit(charge: Charge, bucket: Bucket, at: Date, effects: ChargeEffects = {}): Promise<CommitOutcome> {
    if (this.fail) throw this.fail;
    const key = `${charge.job_id}#${charge.unit}`;
    if (this.ledger.has(key)) return 'already_charged';
    const a = this.accounts.accounts.get(charge.account_id)!;
    if (chooseBucket(a, charge.amount_micros, at) !== bucket) return 'bucket_changed';
    // Read and written without an await between, as the transaction is atomic (two workers' commits must not interleave).
    const stored = effects.job ? this.jobs.jobs.get(effects.job.job_id) : undefined;
    if (stored && stored.status !== 'queued' && stored.status !== 'processing') return 'job_finished';
    if (effects.job && effects.leaseUntil !== undefined && (stored?.status !== 'processing' || stored.lease_until !== effects.leaseUntil)) return 'job_finished';
    this.ledger.set(key, { ...charge, bucket, created_at: at.toISOString() });
    this.accounts.accounts.set(a.account_id, {
      ...afterDebit(a, bucket, charge.amount_micros),
      total_pdf_count: a.total_pdf_count + charge.pdf_count,
      total_amount_micros: a.total_amount_micros + charge.amount_micros,
    });
    if (effects.job) await this.jobs.put(effects.job, effects.events ?? []);
    return 'charged';
  }
  /** Batched commits made (charges written together). */
  batches = 0;
  async commitMany(charges: { charge: Charge; bucket: Bucket }[], at: Date): Promise<'charged' | 'conflict'> {
    if (this.fail) throw this.fail;
    let a = this.accounts.accounts.get(charges[0].charge.account_id)!;
    for (const { charge, bucket } of charges) {
      if (this.ledger.has(`${charge.job_id}#${charge.unit}`) || !bucketCovers(a, bucket, charge.amount_micros, at)) return 'conflict';
      a = afterDebit(a, bucket, charge.amount_micros);
      a = { ...a, total_pdf_count: a.total_pdf_count + charge.pdf_count, total_amount_micros: a.total_amount_micros + charge.amount_micros };
    }
    for (const { charge, bucket } of charges) this.ledger.set(`${charge.job_id}#${charge.unit}`, { ...charge, bucket, created_at: at.toISOString() });
    this.accounts.accounts.set(a.account_id, a);
    this.batches++;
    return 'charged';
  }
  async chargesOf(accountId: string, jobId: string) {
    return [...this.ledger.values()].filter((e) => e.account_id === accountId && e.job_id === jobId).map((e) => ({ ...e }));
  }
  async refund(entry: LedgerEntry, at: Date): Promise<'refunded' | 'already_refunded'> {
    if (this.fail) throw this.fail;
    const stored = this.ledger.get(`${entry.job_id}#${entry.unit}`);
    if (!stored || stored.refunded_at) return 'already_refunded';
    stored.refunded_at = at.toISOString();
    const a = this.accounts.accounts.get(entry.account_id)!;
    const back = entry.bucket === 'subscription' && !allowanceTakesRefund(a.subscription, entry.created_at, at) ? 'credits' : entry.bucket;
    const next = { ...afterDebit(a, back, -entry.amount_micros), total_pdf_count: a.total_pdf_count - entry.pdf_count, total_amount_micros: a.total_amount_micros - entry.amount_micros };
    this.accounts.accounts.set(a.account_id, next);
    return 'refunded';
  }
}

/** What the DynamoDB debit's condition checks: the bucket (not necessarily the first choice) still covers the amount. */
function bucketCovers(a: Account, bucket: Bucket, amount: number, at: Date): boolean {
  if (bucket === 'subscription') return usableAllowanceMicros(a, at) >= amount;
  return (bucket === 'free_credits' ? a.free_credits_micros : a.credits_micros) >= amount;
}

/** Commitments on the account records, with the version check of the DynamoDB write. */
export class MemoryCommitments implements CommitmentStore {
  writes = 0;
  constructor(private readonly accounts: MemoryAccounts) {}
  async replace(accountId: string, version: number, commitments: Record<string, JobCommitment>) {
    const a = this.accounts.accounts.get(accountId);
    if (!a || (a.commitments_version ?? 0) !== version) return false;
    this.accounts.accounts.set(accountId, { ...a, commitments: structuredClone(commitments), commitments_version: version + 1 });
    this.writes++;
    return true;
  }
  async release(accountId: string, jobId: string) {
    const a = this.accounts.accounts.get(accountId);
    if (!a?.commitments?.[jobId]) return;
    const { [jobId]: _gone, ...rest } = a.commitments;
    this.accounts.accounts.set(accountId, { ...a, commitments: rest, commitments_version: (a.commitments_version ?? 0) + 1 });
  }
}

export class MemorySlots implements JobSlots {
  /** Slot → the job holding it. */
  held = new Map<string, string>();
  /** Slot → the attempt holding it (the job id unless a holder was named) and the end of its lease. */
  leases = new Map<string, { holder: string; until: number; since: number }>();
  async acquire(i: { accountId: string; kind: string; jobId: string; holder?: string; max: number; now: Date; leaseSeconds: number }) {
    for (let n = 0; n < i.max; n++) {
      const k = `${i.accountId}#${i.kind}#${n}`;
      if (this.held.has(k) && this.leases.get(k)!.until >= i.now.getTime()) continue;
      this.held.set(k, i.jobId);
      this.leases.set(k, { holder: i.holder ?? i.jobId, until: i.now.getTime() + i.leaseSeconds * 1000, since: i.now.getTime() });
      return true;
    }
    return false;
  }
  async release(i: { accountId: string; kind: string; jobId: string; holder?: string }) {
    // Only the named kind's slots of the account, as the DynamoDB adapter reads them.
    for (const [k, v] of this.held) {
      if (!k.startsWith(`${i.accountId}#${i.kind}#`)) continue;
      if (v !== i.jobId || (i.holder !== undefined && this.leases.get(k)!.holder !== i.holder)) continue;
      this.held.delete(k);
      this.leases.delete(k);
    }
  }
  async holders(i: { accountId: string; kind: string; now: Date; takenBefore?: Date }) {
    const live = [...this.held].filter(
      ([k]) => k.startsWith(`${i.accountId}#${i.kind}#`) && this.leases.get(k)!.until >= i.now.getTime() && (!i.takenBefore || this.leases.get(k)!.since < i.takenBefore.getTime()),
    );
    return [...new Set(live.map(([, jobId]) => jobId))];
  }
}

export class RecordingWorkflows implements WorkflowStarter {
  started: { workflow: string; input: Record<string, unknown> }[] = [];
  /** The execution name asked for by each start, in order. */
  names: (string | undefined)[] = [];
  fail: Error | null = null;
  /** Each execution's status by name (a start makes it RUNNING); none: null. */
  statuses = new Map<string, ExecutionStatus>();
  async start(workflow: string, input: Record<string, unknown>, opts?: { name?: string }) {
    if (this.fail) throw this.fail;
    this.started.push({ workflow, input });
    this.names.push(opts?.name);
    if (opts?.name && !this.statuses.has(opts.name)) this.statuses.set(opts.name, 'RUNNING');
    return { executionId: `exec-${this.started.length}` };
  }
  async status(_workflow: string, name: string) {
    return this.statuses.get(name) ?? null;
  }
}

export function memoryWorld(creditsUsd = 5) {
  const clock: Clock = { now: () => new Date() };
  const accounts = new MemoryAccounts();
  const jobs = new MemoryJobs();
  const chargeStore = new MemoryChargeStore(accounts, jobs);
  const account = newAccount({ account_id: 'acct1', email: 'a@example.com', plan_id: 'standard', credits_micros: Math.round(creditsUsd * 1e6), now: clock.now() });
  accounts.accounts.set(account.account_id, account);
  const plans = new MemoryPlans();
  return {
    clock,
    accounts,
    jobs,
    chargeStore,
    account,
    plans,
    plan: plans.plans.get('standard')!,
    files: new MemoryFiles(),
    blobs: new MemoryBlobs(),
    slots: new MemorySlots(),
    commitments: new MemoryCommitments(accounts),
    workflows: new RecordingWorkflows(),
    billing: new Billing(accounts, chargeStore, clock),
  };
}
