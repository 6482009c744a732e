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

/** Inspect is free and serves the editor too: any paid plan with the PDF tools or the editor may use it. */
export async function requireInspect(plans: PlanRepository, account: Account): Promise<Plan> {
  const plan = await requirePaidPlan(plans, account);
  if (!plan.pdf_tools_enabled && !plan.pdf_editor_enabled) {
    throw new ServiceError('PDF_TOOLS_NOT_ENABLED', `The PDF tools are not part of the ${plan.name} plan. Upgrade the plan to inspect PDFs.`, { plan_id: plan.plan_id });
  }
  return plan;
}
