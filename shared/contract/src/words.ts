// The contract's enum values as words a person reads, in the languages the console and the kiosk speak:
// one table per enum, typed by that enum, so a value added to the contract without its words does not
// compile. Only types are imported: the browser bundles take this module (`@portico/contract/words`)
// without zod.
import type { z } from 'zod';
import type { AdminCheckinFlag, WebhookDeliveryStatus } from './admin.js';
import type { ApiKeyStatus } from './applications.js';
import type { CheckinOutcome, DenialReason } from './checkin.js';
import type { EventStatus, GuestImportResult, GuestStatus } from './event-guests.js';
import type { CheckinMethod } from './events.js';
import type { ImportRowResult } from './persons.js';

export type WordsLang = 'en' | 'pt-BR';

type Words<E extends z.ZodType> = Record<z.infer<E> & string, string>;

export interface EnumWords {
  eventStatus: Words<typeof EventStatus>;
  guestStatus: Words<typeof GuestStatus>;
  checkinMethod: Words<typeof CheckinMethod>;
  checkinOutcome: Words<typeof CheckinOutcome>;
  checkinFlag: Words<typeof AdminCheckinFlag>;
  denialReason: Words<typeof DenialReason>;
  guestImportRow: Record<z.infer<typeof GuestImportResult>['results'][number]['status'], string>;
  personImportRow: Record<z.infer<typeof ImportRowResult>['status'], string>;
  deliveryStatus: Words<typeof WebhookDeliveryStatus>;
  apiKeyStatus: Words<typeof ApiKeyStatus>;
}

export const ENUM_WORDS: Record<WordsLang, EnumWords> = {
  en: {
    eventStatus: {
      draft: 'draft',
      published: 'published',
      open: 'open',
      closed: 'closed',
      cancelled: 'cancelled',
    },
    guestStatus: {
      pending: 'pending',
      invited: 'invited',
      confirmed: 'confirmed',
      declined: 'declined',
      checked_in: 'checked in',
    },
    checkinMethod: { facial: 'face', qr: 'QR code', link: 'link', manual: 'manual' },
    checkinOutcome: {
      success: 'admitted',
      denied: 'denied',
      liveness_failed: 'liveness failed',
      geofence_alert: 'outside the geofence',
    },
    checkinFlag: {
      offline: 'offline',
      late: 'late',
      conflict: 'conflict',
      event_closed: 'event closed',
      capacity_reached: 'full',
      method_not_allowed: 'method not allowed',
      already_checked_in: 'already checked in',
    },
    denialReason: {
      not_recognised: 'not recognised',
      capacity_reached: 'full',
      event_closed: 'event closed',
      method_not_allowed: 'method not allowed',
      already_checked_in: 'already checked in',
      step_up_failed: 'second factor failed',
    },
    guestImportRow: { created: 'created', duplicate: 'duplicate', failed: 'failed' },
    personImportRow: { created: 'created', updated: 'updated', failed: 'failed' },
    deliveryStatus: {
      pending: 'pending',
      delivering: 'delivering',
      delivered: 'delivered',
      failed: 'failed',
      cancelled: 'cancelled',
    },
    apiKeyStatus: { active: 'active', rotated: 'rotated', revoked: 'revoked' },
  },
  'pt-BR': {
    eventStatus: {
      draft: 'rascunho',
      published: 'publicado',
      open: 'aberto',
      closed: 'encerrado',
      cancelled: 'cancelado',
    },
    guestStatus: {
      pending: 'pendente',
      invited: 'convidado',
      confirmed: 'confirmado',
      declined: 'recusou',
      checked_in: 'presente',
    },
    checkinMethod: { facial: 'facial', qr: 'código QR', link: 'link', manual: 'manual' },
    checkinOutcome: {
      success: 'admitido',
      denied: 'negado',
      liveness_failed: 'prova de vida falhou',
      geofence_alert: 'fora da cerca',
    },
    checkinFlag: {
      offline: 'offline',
      late: 'atrasado',
      conflict: 'conflito',
      event_closed: 'evento encerrado',
      capacity_reached: 'lotado',
      method_not_allowed: 'método não permitido',
      already_checked_in: 'já registrado',
    },
    denialReason: {
      not_recognised: 'não reconhecido',
      capacity_reached: 'lotado',
      event_closed: 'evento encerrado',
      method_not_allowed: 'método não permitido',
      already_checked_in: 'já registrado',
      step_up_failed: 'segundo fator falhou',
    },
    guestImportRow: { created: 'criado', duplicate: 'duplicado', failed: 'com erro' },
    personImportRow: { created: 'criado', updated: 'atualizado', failed: 'com erro' },
    deliveryStatus: {
      pending: 'pendente',
      delivering: 'entregando',
      delivered: 'entregue',
      failed: 'com erro',
      cancelled: 'cancelada',
    },
    apiKeyStatus: { active: 'ativa', rotated: 'substituída', revoked: 'revogada' },
  },
};
