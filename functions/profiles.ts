/**
 * What each kind of function gets in AWS: memory and Lambda timeout. The CDK app sizes its functions from this
 * table and the local stack gives its handlers the same deadlines (`getRemainingTimeInMillis`), so a handler that
 * reads its remaining time sees locally what it would see deployed.
 */
import type { FunctionProfile } from './routes';

export const FUNCTION_PROFILES: Record<FunctionProfile, { memorySize: number; timeoutSeconds: number }> = {
  render: { memorySize: 2048, timeoutSeconds: 35 },
  standard: { memorySize: 512, timeoutSeconds: 29 },
  light: { memorySize: 256, timeoutSeconds: 10 },
  // CPU-bound PDF work: 1769 MB is one full vCPU.
  pdf: { memorySize: 1769, timeoutSeconds: 29 },
  // Background merge/split: up to 150 MB in, 1 GB out, 15 minutes.
  worker: { memorySize: 4096, timeoutSeconds: 900 },
};

/** A function's Lambda timeout: its own when it asks for more than its profile's, else the profile's. */
export function functionTimeoutSeconds(profile: FunctionProfile, timeoutSeconds?: number): number {
  return Math.max(timeoutSeconds ?? 0, FUNCTION_PROFILES[profile].timeoutSeconds);
}
