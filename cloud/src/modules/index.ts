// Every module's routes, in one list: the place to look for what the API serves.
import type { AppDeps } from '../deps.js';
import type { RouteDef } from '../http/route.js';
import { healthRoutes } from './health/routes.js';

export function moduleRoutes(deps: AppDeps): RouteDef[] {
  return [...healthRoutes(deps)];
}
