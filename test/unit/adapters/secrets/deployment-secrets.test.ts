import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { loadDeploymentSecrets } from '../../../../functions/adapters/secrets/deployment-secrets';

describe('loadDeploymentSecrets', () => {
  const stripe = JSON.stringify({ secret_key: 'sk_live_1', webhook_secret: 'whsec_2' });

  it('reads each configured secret once into the setting it names, one JSON field or the whole value', async () => {
    const env: NodeJS.ProcessEnv = {
      STRIPE_SECRET_KEY_SECRET_ID: 'pdf-service/stripe',
      STRIPE_SECRET_KEY_SECRET_FIELD: 'secret_key',
      STRIPE_WEBHOOK_SECRET_SECRET_ID: 'pdf-service/stripe',
      STRIPE_WEBHOOK_SECRET_SECRET_FIELD: 'webhook_secret',
      PAGINATION_SECRET_SECRET_ID: 'arn:aws:secretsmanager:eu-west-1:1:secret:Pagination-AbCdEf',
      TABLE_NAME: 'pdf',
    };
    const read = jest.fn(async (id: string) => (id === 'pdf-service/stripe' ? stripe : 'p4g1n4t10n'));
    await loadDeploymentSecrets(env, read);
    expect(env).toMatchObject({ STRIPE_SECRET_KEY: 'sk_live_1', STRIPE_WEBHOOK_SECRET: 'whsec_2', PAGINATION_SECRET: 'p4g1n4t10n', TABLE_NAME: 'pdf' });
    expect(read.mock.calls.map(([id]) => id).sort()).toEqual(['arn:aws:secretsmanager:eu-west-1:1:secret:Pagination-AbCdEf', 'pdf-service/stripe']);
  });

  it('reads nothing where no secret is configured (the local stack, tests)', async () => {
    const env: NodeJS.ProcessEnv = { PAGINATION_SECRET: 'local', TABLE_NAME: 'pdf' };
    const read = jest.fn();
    await loadDeploymentSecrets(env, read);
    expect(read).not.toHaveBeenCalled();
    expect(env).toEqual({ PAGINATION_SECRET: 'local', TABLE_NAME: 'pdf' });
  });

  it.each([
    ['a field the secret lacks', stripe, 'missing_field', /no string field "missing_field"/],
    ['a field of a secret that is not JSON', 'sk_plain', 'secret_key', /is not JSON/],
  ])('fails on %s, setting nothing and showing no secret value', async (_what, value, field, message) => {
    const env: NodeJS.ProcessEnv = { PAGINATION_SECRET_SECRET_ID: 'p', STRIPE_SECRET_KEY_SECRET_ID: 's', STRIPE_SECRET_KEY_SECRET_FIELD: field };
    const failure = loadDeploymentSecrets(env, async (id) => (id === 'p' ? 'page-key' : value));
    await expect(failure).rejects.toThrow(message);
    await failure.catch((err: Error) => expect(err.message).not.toMatch(/sk_live_1|whsec_2|sk_plain/));
    expect(env.PAGINATION_SECRET).toBeUndefined();
    expect(env.STRIPE_SECRET_KEY).toBeUndefined();
  });

  it('asks Secrets Manager by default', async () => {
    const sm = mockClient(SecretsManagerClient);
    sm.on(GetSecretValueCommand, { SecretId: 'pdf-service/smtp' }).resolves({ SecretString: JSON.stringify({ smtp_url: 'smtps://u:p@mail.example.com' }) });
    try {
      const env: NodeJS.ProcessEnv = { MAIL_SMTP_URL_SECRET_ID: 'pdf-service/smtp', MAIL_SMTP_URL_SECRET_FIELD: 'smtp_url' };
      await loadDeploymentSecrets(env);
      expect(env.MAIL_SMTP_URL).toBe('smtps://u:p@mail.example.com');
      expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(1);
      sm.on(GetSecretValueCommand).resolves({ SecretBinary: new Uint8Array([1]) });
      await expect(loadDeploymentSecrets({ X_SECRET_ID: 'binary' })).rejects.toThrow('secret binary has no string value');
    } finally {
      sm.restore();
    }
  });
});
