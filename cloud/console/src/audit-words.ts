// The audit log in words: every action the cloud records as a sentence, the kinds of actor and target,
// and the labels of an entry's details, in English and Brazilian Portuguese. Typed by the contract's
// `AuditAction`, so an action added to the cloud without its sentence here does not compile.
import type { AuditAction, AuditActorType } from '@portico/contract';
import { ENUM_WORDS } from '@portico/contract/words';
import { lang, term } from './i18n.js';
import type { Lang } from './texts.js';

type Words = Record<Lang, string>;

const ACTIONS: Record<AuditAction, Words> = {
  'api_key.created': { en: 'Created an API key', 'pt-BR': 'Criou uma chave de API' },
  'api_key.revoked': { en: 'Revoked an API key', 'pt-BR': 'Revogou uma chave de API' },
  'api_key.rotated': { en: 'Rotated an API key', 'pt-BR': 'Substituiu uma chave de API' },
  'application.created': { en: 'Created an application', 'pt-BR': 'Criou um aplicativo' },
  'application.deleted': { en: 'Deleted an application', 'pt-BR': 'Excluiu um aplicativo' },
  'auth.account.locked': {
    en: 'Account locked after failed sign-ins',
    'pt-BR': 'Conta bloqueada após tentativas de acesso',
  },
  'auth.login.failed': { en: 'Failed sign-in', 'pt-BR': 'Falha ao entrar' },
  'auth.login.mfa_required': {
    en: 'Signed in with the password; code asked',
    'pt-BR': 'Entrou com a senha; código solicitado',
  },
  'auth.login.succeeded': { en: 'Signed in', 'pt-BR': 'Entrou no console' },
  'auth.logout': { en: 'Signed out', 'pt-BR': 'Saiu do console' },
  'auth.mfa.disabled': {
    en: 'Turned two-step verification off',
    'pt-BR': 'Desativou a verificação em duas etapas',
  },
  'auth.mfa.enabled': {
    en: 'Turned two-step verification on',
    'pt-BR': 'Ativou a verificação em duas etapas',
  },
  'auth.mfa.recovery_code_used': {
    en: 'Signed in with a recovery code',
    'pt-BR': 'Entrou com um código de recuperação',
  },
  'auth.mfa.recovery_codes_generated': {
    en: 'Made new recovery codes',
    'pt-BR': 'Gerou novos códigos de recuperação',
  },
  'auth.mfa.reset_by_operator': {
    en: 'Two-step verification turned off by the platform operator',
    'pt-BR': 'Verificação em duas etapas desativada pelo operador da plataforma',
  },
  'auth.mfa.setup_started': {
    en: 'Started setting up two-step verification',
    'pt-BR': 'Começou a configurar a verificação em duas etapas',
  },
  'auth.mfa.verified': { en: 'Confirmed a sign-in code', 'pt-BR': 'Confirmou um código de acesso' },
  'auth.mfa.verify_failed': { en: 'Entered a wrong code', 'pt-BR': 'Digitou um código errado' },
  'auth.password.reset': {
    en: 'Set a new password with a reset link: sessions ended',
    'pt-BR': 'Definiu uma nova senha com um link de redefinição: sessões encerradas',
  },
  'auth.password.reset_link_issued': {
    en: 'Password reset started by the platform operator: sessions ended',
    'pt-BR': 'Redefinição de senha iniciada pelo operador da plataforma: sessões encerradas',
  },
  'auth.password.reset_requested': {
    en: 'Asked for a password reset link',
    'pt-BR': 'Pediu um link para redefinir a senha',
  },
  'auth.refresh.reuse_detected': {
    en: 'A used session token was presented again: sessions ended',
    'pt-BR': 'Um token de sessão já usado foi reapresentado: sessões encerradas',
  },
  'checkin.facial': { en: 'Check-in by face', 'pt-BR': 'Check-in por rosto' },
  'checkin.qr': { en: 'Check-in by QR code', 'pt-BR': 'Check-in por QR code' },
  'checkin.link': { en: 'Check-in by link', 'pt-BR': 'Check-in por link' },
  'checkin.manual': { en: 'Manual check-in', 'pt-BR': 'Check-in manual' },
  'checkin.exported': { en: 'Exported check-ins', 'pt-BR': 'Exportou check-ins' },
  'checkin.image_viewed': {
    en: 'Viewed a check-in photo',
    'pt-BR': 'Viu a foto de um check-in',
  },
  'checkin.voided': { en: 'Undid a check-in', 'pt-BR': 'Desfez um check-in' },
  'device.events_set': {
    en: 'Chose the events of a device',
    'pt-BR': 'Escolheu os eventos de um dispositivo',
  },
  'device.paired': { en: 'Paired a device', 'pt-BR': 'Pareou um dispositivo' },
  'device.pairing_code_created': {
    en: 'Created a pairing code',
    'pt-BR': 'Criou um código de pareamento',
  },
  'device.registered': { en: 'Registered a device', 'pt-BR': 'Registrou um dispositivo' },
  'device.renamed': { en: 'Renamed a device', 'pt-BR': 'Renomeou um dispositivo' },
  'device.revoked': { en: 'Revoked a device', 'pt-BR': 'Revogou um dispositivo' },
  'event.archived': { en: 'Archived an event', 'pt-BR': 'Arquivou um evento' },
  'event.configured': { en: 'Configured an event', 'pt-BR': 'Configurou um evento' },
  'event.created': { en: 'Created an event', 'pt-BR': 'Criou um evento' },
  'event.deleted': { en: 'Deleted an event', 'pt-BR': 'Excluiu um evento' },
  'event.list_token_created': {
    en: 'Created an event’s guest-list link',
    'pt-BR': 'Criou o link da lista de um evento',
  },
  'event.list_token_revoked': {
    en: 'Revoked an event’s guest-list link',
    'pt-BR': 'Revogou o link da lista de um evento',
  },
  'event.list_token_rotated': {
    en: 'Replaced an event’s guest-list link',
    'pt-BR': 'Substituiu o link da lista de um evento',
  },
  'event.status_changed': {
    en: 'Changed an event’s status',
    'pt-BR': 'Mudou a situação de um evento',
  },
  'event.updated': { en: 'Edited an event', 'pt-BR': 'Editou um evento' },
  'face_model.switched': {
    en: 'Switched the face model',
    'pt-BR': 'Trocou o modelo facial',
  },
  'face_template.refreshed': {
    en: 'Refreshed a face template',
    'pt-BR': 'Atualizou um modelo facial',
  },
  'guest.confirmed': { en: 'A guest confirmed', 'pt-BR': 'Um convidado confirmou' },
  'guest.created': { en: 'Added a guest', 'pt-BR': 'Adicionou um convidado' },
  'guest.declined': { en: 'A guest declined', 'pt-BR': 'Um convidado recusou' },
  'guest.deleted': { en: 'Removed a guest', 'pt-BR': 'Removeu um convidado' },
  'guest.imported': { en: 'Imported guests', 'pt-BR': 'Importou convidados' },
  'guest.invited': { en: 'Sent invitations', 'pt-BR': 'Enviou convites' },
  'guest.reinvited': { en: 'Sent invitations again', 'pt-BR': 'Reenviou convites' },
  'guest.updated': { en: 'Edited a guest', 'pt-BR': 'Editou um convidado' },
  'person.anonymised': { en: 'Anonymised a person', 'pt-BR': 'Anonimizou uma pessoa' },
  'person.biometrics_revoked': {
    en: 'Erased a person’s face data',
    'pt-BR': 'Apagou os dados faciais de uma pessoa',
  },
  'person.created': { en: 'Added a person', 'pt-BR': 'Cadastrou uma pessoa' },
  'person.deleted': { en: 'Deleted a person', 'pt-BR': 'Excluiu uma pessoa' },
  'person.enrolled': { en: 'Enrolled a face', 'pt-BR': 'Cadastrou um rosto' },
  'person.enrollment_link_sent': {
    en: 'Sent an enrolment link',
    'pt-BR': 'Enviou um link de cadastro facial',
  },
  'person.imported': { en: 'Imported persons', 'pt-BR': 'Importou pessoas' },
  'person.onboarded': { en: 'A person completed onboarding', 'pt-BR': 'Uma pessoa concluiu o cadastro' },
  'person.possible_duplicate': {
    en: 'Flagged a possible duplicate face',
    'pt-BR': 'Sinalizou um possível rosto duplicado',
  },
  'person.reenrolled': { en: 'Enrolled a face again', 'pt-BR': 'Recadastrou um rosto' },
  'person.registered': { en: 'A person registered', 'pt-BR': 'Uma pessoa se inscreveu' },
  'person.updated': { en: 'Edited a person', 'pt-BR': 'Editou uma pessoa' },
  'portal.biometric_image_read': {
    en: 'Opened one of their face photos',
    'pt-BR': 'Abriu uma das suas fotos faciais',
  },
  'portal.biometric_images_listed': {
    en: 'Listed their face photos',
    'pt-BR': 'Listou as suas fotos faciais',
  },
  'portal.biometrics_read': {
    en: 'Read their face data',
    'pt-BR': 'Consultou os seus dados faciais',
  },
  'portal.deletion_cancelled': {
    en: 'Cancelled their deletion request',
    'pt-BR': 'Cancelou o pedido de exclusão',
  },
  'portal.deletion_completed': {
    en: 'Their data was deleted',
    'pt-BR': 'Os seus dados foram excluídos',
  },
  'portal.deletion_confirmed': {
    en: 'Confirmed their deletion request',
    'pt-BR': 'Confirmou o pedido de exclusão',
  },
  'portal.deletion_requested': {
    en: 'Asked for their data to be deleted',
    'pt-BR': 'Pediu a exclusão dos seus dados',
  },
  'portal.export_downloaded': {
    en: 'Downloaded their data export',
    'pt-BR': 'Baixou a exportação dos seus dados',
  },
  'portal.export_requested': {
    en: 'Asked for a copy of their data',
    'pt-BR': 'Pediu uma cópia dos seus dados',
  },
  'portal.profile_updated': { en: 'Edited their profile', 'pt-BR': 'Editou o seu perfil' },
  'portal.session_ended': { en: 'Signed out of the portal', 'pt-BR': 'Saiu do portal' },
  'portal.signed_in': { en: 'Signed in to the portal', 'pt-BR': 'Entrou no portal' },
  'qr_token.created': { en: 'Issued a QR code', 'pt-BR': 'Emitiu um QR code' },
  'qr_token.revoked': { en: 'Revoked a QR code', 'pt-BR': 'Revogou um QR code' },
  'sandbox.reset': { en: 'Reset the sandbox', 'pt-BR': 'Reiniciou o sandbox' },
  'sandbox.webhook_secret.read': {
    en: 'Read the sandbox webhook secret',
    'pt-BR': 'Leu o segredo de webhook do sandbox',
  },
  'tenant.created': { en: 'Organisation created', 'pt-BR': 'Organização criada' },
  'tenant.settings.updated': { en: 'Changed the settings', 'pt-BR': 'Alterou as configurações' },
  'tenant.updated': { en: 'Renamed the organisation', 'pt-BR': 'Renomeou a organização' },
  'tenant.webhook_secret.rotated': {
    en: 'Replaced the webhook secret',
    'pt-BR': 'Substituiu o segredo de webhook',
  },
  'team.invitation_accepted': {
    en: 'Accepted a team invitation',
    'pt-BR': 'Aceitou um convite para a equipe',
  },
  'team.invitation_resent': { en: 'Resent a team invitation', 'pt-BR': 'Reenviou um convite para a equipe' },
  'team.member_deactivated': { en: 'Deactivated a team member', 'pt-BR': 'Desativou um membro da equipe' },
  'team.member_invited': { en: 'Invited someone to the team', 'pt-BR': 'Convidou alguém para a equipe' },
  'team.member_reactivated': { en: 'Reactivated a team member', 'pt-BR': 'Reativou um membro da equipe' },
  'team.role_changed': {
    en: 'Changed a team member’s role',
    'pt-BR': 'Alterou o papel de um membro da equipe',
  },
  'webhook.redelivered': { en: 'Sent a webhook again', 'pt-BR': 'Reenviou um webhook' },
  'webhook.retried': { en: 'Retried a webhook now', 'pt-BR': 'Tentou um webhook agora' },
  'webhook.test_sent': { en: 'Sent a test webhook', 'pt-BR': 'Enviou um webhook de teste' },
};

