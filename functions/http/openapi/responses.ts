import { z } from 'zod';
import { SUBSCRIPTION_STATUSES } from '../../core/accounts/account';
import { CONVERSION_TYPES } from '../../core/billing/plans';
import { JOB_STATUSES, JOB_TYPES } from '../../core/jobs/job';
import { EVENT_TYPES } from '../../core/events/events';
import { RETRY_DELAYS_MS } from '../../core/webhooks/delivery';
import { DELIVERY_STATUSES } from '../../core/webhooks/requests';
import { ERROR_CODES } from '../errors';

/**
 * Response bodies as zod schemas: they write the OpenAPI document's responses and, with RESPONSE_CONTRACT=strict
 * (the test stack), every JSON answer is checked against them, so a presenter that drifts fails the tests.
 * Objects are strict: a field added to a presenter must be documented here too.
 */

const timestamp = z.iso.datetime({ offset: true }).meta({ description: 'ISO 8601 time (UTC).' });
const usd = z.number().min(0).meta({ description: 'US dollars, exact to the micro-dollar (integer micro-USD inside; prices per PDF go below a cent, e.g. 0.0025).' });
const count = z.number().int().min(0);
const nextToken = z.string().nullable().meta({ description: 'Pass as next_token for the next page; null on the last page.' });

/**
 * The `details` of the codes whose facts document 1 and 2 name, as the service sends them (functions/core: the
 * ServiceError constructions). Open objects: a refusal may add facts (e.g. `job_id` once a quick job exists), never
 * leave these out. The contract check holds every such refusal to its schema; the document says it per code.
 */
export const ERROR_DETAILS: Record<string, z.ZodType> = {
  INSUFFICIENT_CREDITS: z
    .looseObject({
      current_balance: usd.meta({ description: 'The one-off credit balance (credits_balance).' }),
      required_amount: usd.meta({ description: 'What the request or the whole job needs.' }),
      subscription_credits_remaining: usd,
      free_credits_remaining: usd,
      action_required: z.literal('purchase_credits'),
      committed_to_running_jobs: usd.optional().meta({ description: 'Bulk and background PDF jobs: balance already set aside for other running jobs.' }),
      running_jobs: z.array(z.string()).optional().meta({ description: 'With committed_to_running_jobs: those jobs.' }),
    })
    .meta({ id: 'InsufficientCreditsDetails' }),
  QUICKJOB_TIMEOUT: z
    .looseObject({
      job_id: z.string().meta({ description: 'The timed-out job (status timeout).' }),
      timeout_seconds: z.number().int().min(1).meta({ description: "The limit that was passed: 30, or less where API Gateway's integration timeout is shorter (27 s with its default 29 s)." }),
      suggestion: z.literal('use_longjob_endpoint'),
    })
    .meta({ id: 'QuickjobTimeoutDetails' }),
  RATE_LIMIT_EXCEEDED: z
    .looseObject({
      retry_after: z.number().int().min(1).meta({ description: 'Seconds until the plan allows another request.' }),
      limit_per_minute: count,
    })
    .meta({ id: 'RateLimitExceededDetails' }),
  CONVERSION_TYPE_NOT_ENABLED: z
    .looseObject({
      enabled_types: z.array(z.enum(CONVERSION_TYPES)).meta({ description: "The plan's enabled_conversion_types." }),
      input_type: z.string().meta({ description: 'The refused input type (or bundle_type).' }),
      plan_id: z.string(),
    })
    .meta({ id: 'ConversionTypeNotEnabledDetails' }),
  WEBHOOK_LIMIT_EXCEEDED: z
    .looseObject({
      plan_id: z.string().nullable().meta({ description: 'null for an account without a plan (it has the default limit).' }),
      plan_type: z.string().nullable(),
      current_count: count,
      max_allowed: count,
      upgrade_required: z.boolean().meta({ description: 'true when an active plan allows more webhooks.' }),
    })
    .meta({ id: 'WebhookLimitExceededDetails' }),
  INVALID_PAGE_RANGE: z
    .looseObject({
      token: z.string().meta({ description: 'The part of the range that is not valid, as sent.' }),
      parameter: z.string().optional().meta({ description: 'Where the range was sent, e.g. inputs[1].pages.' }),
    })
    .meta({ id: 'InvalidPageRangeDetails' }),
  PAGE_OUT_OF_RANGE: z
    .looseObject({
      total_pages: count.meta({ description: 'Pages in the document.' }),
      token: z.string().meta({ description: 'The part of the range past the end.' }),
      page: z.number().int().min(1).optional().meta({ description: 'The first page past the end (left out when the number is too large to give exactly).' }),
    })
    .meta({ id: 'PageOutOfRangeDetails' }),
  URL_FETCH_HTTP_ERROR: z
    .looseObject({
      status_code: z.number().int().meta({ description: "The remote server's HTTP status." }),
      url: z.string().meta({ description: 'The URL that answered it (after redirects).' }),
    })
    .meta({ id: 'UrlFetchHttpErrorDetails' }),
};

