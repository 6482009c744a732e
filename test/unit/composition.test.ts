import { configFromEnv } from '../../functions/composition';

describe('configFromEnv', () => {
  it('reads the long-job share, ignoring values that would make no sense (no share, no pause between tries)', () => {
    expect(configFromEnv({ LONGJOB_RENDERS_PER_ACCOUNT: '3', LONGJOB_DEFER_SECONDS: '12' }).longjobShare).toEqual({ rendersPerAccount: 3, deferSeconds: 12 });
    expect(configFromEnv({ LONGJOB_RENDERS_PER_ACCOUNT: '0', LONGJOB_DEFER_SECONDS: '0' }).longjobShare).toEqual({ rendersPerAccount: undefined, deferSeconds: undefined });
    expect(configFromEnv({ LONGJOB_RENDERS_PER_ACCOUNT: 'many', LONGJOB_DEFER_SECONDS: '' }).longjobShare).toEqual({ rendersPerAccount: undefined, deferSeconds: undefined });
  });
});
