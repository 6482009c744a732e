import type { z } from 'zod';
import { createApiKeyBodySchema } from '../../core/auth/manage-keys';
import { bulkJobFormSchema, bulkJobJsonBodySchema, bulkUploadUrlBodySchema } from '../../core/bulk/requests';
import { longjobBodySchema } from '../../core/conversion/longjob';
import { quickjobBodySchema } from '../../core/conversion/request';
import { jobListQuerySchema } from '../../core/jobs/list';
import { pdfUploadUrlBodySchema } from '../../core/pdfops/background';
import { inspectFormSchema, inspectJsonBodySchema } from '../../core/pdfops/inspect';
import { mergeFormSchema, mergeJsonBodySchema, pdfJobBodySchema, splitFormSchema, splitJsonBodySchema } from '../../core/pdfops/requests';
import { changeSubscriptionBodySchema } from '../../core/subscriptions/service';
import {
  createWebhookBodySchema,
  historyQuerySchema,
  rotateSecretBodySchema,
  updateWebhookBodySchema,
  webhookListQuerySchema,
} from '../../core/webhooks/requests';
import { quickjobImageFormSchema } from '../../core/conversion/image-form';

/** What a route reads from the request besides its path: the same zod schemas its handler validates with. */
export interface RequestSchemas {
  /** An application/json body. */
  json?: z.ZodType;
  /** A multipart/form-data body: its fields, file parts included (shown as binary strings). */
  form?: z.ZodType;
  /** The query string (each property one parameter). */
  query?: z.ZodObject;
  /** The body may be left out altogether (every field has a default). */
  bodyOptional?: boolean;
}

export const REQUEST_SCHEMAS: Record<string, RequestSchemas> = {
  'quickjob.create': { json: quickjobBodySchema, form: quickjobImageFormSchema },
  'longjob.create': { json: longjobBodySchema },
  'bulkjob.uploadUrl': { json: bulkUploadUrlBodySchema },
  'bulkjob.create': { json: bulkJobJsonBodySchema, form: bulkJobFormSchema },
  'pdf.merge': { json: mergeJsonBodySchema, form: mergeFormSchema },
  'pdf.split': { json: splitJsonBodySchema, form: splitFormSchema },
  'pdf.inspect': { json: inspectJsonBodySchema, form: inspectFormSchema },
  'pdf.uploadUrl': { json: pdfUploadUrlBodySchema },
  'pdf.jobs': { json: pdfJobBodySchema },
  'jobs.list': { query: jobListQuerySchema },
  'jobs.webhookHistory': { query: historyQuerySchema },
  'apiKeys.create': { json: createApiKeyBodySchema, bodyOptional: true },
  'subscription.change': { json: changeSubscriptionBodySchema },
  'webhooks.create': { json: createWebhookBodySchema },
  'webhooks.list': { query: webhookListQuerySchema },
  'webhooks.update': { json: updateWebhookBodySchema },
  'webhooks.rotateSecret': { json: rotateSecretBodySchema, bodyOptional: true },
  'webhooks.history': { query: historyQuerySchema },
};

/**
 * POST and PUT routes that read no body (a test keeps every other built POST/PUT route in REQUEST_SCHEMAS).
 * The Stripe webhook's body is Stripe's signed event, checked by its signature rather than by a schema of ours.
 */
export const BODILESS_WRITES = ['jobs.cancel', 'subscription.cancel', 'subscription.resume', 'subscription.portal', 'stripe.webhook'] as const;