export const errorCodeSchema = z
  .enum(ERROR_CODES as [string, ...string[]])
  .meta({ id: 'ErrorCode', description: 'Stable error code. Each error status lists the codes it carries (functions/http/errors.ts).' });

export const errorBodySchema = z
  .strictObject({
    error: z
      .strictObject({
        code: errorCodeSchema,
        message: z.string().min(1).meta({ description: 'What went wrong and what to do, for people.' }),
        details: z
          .record(z.string(), z.unknown())
          .meta({ description: 'Machine-readable facts about this refusal. The codes with a <Code>Details schema (this object\'s if/then on code) always send its fields.' }),
      })
      .superRefine((error, ctx) => {
        const schema = ERROR_DETAILS[error.code];
        const parsed = schema?.safeParse(error.details);
        for (const issue of parsed?.error?.issues ?? []) ctx.addIssue({ code: 'custom', path: ['details', ...issue.path], message: `${error.code}: ${issue.message}` });
      }),
  })
  .meta({ id: 'Error' });

export const jobSchema = z
  .strictObject({
    job_id: z.string(),
    status: z.enum(JOB_STATUSES),
    job_type: z.enum(JOB_TYPES),
    mode: z.string().nullable().meta({ description: 'What was converted (html, markdown, url, image) or the PDF operation.' }),
    pages: count.nullable(),
    truncated: z.boolean(),
    created_at: timestamp,
    completed_at: timestamp.nullable(),
    timeout_occurred: z.boolean(),
    error_message: z.string().nullable(),
    error_code: z.string().nullable(),
    s3_url: z.url().optional().meta({ description: 'One-hour link to the stored output, while it is kept.' }),
    s3_url_expires_at: timestamp.optional(),
    // Bulk jobs
    bundle_type: z.string().optional(),
    file_count: count.nullable().optional(),
    processed_count: count.optional(),
    success_count: count.optional(),
    failure_count: count.optional(),
    pages_total: count.optional(),
    cancel_requested: z.boolean().optional(),
    // Merge/split jobs
    operation: z.enum(['merge', 'split']).optional(),
    split_mode: z.string().nullable().optional(),
    input_files: count.optional(),
    input_pages: count.optional(),
    outputs_produced: count.optional(),
    output_count: count.nullable().optional(),
    // Mail merge campaigns (document 2; the campaign routes are not built yet: 501, so no such job exists today).
    campaign_name: z.string().optional().meta({ description: 'mailmerge jobs' }),
    valid_row_count: count.optional().meta({ description: 'mailmerge jobs' }),
    sent_count: count.optional().meta({ description: 'mailmerge jobs: emails the server accepted.' }),
    failed_count: count.optional().meta({ description: 'mailmerge jobs' }),
    rejected_count: count.optional().meta({ description: 'mailmerge jobs' }),
    unconfirmed_count: count.optional().meta({ description: 'mailmerge jobs: connection dropped after sending; possibly delivered, never resent.' }),
    skipped_count: count.optional().meta({ description: 'mailmerge jobs' }),
    report_available: z.boolean().optional().meta({ description: 'mailmerge jobs: the CSV report can be fetched (GET /jobs/{job_id}/download).' }),
  })
  .meta({ id: 'Job', description: 'A job. Bulk, merge/split and mail merge jobs carry their extra fields.' });