/** Every action, for the filter's list. */
export const AUDIT_ACTIONS = Object.keys(ACTIONS) as AuditAction[];

const isAction = (a: string): a is AuditAction => a in ACTIONS;

/** An action as a sentence; an action this console does not know (an old name) as its code. */
export function actionSentence(action: string): string {
  return isAction(action) ? ACTIONS[action][lang()] : action;
}

/** The areas of the filter's list: every action under one prefix (`person.`). */
const AREAS: Record<string, Words> = {
  'api_key.': { en: 'API keys', 'pt-BR': 'Chaves de API' },
  'application.': { en: 'Applications', 'pt-BR': 'Aplicativos' },
  'auth.': { en: 'Sign-in and security', 'pt-BR': 'Acesso e segurança' },
  'checkin.': { en: 'Check-ins', 'pt-BR': 'Check-ins' },
  'device.': { en: 'Devices', 'pt-BR': 'Dispositivos' },
  'event.': { en: 'Events', 'pt-BR': 'Eventos' },
  'face_model.': { en: 'Face model', 'pt-BR': 'Modelo facial' },
  'face_template.': { en: 'Face templates', 'pt-BR': 'Modelos faciais' },
  'guest.': { en: 'Guests', 'pt-BR': 'Convidados' },
  'person.': { en: 'Persons', 'pt-BR': 'Pessoas' },
  'portal.': { en: 'Self-service portal', 'pt-BR': 'Portal do titular' },
  'qr_token.': { en: 'QR codes', 'pt-BR': 'QR codes' },
  'sandbox.': { en: 'Sandbox', 'pt-BR': 'Sandbox' },
  'tenant.': { en: 'Organisation', 'pt-BR': 'Organização' },
  'webhook.': { en: 'Webhooks', 'pt-BR': 'Webhooks' },
};

