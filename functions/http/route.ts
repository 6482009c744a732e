import type { Account } from '../core/accounts/account';
import { routeById } from '../routes';
import type { Principal } from '../core/auth/authenticate';
import { caller } from './middleware/caller';
import { errorMapper } from './middleware/error-mapper';
import { type HttpRequest, type Middleware, httpRoute } from './pipeline';
import type { HttpResponse } from './responses';

/** A request on a route that requires a credential: caller and account are always present. */
export interface AuthedRequest extends HttpRequest {
  principal: Principal;
  account: Account;
}

const defaults = (): Middleware[] => [errorMapper, caller];

/** The route's credential rule must be the one the handler was written for (checked when the module loads). */
function expectAccess(routeId: string, credential: boolean): void {
  if ((routeById(routeId).access !== 'none') !== credential) {
    throw new Error(`${routeId} is ${credential ? 'public' : 'protected'} in the route table; use ${credential ? 'publicRoute' : 'authedRoute'} for its handler.`);
  }
}

/** A handler for a route that needs a credential (API key or ID token, as the route table says). */
export function authedRoute(routeId: string, handler: (req: AuthedRequest) => Promise<HttpResponse>) {
  // The caller middleware fills principal and account only on protected routes.
  expectAccess(routeId, true);
  return httpRoute(routeId, (req) => handler(req as AuthedRequest), defaults);
}

/** A handler for a route without a credential. */
export function publicRoute(routeId: string, handler: (req: HttpRequest) => Promise<HttpResponse>) {
  expectAccess(routeId, false);
  return httpRoute(routeId, handler, defaults);
}
