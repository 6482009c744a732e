import { ServiceError } from '../../functions/core/errors';

type ErrorClass<E> = abstract new (...args: never[]) => E;

/** What `fn` throws, when it is a `type`; fails the test if `fn` returns or throws anything else. */
export function thrownBy<E>(fn: () => unknown, type: ErrorClass<E>): E {
  try {
    fn();
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  throw new Error(`expected a ${type.name}`);
}

/** What `promise` rejects with, when it is a `type` (a ServiceError unless told); fails the test otherwise. */
export async function rejection<E = ServiceError>(promise: Promise<unknown>, type: ErrorClass<E> = ServiceError as unknown as ErrorClass<E>): Promise<E> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  throw new Error(`expected a ${type.name}`);
}

/** The ServiceError `fn` throws; fails the test if it returns or throws anything else. */
export function refusal(fn: () => unknown): ServiceError {
  return thrownBy(fn, ServiceError);
}

/** An HTTP answer's status with its error envelope's code and details. */
export async function errorOf(res: Response) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever the envelope's details hold
  const body: any = await res.json();
  return { status: res.status, code: body.error?.code, details: body.error?.details };
}