export const jobDownloadSchema = z
  .strictObject({
    job_id: z.string(),
    download_url: z.url(),
    expires_at: timestamp,
    expires_in_seconds: z.literal(3600),
    content_type: z.string(),
    size_bytes: count,
  })
  .meta({ id: 'JobDownload' });

export const jobSummarySchema = z
  .strictObject({
    job_id: z.string(),
    status: z.enum(JOB_STATUSES),
    job_type: z.enum(JOB_TYPES),
    bundle_type: z.string().nullable(),
    file_count: count.nullable(),
    success_count: count.nullable(),
    failure_count: count.nullable(),
    pages_total: count.nullable(),
    created_at: timestamp,
    completed_at: timestamp.nullable(),
  })
  .meta({ id: 'JobSummary' });

const storedQuickJob = z
  .strictObject({
    job_id: z.string(),
    pages: count,
    truncated: z.boolean(),
    download_url: z.url().nullable().meta({ description: 'One-hour link; null when storing the PDF failed (the job is completed but not charged: the PDF cannot be fetched).' }),
    download_url_expires_at: timestamp.nullable(),
  })
  .meta({
    id: 'StoredQuickJob',
    description: 'With "store": true, or when the PDF is over 4.4 MB (too large for a Lambda response once encoded). Otherwise the answer is the PDF itself.',
  });

const acceptedLongJob = z
  .strictObject({ job_id: z.string(), status: z.literal('queued'), message: z.string(), estimated_completion: timestamp })
  .meta({ id: 'AcceptedLongJob' });

const subscription = z.strictObject({
  subscription_id: z.string(),
  status: z.enum(SUBSCRIPTION_STATUSES).meta({ description: "The payment provider's status in the spec's five values (unpaid and incomplete show as past_due)." }),
  name: z.string(),
  price_id: z
    .string()
    .nullable()
    .meta({ description: "The payment provider's price id. null only for a subscription made by the local stand-in (POST /_local/accounts) whose name is no catalogued plan; never in AWS." }),
  price: usd,
  monthly_pdfs: count,
  credits_remaining: usd,
  pdfs_remaining: count,
  period_start: timestamp,
  period_end: timestamp,
  active: z.boolean(),
  scheduled_change: z
    .strictObject({
      action: z.enum(['cancel', 'pause', 'downgrade']),
      effective_at: timestamp,
      price_id: z.string().optional().meta({ description: 'downgrade only' }),
      name: z.string().optional().meta({ description: 'downgrade only' }),
      monthly_pdfs: count.optional().meta({ description: 'downgrade only' }),
    })
    .nullable()
    .meta({ description: 'A change that takes effect at the end of the period, or null.' }),
});

const billing = z
  .strictObject({
    plan_id: z.string().meta({ description: 'The plan in effect; "pending" while the account has neither a pack nor a subscription.' }),
    plan_type: z.string(),
    monthly_quota: count.nullable(),
    credits_balance: usd,
    free_credits_remaining: usd,
    subscription_credits_remaining: usd,
    subscription_pdfs_remaining: count,
    subscription: subscription.nullable(),
    total_pdf_count: count,
    total_amount: usd,
    price_per_pdf: usd,
  })
  .meta({ id: 'BillingSummary' });

const account = z
  .strictObject({
    account_id: z.string(),
    email: z.string(),
    status: z.string(),
    plan_id: z.string().nullable(),
    plan_name: z.string().nullable(),
    created_at: timestamp,
    credential: z.strictObject({ type: z.enum(['api_key', 'id_token']), api_key_id: z.string().nullable() }),
    billing,
    settings: z.strictObject({ email_notifications: z.boolean() }),
    mailmerge: z.strictObject({ max_rows: count }),
  })
  .meta({ id: 'Account' });

const apiKey = z
  .strictObject({ api_key_id: z.string(), name: z.string(), prefix: z.string(), created_at: timestamp, last_used_at: timestamp.nullable() })
  .meta({ id: 'ApiKey', description: 'Never the key itself, except once when it is created.' });