/** The filter's list: per area, "every … action" (the prefix) and each action of it. */
export function actionAreas(): { prefix: string; label: string; all: string; actions: AuditAction[] }[] {
  const every: Words = { en: 'All: {area}', 'pt-BR': 'Todas: {area}' };
  return Object.entries(AREAS).map(([prefix, words]) => ({
    prefix,
    label: words[lang()],
    all: every[lang()].replace('{area}', words[lang()].toLowerCase()),
    actions: AUDIT_ACTIONS.filter((a) => a.startsWith(prefix)),
  }));
}

const ACTORS: Record<AuditActorType, Words> = {
  adminSession: { en: 'Console user', 'pt-BR': 'Usuário do console' },
  apiKey: { en: 'API key', 'pt-BR': 'Chave de API' },
  device: { en: 'Device', 'pt-BR': 'Dispositivo' },
  portal: { en: 'A person (self-service portal)', 'pt-BR': 'Uma pessoa (portal do titular)' },
  public: { en: 'Someone not signed in', 'pt-BR': 'Alguém sem login' },
  system: { en: 'Portico (automatic)', 'pt-BR': 'Portico (automático)' },
  operator: { en: 'Platform operator', 'pt-BR': 'Operador da plataforma' },
};

/** A kind of actor in words. */
export function actorKind(type: string): string {
  return type in ACTORS ? ACTORS[type as AuditActorType][lang()] : type;
}

