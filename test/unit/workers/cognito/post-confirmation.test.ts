import type { PostConfirmationTriggerEvent } from 'aws-lambda';
import { type Services, setServices } from '../../../../functions/composition';
import { handler } from '../../../../functions/workers/cognito/post-confirmation';
import { MemoryAccounts } from '../../../support/memory';

afterEach(() => setServices(null));

const trigger = (triggerSource: string, attributes: Record<string, string>) =>
  ({ triggerSource, request: { userAttributes: attributes }, response: {} }) as unknown as PostConfirmationTriggerEvent;

describe('Cognito post-confirmation trigger', () => {
  it('opens the pending account of a confirmed sign-up and hands Cognito its event back', async () => {
    const accounts = new MemoryAccounts();
    setServices({ accounts, clock: { now: () => new Date('2026-11-24T12:00:00Z') } } as unknown as Services);
    const event = trigger('PostConfirmation_ConfirmSignUp', { sub: 'sub-1', email: 'new@example.com' });
    // Cognito fails the confirmation unless the trigger returns its event.
    expect(await handler(event)).toBe(event);
    expect(await accounts.get('sub-1')).toMatchObject({ account_id: 'sub-1', email: 'new@example.com', plan_id: null });
  });

  it('opens nothing on the other event it fires for, a confirmed password reset: only a sign-up opens an account', async () => {
    const accounts = new MemoryAccounts();
    setServices({ accounts, clock: { now: () => new Date('2026-11-24T12:00:00Z') } } as unknown as Services);
    const event = trigger('PostConfirmation_ConfirmForgotPassword', { sub: 'sub-2', email: 'reset@example.com' });
    expect(await handler(event)).toBe(event);
    expect(await accounts.get('sub-2')).toBeNull();
  });
});
