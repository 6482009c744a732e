import type { Services } from '../../composition';
import type { WebhookDeps } from '../../core/webhooks/manage';
import { ScopedPageTokens } from '../../core/validation/page-tokens';

export function webhookDeps(svc: Services): WebhookDeps {
  return { webhooks: svc.webhooks, plans: svc.plans, guard: svc.guard, clock: svc.clock };
}

/** Page tokens of the webhook list (`webhooks.v1`) and of both history routes (`webhook-history.v1`). */
export function pageTokens(svc: Services, purpose: 'webhooks.v1' | 'webhook-history.v1'): ScopedPageTokens {
  return new ScopedPageTokens(svc.paginationSecret, purpose);
}
