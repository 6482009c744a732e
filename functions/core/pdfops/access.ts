import type { Account } from '../accounts/account';
import { requirePaidPlan } from '../accounts/entitlements';
import type { PlanRepository } from '../accounts/ports';
import type { Plan } from '../billing/plans';
import { ServiceError } from '../errors';

/** Every merge/split route: 402 UPGRADE_REQUIRED for a pending account, 403 PDF_TOOLS_NOT_ENABLED by plan. */
export async function requirePdfTools(plans: PlanRepository, account: Account): Promise<Plan> {
  const plan = await requirePaidPlan(plans, account);
  if (!plan.pdf_tools_enabled) {
    throw new ServiceError('PDF_TOOLS_NOT_ENABLED', `Merge and split are not part of the ${plan.name} plan. Upgrade the plan to use the PDF tools.`, { plan_id: plan.plan_id });
  }
  return plan;
}

/**
 * Inspect (free) and PDF uploads serve the editor too (its `source_key` is an upload): any paid plan with the PDF
 * tools or the editor may use them. `use` says what was refused, e.g. "inspect PDFs".
 */
export async function requireToolsOrEditor(plans: PlanRepository, account: Account, use: string): Promise<Plan> {
  const plan = await requirePaidPlan(plans, account);
  if (!plan.pdf_tools_enabled && !plan.pdf_editor_enabled) {
    throw new ServiceError('PDF_TOOLS_NOT_ENABLED', `Neither the PDF tools nor the PDF editor are part of the ${plan.name} plan. Upgrade the plan to ${use}.`, { plan_id: plan.plan_id });
  }
  return plan;
}
