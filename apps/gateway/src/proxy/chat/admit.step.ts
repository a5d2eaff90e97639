// Step 1 of a chat request: which tenant it belongs to (its key, or the default tenant). A bad or
// revoked key is answered at once in the dialect's shape, before the body is read.
import type { GatewayContext } from '../../gateway-context';
import { type TenantRuntime } from '@context-guru/engine';
import type { HotRequest } from '../../http/hot-http';
import { failureError } from '../../http/request-errors';
import type { ChatRoute } from './chat-exchange';
import { stop, type Stop } from './chat-outcome';

export interface Admitted {
  kind: 'admitted';
  tenant: TenantRuntime;
}

export function admitStep(gw: GatewayContext, route: ChatRoute, req: HotRequest): Admitted | Stop {
  try {
    return { kind: 'admitted', tenant: gw.tenants.resolve(req.headers) };
  } catch (err) {
    return stop('bad_request', failureError(route.dialect, err), null);
  }
}