const webhook = z
  .strictObject({
    webhook_id: z.string(),
    name: z.string(),
    url: z.url(),
    events: z.array(z.enum(EVENT_TYPES)),
    is_active: z.boolean(),
    signing_enabled: z.boolean(),
    secret: z.string().optional().meta({ description: 'The signing secret: only in the answer that created or rotated it.' }),
    previous_secret_expires_at: timestamp
      .optional()
      .meta({ description: 'When the rotated-out secret stops signing; present only while it still signs (after a rotation with a grace period, until then).' }),
    created_at: timestamp,
    updated_at: timestamp,
    last_triggered_at: timestamp.nullable().meta({ description: 'When the latest delivery series started (set as it starts, before its first attempt); null before any.' }),
    last_success_at: timestamp.nullable(),
    last_failure_at: timestamp.nullable(),
    success_count: count,
    failure_count: count,
  })
  .meta({ id: 'Webhook' });

const delivery = z
  .strictObject({
    delivery_id: z.string(),
    webhook_id: z.string(),
    job_id: z.string().meta({ description: 'The job whose event was delivered (every delivery is of a job event).' }),
    event_type: z.enum(EVENT_TYPES),
    status: z.enum(DELIVERY_STATUSES),
    status_code: z.number().int().optional(),
    error_message: z.string().optional(),
    retry_count: count.max(RETRY_DELAYS_MS.length).meta({ description: `Retries after the first attempt (at most ${RETRY_DELAYS_MS.length}).` }),
    delivered_at: timestamp,
    duration_ms: count,
    payload_size_bytes: count,
  })
  .meta({ id: 'WebhookDelivery' });

const subscriptionBody = z.strictObject({ subscription: subscription.nullable() });

const plan = z
  .strictObject({
    plan_id: z.string(),
    name: z.string(),
    plan_type: z.string(),
    active: z.boolean(),
    price_per_pdf: usd,
    price_per_pdf_operation: usd,
    monthly_price: usd.nullable(),
    monthly_quota: count.nullable(),
    monthly_pdfs: count.nullable(),
    price_id: z.string().nullable(),
    enabled_conversion_types: z.array(z.string()),
    bulk_enabled: z.boolean(),
    max_bulk_pages_per_job: count.nullable(),
    max_bulk_zip_mb: count.nullable(),
    pdf_tools_enabled: z.boolean(),
    pdf_editor_enabled: z.boolean(),
    mailmerge_enabled: z.boolean(),
    rate_limit_per_minute: count.nullable(),
    max_webhooks: count.nullable(),
  })
  .meta({ id: 'Plan' });

const offer = z
  .strictObject({
    plan_id: z.string(),
    price_id: z.string().nullable(),
    name: z.string(),
    price: usd,
    currency: z.literal('USD'),
    interval: z.literal('month'),
    monthly_pdfs: count,
    price_per_pdf: usd,
  })
  .meta({ id: 'SubscriptionOffer' });

const uploadUrl = z
  .strictObject({
    upload_url: z.url().meta({ description: 'PUT the file here within 15 minutes: exactly the announced number of bytes, with required_headers and no service credential.' }),
    s3_key: z.string().meta({ description: 'Name the upload by this key in the job request.' }),
    expires_at: timestamp,
    max_bytes: count,
    required_headers: z.record(z.string(), z.string()),
  })
  .meta({ id: 'UploadUrl' });

const acceptedJob = (jobType: 'bulk' | 'pdfop', extra: z.ZodRawShape) =>
  z.strictObject({ job_id: z.string(), status: z.literal('queued'), job_type: z.literal(jobType), ...extra, message: z.string() });

const fileRow = z
  .strictObject({
    index: count,
    input: z.string().meta({ description: 'Input path or file name (merge: the input names in merge order).' }),
    output: z.string().nullable().meta({ description: 'Output file name; null when nothing was produced.' }),
    status: z.enum(['success', 'failed', 'skipped']),
    pages: count,
    error_code: z.string().nullable(),
    error_message: z.string().nullable(),
    blocked_requests: count,
    render_timeout: z.boolean(),
    missing_assets: count,
    page_range: z.string().nullable().optional().meta({ description: 'Merge/split rows: the pages this output holds.' }),
    size_bytes: count.optional(),
    warnings: z.array(z.string()).optional(),
  })
  .meta({ id: 'JobFile' });

