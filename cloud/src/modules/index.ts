// Every module's routes, in one list: the place to look for what the API serves.
import type { AppDeps } from '../deps.js';
import type { RouteDef } from '../http/route.js';
import { adminRoutes } from './admin/routes.js';
import { applicationRoutes } from './applications/routes.js';
import { authRoutes } from './auth/routes.js';
import { checkinRoutes } from './checkin/routes.js';
import { healthRoutes } from './health/routes.js';
import { tenantRoutes } from './tenants/routes.js';
import { personRoutes } from './persons/routes.js';
import { onboardingRoutes } from './onboarding/routes.js';
import { eventRoutes } from './events/routes.js';
import { guestRoutes } from './guests/routes.js';
import { deviceRoutes } from './devices/routes.js';
import { syncRoutes } from './sync/routes.js';
import { portalRoutes } from './portal/routes.js';
import { privacyRoutes } from './privacy/routes.js';
import { sandboxRoutes } from './sandbox/routes.js';
import { teamRoutes } from './team/routes.js';

export function moduleRoutes(deps: AppDeps): RouteDef[] {
  return [
    ...healthRoutes(deps),
    ...authRoutes(deps),
    ...applicationRoutes(deps),
    ...teamRoutes(deps),
    ...tenantRoutes(deps),
    ...sandboxRoutes(deps),
    ...personRoutes(deps),
    ...onboardingRoutes(deps),
    ...checkinRoutes(deps),
    ...eventRoutes(deps),
    ...guestRoutes(deps),
    ...deviceRoutes(deps),
    ...syncRoutes(deps),
    ...portalRoutes(deps),
    ...privacyRoutes(deps),
    ...adminRoutes(deps),
  ];
}