const REMOVED: Words = { en: 'removed', 'pt-BR': 'removido' };
export const removedWord = () => REMOVED[lang()];

const TARGETS: Record<string, Words> = {
  person: { en: 'Person', 'pt-BR': 'Pessoa' },
  event: { en: 'Event', 'pt-BR': 'Evento' },
  guest: { en: 'Guest', 'pt-BR': 'Convidado' },
  device: { en: 'Device', 'pt-BR': 'Dispositivo' },
  checkin: { en: 'Check-in', 'pt-BR': 'Check-in' },
  check_in: { en: 'Check-in', 'pt-BR': 'Check-in' },
  user: { en: 'User', 'pt-BR': 'Usuário' },
  tenant: { en: 'Organisation', 'pt-BR': 'Organização' },
  application: { en: 'Application', 'pt-BR': 'Aplicativo' },
  api_key: { en: 'API key', 'pt-BR': 'Chave de API' },
  webhook_delivery: { en: 'Webhook delivery', 'pt-BR': 'Entrega de webhook' },
  outbox_event: { en: 'Event sent', 'pt-BR': 'Evento enviado' },
  portal_account: { en: 'Portal account', 'pt-BR': 'Conta do portal' },
  qr_token: { en: 'QR code', 'pt-BR': 'QR code' },
};