const pdfOperationResult = z
  .strictObject({
    job_id: z.string(),
    operation: z.enum(['pdf_merge', 'pdf_split']),
    status: z.literal('completed'),
    input_pages: count,
    output_count: count,
    outputs: z.array(
      z.strictObject({
        index: count,
        name: z.string(),
        pages: count,
        page_range: z.string().meta({ description: 'The pages of the input(s) this output holds.' }),
        size_bytes: count,
        warnings: z.array(z.string()),
        download_url: z.url().meta({ description: 'One-hour link. Outputs are stored before the answer: a failed upload is a 500 (nothing charged), never a missing link.' }),
      }),
    ),
    zip_url: z.url().nullable().meta({ description: 'A multi-file split as one ZIP.' }),
    download_url_expires_at: timestamp,
    warnings: z.array(z.string()),
  })
  .meta({ id: 'PdfOperationResult', description: 'Stored outputs (with "store": true, several outputs, or a large one); otherwise the PDF itself.' });

const credits = z
  .strictObject({
    credits: z.strictObject({
      credits_balance: usd,
      free_credits_remaining: usd,
      subscription_credits_remaining: usd,
      subscription_pdfs_remaining: count,
      total_available: usd,
      pdfs_available: count.meta({ description: 'PDFs the balances pay for (one bucket covers a whole charge).' }),
      price_per_pdf: usd,
      currency: z.literal('USD'),
      bucket_order: z.array(z.enum(['subscription', 'free_credits', 'credits'])).meta({ description: 'The order charges draw on the balances.' }),
    }),
    packs: z.array(z.strictObject({ price_id: z.string(), amount: usd, currency: z.literal('USD'), pdfs: count })),
    purchases: z.array(z.strictObject({ purchase_id: z.string(), amount: usd, source: z.string(), reference: z.string(), created_at: timestamp, revoked: usd.meta({ description: 'Credits taken back by refunds and lost disputes of the payment (0 when none).' }) })),
  })
  .meta({ id: 'Credits' });

const pageBox = { width: z.number().min(0), height: z.number().min(0) };
const inspection = z
  .strictObject({
    filename: z.string(),
    size_bytes: count,
    page_count: count.nullable().meta({ description: 'null for an encrypted file.' }),
    encrypted: z.boolean(),
    has_forms: z.boolean(),
    has_signatures: z.boolean(),
    first_page: z.strictObject(pageBox).nullable().meta({ description: 'The visible box of page 1 in points.' }),
    warnings: z.array(z.string()).meta({ description: 'What merging or splitting this file would lose (form fields, bookmarks, signatures).' }),
    max_pages: count,
    pages: z
      .array(z.strictObject({ id: z.string(), rotation: z.union([z.literal(0), z.literal(90), z.literal(180), z.literal(270)]), ...pageBox }))
      .nullable()
      .optional()
      .meta({ description: 'With "for": "edit".' }),
    form: z
      .array(
        z.strictObject({
          name: z.string(),
          type: z.enum(['text', 'checkbox', 'radio', 'dropdown', 'listbox', 'signature', 'button', 'unknown']),
          value: z.union([z.string(), z.boolean(), z.array(z.string()), z.null()]),
          options: z.array(z.string()).nullable(),
          required: z.boolean(),
          read_only: z.boolean(),
          page: z.number().int().min(1).nullable(),
          page_id: z.string().nullable(),
          max_length: count.optional(),
        }),
      )
      .nullable()
      .optional()
      .meta({ description: 'With "for": "edit": the form fields.' }),
  })
  .meta({ id: 'PdfInspection' });

const history = z.strictObject({ history: z.array(delivery), count, next_token: nextToken });

/**
 * What a webhook delivers (document 2, Events): the job's fields at the event, per kind. One strict object, so a field
 * added to an event must be documented here; the webhook integration tests hold every delivery to it.
 */
