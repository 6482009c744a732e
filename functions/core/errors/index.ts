/**
 * The one error hierarchy of the service. Domain code throws `ServiceError` with a spec error code;
 * the HTTP layer maps the code to a status in exactly one place (functions/http/errors.ts).
 */
export type ErrorDetails = Record<string, unknown>;

export class ServiceError extends Error {
  readonly code: string;
  readonly details: ErrorDetails;

  constructor(code: string, message: string, details: ErrorDetails = {}) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
    this.details = details;
  }
}

export function isServiceError(err: unknown): err is ServiceError {
  return err instanceof ServiceError;
}

/** 400 INVALID_PARAMETER naming the offending parameter, the most common refusal. */
export function invalidParameter(parameter: string, message: string, details: ErrorDetails = {}): ServiceError {
  return new ServiceError('INVALID_PARAMETER', message, { parameter, ...details });
}
