import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { configFromEnv } from '../../functions/composition';
import { tempDir } from '../support/temp';

describe('configFromEnv', () => {
  it('reads the long-job share, ignoring values that would make no sense (no share, no pause between tries)', () => {
    expect(configFromEnv({ LONGJOB_RENDERS_PER_ACCOUNT: '3', LONGJOB_DEFER_SECONDS: '12' }).longjobShare).toEqual({ rendersPerAccount: 3, deferSeconds: 12 });
    expect(configFromEnv({ LONGJOB_RENDERS_PER_ACCOUNT: '0', LONGJOB_DEFER_SECONDS: '0' }).longjobShare).toEqual({ rendersPerAccount: undefined, deferSeconds: undefined });
    expect(configFromEnv({ LONGJOB_RENDERS_PER_ACCOUNT: 'many', LONGJOB_DEFER_SECONDS: '' }).longjobShare).toEqual({ rendersPerAccount: undefined, deferSeconds: undefined });
    expect(configFromEnv({ WEBHOOK_DISPATCHES_PER_ACCOUNT: '2.7', WEBHOOK_DEFER_SECONDS: '0.5' }).webhookShare).toEqual({ dispatchesPerAccount: 2, deferSeconds: undefined });
    expect(configFromEnv({}).webhookShare).toEqual({ dispatchesPerAccount: undefined, deferSeconds: undefined });
  });

  it('reads the Stripe API settings of a test double, and refuses values it cannot use rather than calling Stripe itself', () => {
    expect(configFromEnv({ STRIPE_API_HOST: '127.0.0.1', STRIPE_API_PORT: '12111', STRIPE_API_PROTOCOL: 'HTTP' }).stripe).toMatchObject({ apiHost: '127.0.0.1', apiPort: 12111, apiProtocol: 'http' });
    expect(configFromEnv({ STRIPE_API_PORT: '', STRIPE_API_PROTOCOL: '' }).stripe).toMatchObject({ apiPort: undefined, apiProtocol: undefined });
    expect(() => configFromEnv({ STRIPE_API_PROTOCOL: 'ftp' })).toThrow(/STRIPE_API_PROTOCOL must be http or https, not "ftp"/);
    expect(() => configFromEnv({ STRIPE_API_PORT: 'twelve' })).toThrow(/STRIPE_API_PORT must be a port number/);
    for (const port of ['70000', '0', '0x50', '1e3', ' 80 ', '-1']) expect(() => configFromEnv({ STRIPE_API_PORT: port })).toThrow(/STRIPE_API_PORT/);
  });

  it('refuses an ALLOW_PRIVATE_TARGETS entry it cannot use when it reads the settings, not at the first fetch', () => {
    expect(configFromEnv({ ALLOW_PRIVATE_TARGETS: 'localhost:8443, [::1]:8443, 10.1.1.1' }).allowPrivateTargets).toBe('localhost:8443, [::1]:8443, 10.1.1.1');
    expect(configFromEnv({ ALLOW_PRIVATE_TARGETS: '' }).allowPrivateTargets).toBeUndefined();
    for (const bad of ['::1', 'http://localhost', 'localhost:0', 'localhost:70000']) {
      expect(() => configFromEnv({ ALLOW_PRIVATE_TARGETS: bad })).toThrow(/ALLOW_PRIVATE_TARGETS entry/);
    }
  });

  it('refuses a NODE_EXTRA_CA_CERTS file it cannot read when it reads the settings, not at every fetch', () => {
    const dir = tempDir('extra-ca-');
    const file = path.join(dir, 'ca.pem');
    writeFileSync(file, '-----BEGIN CERTIFICATE-----\n');
    expect(configFromEnv({ NODE_EXTRA_CA_CERTS: file }).extraCaFile).toBe(file);
    expect(configFromEnv({ NODE_EXTRA_CA_CERTS: '' }).extraCaFile).toBeUndefined();
    expect(() => configFromEnv({ NODE_EXTRA_CA_CERTS: path.join(dir, 'missing.pem') })).toThrow(/NODE_EXTRA_CA_CERTS names .*missing\.pem.*ENOENT/);
  });
});