export const webhookPayloadSchema = z
  .strictObject({
    event: z.enum(EVENT_TYPES),
    event_id: z.string().meta({ description: 'Unique per event; the same across retries (use it to drop duplicates).' }),
    timestamp: timestamp.meta({ description: 'When the event happened.' }),
    job_id: z.string(),
    status: z.enum(JOB_STATUSES),
    job_type: z.enum(JOB_TYPES),
    mode: z.string().nullable(),
    created_at: timestamp,
    started_at: timestamp.nullable().optional().meta({ description: 'job.processing' }),
    pages: count.nullable().optional().meta({ description: 'job.completed' }),
    truncated: z.boolean().optional().meta({ description: 'job.completed' }),
    completed_at: timestamp.nullable().optional().meta({ description: 'job.completed and bulk.job.*' }),
    failed_at: timestamp.optional().meta({ description: 'job.failed' }),
    error_code: z.string().nullable().optional().meta({ description: 'job.failed and bulk.job.*' }),
    error_message: z.string().nullable().optional().meta({ description: 'job.failed and bulk.job.*' }),
    s3_url: z.url().nullable().optional().meta({ description: 'job.completed and bulk.job.*: a fresh one-hour link to the output; null when nothing is stored.' }),
    s3_url_expires_at: timestamp.nullable().optional(),
    report_url: z.url().nullable().optional().meta({ description: 'mailmerge.campaign.*: a one-hour link to the campaign report.' }),
    bundle_type: z.string().nullable().optional().meta({ description: 'bulk.job.*' }),
    file_count: count.nullable().optional().meta({ description: 'bulk.job.*' }),
    processed_count: count.nullable().optional().meta({ description: 'bulk.job.*' }),
    success_count: count.optional().meta({ description: 'bulk.job.*' }),
    failure_count: count.optional().meta({ description: 'bulk.job.*' }),
    pages_total: count.optional().meta({ description: 'bulk.job.*' }),
    files_url: z.string().optional().meta({ description: 'bulk.job.* and merge/split jobs: the per-file results route.' }),
    operation: z.enum(['merge', 'split']).optional().meta({ description: 'merge/split jobs (job_type pdfop)' }),
    input_pages: count.optional().meta({ description: 'merge/split job.completed' }),
    output_count: count.optional().meta({ description: 'merge/split job.completed' }),
    warnings: z.array(z.string()).optional().meta({ description: 'merge/split job.completed: what the operation could not keep.' }),
    // Mail merge campaigns (document 2; the campaign routes are not built yet, so none is delivered today).
    campaign_id: z.string().optional().meta({ description: 'mailmerge.campaign.*' }),
    campaign_name: z.string().optional().meta({ description: 'mailmerge.campaign.*' }),
    sent_count: count.optional().meta({ description: 'mailmerge.campaign.*: emails sent (before a cancel, for cancelled).' }),
    failed_count: count.optional().meta({ description: 'mailmerge.campaign.*' }),
    rejected_count: count.optional().meta({ description: 'mailmerge.campaign.*' }),
    unconfirmed_count: count.optional().meta({ description: 'mailmerge.campaign.*' }),
    skipped_count: count.optional().meta({ description: 'mailmerge.campaign.*' }),
    // job.timeout: subscribable, never delivered (document 2); its reserved shape adds these two.
    timeout_seconds: z.number().int().min(1).optional().meta({ description: 'job.timeout (reserved; never delivered)' }),
    timeout_at: timestamp.optional().meta({ description: 'job.timeout (reserved; never delivered)' }),
  })
  .meta({ id: 'WebhookPayload', description: 'job.timeout is subscribable but never delivered (quick-job timeouts answer 408 on the request).' });

const cancelled = z
  .strictObject({ job_id: z.string(), status: z.literal('cancelled'), cancel_requested: z.literal(true), message: z.string() })
  .meta({ id: 'CancelledJob', description: 'A queued job, cancelled at once (or one cancelled before); nothing charged.' });
const cancelRequested = z
  .strictObject({ job_id: z.string(), status: z.literal('processing'), cancel_requested: z.literal(true), message: z.string() })
  .meta({ id: 'CancelRequested', description: 'A running job, asked to stop before its next file.' });

