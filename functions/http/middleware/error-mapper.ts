import { toHttpError } from '../errors';
import type { Middleware } from '../pipeline';
import { json } from '../responses';

/**
 * Turns every thrown error into the spec envelope; unexpected ones are logged, never shown. The log line names the
 * request id the 500 answer gives the caller, so what they quote to support finds it.
 */
export const errorMapper: Middleware = {
  async onError(req, err) {
    const { status, body, unexpected } = toHttpError(err, req.requestId);
    if (unexpected) req.services.log.error(`${req.route.id} failed (request ${req.requestId})`, err);
    return json(status, body);
  },
};