/** A kind of target in words; an unknown one as it is. */
export function targetKind(type: string): string {
  return TARGETS[type]?.[lang()] ?? type;
}

const LABELS: Record<string, Words> = {
  name: { en: 'Name', 'pt-BR': 'Nome' },
  email: { en: 'E-mail', 'pt-BR': 'E-mail' },
  fields: { en: 'Fields', 'pt-BR': 'Campos' },
  changed: { en: 'Changed', 'pt-BR': 'Alterado' },
  via: { en: 'Via', 'pt-BR': 'Via' },
  from: { en: 'From', 'pt-BR': 'De' },
  to: { en: 'To', 'pt-BR': 'Para' },
  reason: { en: 'Reason', 'pt-BR': 'Motivo' },
  eventId: { en: 'Event', 'pt-BR': 'Evento' },
  personId: { en: 'Person', 'pt-BR': 'Pessoa' },
  guestId: { en: 'Guest', 'pt-BR': 'Convidado' },
  identityId: { en: 'Identity', 'pt-BR': 'Identidade' },
  applicationId: { en: 'Application', 'pt-BR': 'Aplicativo' },
  redeliveryOf: { en: 'Redelivery of', 'pt-BR': 'Reenvio de' },
  imagesErased: { en: 'Photos erased', 'pt-BR': 'Fotos apagadas' },
  checkIns: { en: 'Check-ins', 'pt-BR': 'Check-ins' },
  revokedKeys: { en: 'Keys revoked', 'pt-BR': 'Chaves revogadas' },
  scopes: { en: 'Scopes', 'pt-BR': 'Escopos' },
  step: { en: 'Step', 'pt-BR': 'Etapa' },
  failedLogins: { en: 'Failed sign-ins', 'pt-BR': 'Tentativas falhas' },
  endedSessions: { en: 'Sessions ended', 'pt-BR': 'Sessões encerradas' },
  outcome: { en: 'Outcome', 'pt-BR': 'Resultado' },
  score: { en: 'Score', 'pt-BR': 'Pontuação' },
  rows: { en: 'Rows', 'pt-BR': 'Linhas' },
  created: { en: 'Created', 'pt-BR': 'Criados' },
  updated: { en: 'Updated', 'pt-BR': 'Atualizados' },
  failed: { en: 'Failed', 'pt-BR': 'Com erro' },
  sent: { en: 'Sent', 'pt-BR': 'Enviados' },
  skipped: { en: 'Skipped', 'pt-BR': 'Ignorados' },
  count: { en: 'Count', 'pt-BR': 'Quantidade' },
  mfa: { en: 'Two-step verification', 'pt-BR': 'Verificação em duas etapas' },
  slug: { en: 'Address name', 'pt-BR': 'Nome no endereço' },
  adminEmail: { en: 'Owner’s e-mail', 'pt-BR': 'E-mail do responsável' },
  environment: { en: 'Environment', 'pt-BR': 'Ambiente' },
  status: { en: 'Status', 'pt-BR': 'Situação' },
  method: { en: 'Method', 'pt-BR': 'Método' },
  checkInId: { en: 'Check-in', 'pt-BR': 'Check-in' },
  checkedIn: { en: 'Checked in', 'pt-BR': 'Já tinha entrado' },
  deviceLabel: { en: 'Device', 'pt-BR': 'Dispositivo' },
  eventIds: { en: 'Events', 'pt-BR': 'Eventos' },
  file: { en: 'File', 'pt-BR': 'Arquivo' },
  filters: { en: 'Filters', 'pt-BR': 'Filtros' },
  duplicates: { en: 'Duplicates', 'pt-BR': 'Duplicados' },
  guestsDeidentified: { en: 'Guests de-identified', 'pt-BR': 'Convidados desidentificados' },
  personsAnonymised: { en: 'Persons anonymised', 'pt-BR': 'Pessoas anonimizadas' },
  personIds: { en: 'Persons', 'pt-BR': 'Pessoas' },
  tenantIds: { en: 'Organisations', 'pt-BR': 'Organizações' },
  imageId: { en: 'Photo', 'pt-BR': 'Foto' },
  images: { en: 'Photos', 'pt-BR': 'Fotos' },
  includeImages: { en: 'With photos', 'pt-BR': 'Com fotos' },
  matchedPersonId: { en: 'Matched person', 'pt-BR': 'Pessoa semelhante' },
  modelId: { en: 'Face model', 'pt-BR': 'Modelo facial' },
  pairingCodeId: { en: 'Pairing code', 'pt-BR': 'Código de pareamento' },
  previousSecretValidUntil: { en: 'Previous secret valid until', 'pt-BR': 'Segredo anterior válido até' },
  quality: { en: 'Quality', 'pt-BR': 'Qualidade' },
  viaToken: { en: 'By token', 'pt-BR': 'Por token' },
  livenessScore: { en: 'Liveness score', 'pt-BR': 'Pontuação de prova de vida' },
  geofenceStatus: { en: 'Geofence', 'pt-BR': 'Cerca geográfica' },
  stepUp: { en: 'Second factor', 'pt-BR': 'Segundo fator' },
};