/** The OpenAPI document itself (GET /openapi.json). */
const openApi = z
  .looseObject({
    openapi: z.string().startsWith('3.1.'),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.record(z.string(), z.record(z.string(), z.unknown())),
  })
  .meta({ id: 'OpenApiDocument', description: 'This document: an OpenAPI 3.1 object (https://spec.openapis.org/oas/v3.1.0).' });

/** Routes whose success statuses have bodies of their own; RESPONSE_SCHEMAS holds any of them. */
export const RESPONSE_SCHEMAS_BY_STATUS: Record<string, Record<number, z.ZodType>> = {
  'jobs.cancel': { 200: cancelled, 202: cancelRequested },
};

/** The body a route answers with a success status (JSON), if documented. */
export function successSchema(routeId: string, status: number): z.ZodType | undefined {
  return RESPONSE_SCHEMAS_BY_STATUS[routeId]?.[status] ?? RESPONSE_SCHEMAS[routeId];
}

/** The success body of each route that answers JSON. */
export const RESPONSE_SCHEMAS: Record<string, z.ZodType> = {
  'quickjob.create': storedQuickJob,
  'longjob.create': acceptedLongJob,
  'jobs.get': jobSchema,
  'jobs.download': jobDownloadSchema,
  'jobs.list': z.strictObject({ jobs: z.array(jobSummarySchema), next_token: nextToken, count }),
  'me.get': account,
  'account.get': account,
  'account.billing': z.strictObject({ billing }),
  'apiKeys.create': apiKey.extend({ api_key: z.string().startsWith('pk_').meta({ description: 'The key: shown only in this answer.' }), message: z.string() }),
  'apiKeys.list': z.strictObject({ api_keys: z.array(apiKey), count }),
  'apiKeys.revoke': z.strictObject({ api_key_id: z.string(), revoked: z.literal(true) }),
  'webhooks.create': z.strictObject({ webhook }),
  'webhooks.get': z.strictObject({ webhook }),
  'webhooks.update': z.strictObject({ webhook }),
  'webhooks.rotateSecret': z.strictObject({ webhook }),
  'webhooks.delete': z.strictObject({ webhook_id: z.string(), deleted: z.literal(true) }),
  'webhooks.list': z.strictObject({ webhooks: z.array(webhook), count, next_token: nextToken }),
  'webhooks.history': history.extend({ webhook_id: z.string() }),
  'jobs.webhookHistory': history.extend({ job_id: z.string() }),
  'plans.list': z.strictObject({ plans: z.array(plan), count }),
  'plans.get': z.strictObject({ plan }),
  'subscription.plans': z.strictObject({ plans: z.array(offer), count }),
  'subscription.get': subscriptionBody,
  'subscription.cancel': subscriptionBody,
  'subscription.resume': subscriptionBody,
  'subscription.portal': z.strictObject({ url: z.url() }),
  'bulkjob.uploadUrl': uploadUrl,
  'pdf.uploadUrl': uploadUrl,
  'bulkjob.create': acceptedJob('bulk', { bundle_type: z.string() }),
  'pdf.jobs': acceptedJob('pdfop', { operation: z.enum(['merge', 'split']) }),
  'jobs.files': z.strictObject({ job_id: z.string(), status: z.enum(JOB_STATUSES), bundle_type: z.string().nullable(), count, files: z.array(fileRow) }),
  'jobs.fileDownload': jobDownloadSchema.extend({ file_index: count, name: z.string().nullable() }),
  'jobs.cancel': z.union([cancelled, cancelRequested]),
  'pdf.merge': pdfOperationResult,
  'pdf.split': pdfOperationResult,
  'account.credits': credits,
  'pdf.inspect': inspection,
  'subscription.change': subscriptionBody.extend({
    change: z.enum(['upgraded', 'downgrade_scheduled', 'downgrade_cancelled', 'unchanged']),
  }),
  'openapi.get': openApi,
};

/**
 * JSON answers without a schema: Stripe's acknowledgement (read by Stripe, not by clients).
 * A test fails when a built route is in neither list, so a new route cannot go undocumented unnoticed.
 */
export const UNDESCRIBED_RESPONSES = [
  'stripe.webhook',
] as const;
