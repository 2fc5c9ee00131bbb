// The audit trail's vocabulary: every action the cloud records and every kind of actor. The cloud's
// `recordAudit` takes only these actions, and the console words each one (a `Record` over them), so a
// new action that is not added here fails to compile in both places.
import { z } from './zod.js';

export const AUDIT_ACTIONS = [
  'api_key.created',
  'api_key.revoked',
  'api_key.rotated',
  'application.created',
  'application.deleted',
  'auth.account.locked',
  'auth.login.failed',
  'auth.login.mfa_required',
  'auth.login.succeeded',
  'auth.logout',
  'auth.mfa.disabled',
  'auth.mfa.enabled',
  'auth.mfa.setup_started',
  'auth.mfa.verified',
  'auth.mfa.verify_failed',
  'auth.refresh.reuse_detected',
  'checkin.facial',
  'checkin.qr',
  'checkin.link',
  'checkin.manual',
  'checkin.exported',
  'checkin.image_viewed',
  'checkin.voided',
  'device.events_set',
  'device.paired',
  'device.pairing_code_created',
  'device.registered',
  'device.renamed',
  'device.revoked',
  'event.archived',
  'event.configured',
  'event.created',
  'event.deleted',
  'event.list_token_created',
  'event.list_token_revoked',
  'event.list_token_rotated',
  'event.status_changed',
  'event.updated',
  'face_model.switched',
  'face_template.refreshed',
  'guest.confirmed',
  'guest.created',
  'guest.declined',
  'guest.deleted',
  'guest.imported',
  'guest.invited',
  'guest.reinvited',
  'guest.updated',
  'person.anonymised',
  'person.biometrics_revoked',
  'person.created',
  'person.deleted',
  'person.enrolled',
  'person.enrollment_link_sent',
  'person.imported',
  'person.onboarded',
  'person.possible_duplicate',
  'person.reenrolled',
  'person.registered',
  'person.updated',
  'portal.biometric_image_read',
  'portal.biometric_images_listed',
  'portal.biometrics_read',
  'portal.deletion_cancelled',
  'portal.deletion_completed',
  'portal.deletion_confirmed',
  'portal.deletion_requested',
  'portal.export_downloaded',
  'portal.export_requested',
  'portal.profile_updated',
  'portal.session_ended',
  'portal.signed_in',
  'qr_token.created',
  'qr_token.revoked',
  'sandbox.reset',
  'sandbox.webhook_secret.read',
  'tenant.created',
  'tenant.settings.updated',
  'tenant.updated',
  'tenant.webhook_secret.rotated',
  'webhook.redelivered',
  'webhook.retried',
  'webhook.test_sent',
] as const;

export const AuditAction = z.enum(AUDIT_ACTIONS).openapi('AuditAction', {
  description:
    'Every action the audit log records. `checkin.<method>` is a check-in decided (accepted or refused); ' +
    '`guest.invited`/`guest.reinvited` a batch of invitation mails.',
  example: 'person.created',
});
export type AuditAction = z.infer<typeof AuditAction>;

export const AUDIT_ACTOR_TYPES = [
  'adminSession',
  'apiKey',
  'device',
  'portal',
  'public',
  'system',
  'operator',
] as const;

export const AuditActorType = z.enum(AUDIT_ACTOR_TYPES).openapi('AuditActorType', {
  description:
    '`adminSession` a console user, `apiKey` an integrator’s key, `device` an edge device, `portal` a person ' +
    'in the self-service portal, `public` someone not signed in (a guest answering an invitation, a failed ' +
    'login), `system` the service itself (jobs), `operator` the platform operator (command line).',
  example: 'adminSession',
});
export type AuditActorType = z.infer<typeof AuditActorType>;
