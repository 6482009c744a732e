import { ServiceError } from '../../functions/core/errors';

/** The ServiceError `fn` throws; fails the test if it returns or throws anything else. */
export function refusal(fn: () => unknown): ServiceError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ServiceError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}
