// Every module's routes, in one list: the place to look for what the API serves.
import type { AppDeps } from '../deps.js';
import type { RouteDef } from '../http/route.js';
import { applicationRoutes } from './applications/routes.js';
import { authRoutes } from './auth/routes.js';
import { healthRoutes } from './health/routes.js';
import { tenantRoutes } from './tenants/routes.js';

export function moduleRoutes(deps: AppDeps): RouteDef[] {
  return [
    ...healthRoutes(deps),
    ...authRoutes(deps),
    ...applicationRoutes(deps),
    ...tenantRoutes(deps),
  ];
}
