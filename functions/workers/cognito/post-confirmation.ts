import type { PostConfirmationTriggerEvent } from 'aws-lambda';
import { openPendingAccount } from '../../core/accounts/signup';
import { readyServices } from '../../composition';

/** Cognito post-confirmation trigger: creates the pending account of a newly confirmed user. */
export async function handler(event: PostConfirmationTriggerEvent): Promise<PostConfirmationTriggerEvent> {
  if (event.triggerSource !== 'PostConfirmation_ConfirmSignUp') return event;
  const svc = await readyServices();
  const { sub, email } = event.request.userAttributes;
  await openPendingAccount(svc.accounts, { sub, email: email ?? '', now: svc.clock.now() });
  return event;
}
