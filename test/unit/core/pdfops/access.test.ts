import { newAccount } from '../../../../functions/core/accounts/account';
import { requirePdfTools, requireToolsOrEditor } from '../../../../functions/core/pdfops/access';
import { rejection } from '../../../support/errors';
import { MemoryPlans } from '../../../support/memory';

/** A plan of the catalogue with only the given PDF features, and an active account on it. */
async function accountOn(features: { pdf_tools_enabled: boolean; pdf_editor_enabled: boolean }) {
  const plans = new MemoryPlans();
  const standard = (await plans.get('standard'))!;
  await plans.put([{ ...standard, plan_id: 'custom', name: 'Custom', ...features }]);
  const account = newAccount({ account_id: 'acct1', email: 'a@example.com', plan_id: 'custom', credits_micros: 0, now: new Date() });
  return { plans, account };
}

describe('PDF route access by plan', () => {
  it('lets an editor-only plan inspect and upload (the editor opens uploads), but not merge or split', async () => {
    const { plans, account } = await accountOn({ pdf_tools_enabled: false, pdf_editor_enabled: true });
    await expect(requireToolsOrEditor(plans, account, 'inspect PDFs')).resolves.toMatchObject({ plan_id: 'custom' });
    expect(await rejection(requirePdfTools(plans, account))).toMatchObject({ code: 'PDF_TOOLS_NOT_ENABLED', details: { plan_id: 'custom' } });
  });

  it('refuses a plan with neither the tools nor the editor PDF_TOOLS_NOT_ENABLED, naming what was refused', async () => {
    const { plans, account } = await accountOn({ pdf_tools_enabled: false, pdf_editor_enabled: false });
    const err = await rejection(requireToolsOrEditor(plans, account, 'inspect PDFs'));
    expect(err).toMatchObject({ code: 'PDF_TOOLS_NOT_ENABLED', details: { plan_id: 'custom' } });
    expect(err.message).toContain('inspect PDFs');
  });

  it('lets a tools plan do both', async () => {
    const { plans, account } = await accountOn({ pdf_tools_enabled: true, pdf_editor_enabled: false });
    await expect(requireToolsOrEditor(plans, account, 'inspect PDFs')).resolves.toBeTruthy();
    await expect(requirePdfTools(plans, account)).resolves.toBeTruthy();
  });
});