const ENVIRONMENTS: Record<string, Words> = {
  live: { en: 'live', 'pt-BR': 'produção' },
  sandbox: { en: 'sandbox', 'pt-BR': 'sandbox' },
};

const inWords = <T extends object>(words: T, value: string): value is Extract<keyof T, string> =>
  value in words;

/**
 * A detail's value in words when its field holds one of the contract's enums (an event's status moving
 * from / to, a check-in's outcome, reason and method, the environment); otherwise undefined.
 */
export function detailWord(field: string, value: string): string | undefined {
  const words = ENUM_WORDS[lang()];
  if ((field === 'from' || field === 'to' || field === 'status') && inWords(words.eventStatus, value))
    return term('eventStatus', value);
  if (field === 'outcome' && inWords(words.checkinOutcome, value)) return term('checkinOutcome', value);
  if (field === 'reason' && inWords(words.denialReason, value)) return term('denialReason', value);
  if (field === 'method' && inWords(words.checkinMethod, value)) return term('checkinMethod', value);
  if (field === 'environment') return ENVIRONMENTS[value]?.[lang()];
  return undefined;
}

/** A detail's key as a label: a known one in words, another with its camelCase or snake_case spelled out. */
export function detailLabel(key: string): string {
  const known = LABELS[key]?.[lang()];
  if (known) return known;
  const spaced = key
    .replace(/_/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}
