/**
 * In AWS a function's secrets are not in its configuration (anyone allowed to read a function's settings would read
 * them): the CDK app sets `<NAME>_SECRET_ID` (a Secrets Manager name or ARN) and, for a JSON secret,
 * `<NAME>_SECRET_FIELD`; at cold start the value is read once into `process.env.<NAME>`, where the composition root
 * finds it like any other setting. Locally (and in tests) no `_SECRET_ID` is set and nothing is read.
 */
const ID_SUFFIX = '_SECRET_ID';
const FIELD_SUFFIX = '_SECRET_FIELD';

export type SecretReader = (secretId: string) => Promise<string>;

const secretsManagerReader: SecretReader = async (secretId) => {
  // Loaded only where a secret is configured: local runs and functions without secrets never load the client.
  const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
  const { SecretString } = await new SecretsManagerClient({}).send(new GetSecretValueCommand({ SecretId: secretId }));
  if (SecretString === undefined) throw new Error(`secret ${secretId} has no string value`);
  return SecretString;
};

/** The secret value, or one JSON field of it; errors name the setting and the secret, never a value. */
function pick(name: string, secretId: string, text: string, field: string | undefined): string {
  if (!field) return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${name}: secret ${secretId} is not JSON, so it has no field "${field}"; store it as {"${field}": "…"}`);
  }
  const value = (parsed as Record<string, unknown> | null)?.[field];
  if (typeof value !== 'string' || !value) throw new Error(`${name}: secret ${secretId} has no string field "${field}"`);
  return value;
}

/** Reads every `<NAME>_SECRET_ID` of `env` into `env[NAME]` (each secret once, however many settings use it). */
export async function loadDeploymentSecrets(env: NodeJS.ProcessEnv = process.env, read: SecretReader = secretsManagerReader): Promise<void> {
  const names = Object.keys(env).filter((key) => key.endsWith(ID_SUFFIX) && env[key]).map((key) => key.slice(0, -ID_SUFFIX.length));
  const reads = new Map<string, Promise<string>>();
  const values = await Promise.all(
    names.map(async (name) => {
      const secretId = env[name + ID_SUFFIX]!;
      if (!reads.has(secretId)) reads.set(secretId, read(secretId));
      return pick(name, secretId, await reads.get(secretId)!, env[name + FIELD_SUFFIX] || undefined);
    }),
  );
  // Only once all are read: a failed cold start leaves no half-loaded settings behind.
  names.forEach((name, at) => (env[name] = values[at]));
}

let loading: Promise<void> | null = null;

/** Once per process; a failure is not remembered, so the next invocation tries again. */
export function deploymentSecretsLoaded(): Promise<void> {
  if (!loading) {
    const attempt = loadDeploymentSecrets();
    loading = attempt;
    attempt.catch(() => {
      if (loading === attempt) loading = null;
    });
  }
  return loading;
}
