// Roles of tenant users: `owner` and `admin` manage the tenant (settings, applications, keys);
// `operator` runs check-in and may read. What each role may do on scoped routes is `ROLE_SCOPES` in
// the contract, checked where routes are mounted; applications and keys need a manager here.
import { AppError } from '../../http/errors.js';

const MANAGER_ROLES = new Set(['owner', 'admin']);

export function requireManager(actor: { role: string }): void {
  if (!MANAGER_ROLES.has(actor.role))
    throw new AppError(403, 'forbidden', 'Only an owner or admin may do this');
}
