// What the console says when a call fails: one sentence in the console's language per stable error
// `code` (the API's English `detail` is written for integrators), with the code and request id kept
// for support. Keyed by the contract's codes, so a new code does not compile until it has its words.
import type { ErrorCode, EventStatus } from '@portico/contract';
import { ENUM_WORDS } from '@portico/contract/words';
import { PorticoError, PorticoHttpError } from '@portico/sdk';
import { lang, term } from './i18n.js';
import type { Lang } from './texts.js';

/** A failed call as the console shows it: `message` for the person, `code` and `requestId` for support. */
export interface ShownError {
  message: string;
  code?: string;
  requestId?: string;
}

const EN: Record<ErrorCode, string> = {
  validation_failed: 'Some fields are not valid. Check them and try again.',
  malformed_json: 'The console sent a request the service could not read. Reload the page and try again.',
  payload_too_large: 'This is too large to send.',
  headers_too_large: 'The request was too large. Reload the page and try again.',
  malformed_request: 'The service could not read this request. Reload the page and try again.',
  request_timeout: 'The service took too long to answer. Try again.',
  unsupported_media_type: 'This kind of file or content is not accepted.',
  not_found: 'It is not there any more: it may have been removed. Reload the page.',
  unauthorized: 'Your session has ended. Sign in again.',
  invalid_token: 'This link or session is no longer valid. Sign in again.',
  token_expired: 'Your session has expired. Sign in again.',
  forbidden: 'Your role does not allow this. Ask an owner or admin of the organisation.',
  insufficient_scope: 'This key is not allowed to do this.',
  conflict: 'Someone changed this at the same time. Reload the page and try again.',
  rate_limited: 'Too many attempts in a short time. Wait a moment and try again.',
  mfa_required: 'Enter the code from your authenticator app to continue.',
  mfa_setup_required:
    'Your organisation requires two-step verification: turn it on before doing anything else.',
  invalid_mfa_code: 'That code is not right. Enter the current 6-digit code from your authenticator app.',
  invalid_reset_token:
    'This reset link no longer works (it was used, replaced or is too old). Ask for a new one.',
  invalid_credentials: 'The e-mail or password is not right.',
  account_locked: 'Too many failed sign-ins: the account is locked for a while. Try again later.',
  refresh_token_reused: 'Your session was ended for safety. Sign in again.',
  invalid_api_key: 'This API key is not valid.',
  invalid_base64: 'The photo could not be read. Choose another file.',
  unsupported_image: 'This image format is not supported. Use a JPEG or PNG photo.',
  image_too_large: 'The photo is too large. Use a smaller one.',
  no_face_detected: 'No face was found in the photo. Use a photo where the face is clearly visible.',
  face_quality_too_low: 'The photo is not good enough: use a sharper, well-lit photo facing the camera.',
  duplicate_face: 'This face is already enrolled for another person.',
  photos_differ: 'The photos do not seem to show the same person.',
  liveness_failed: 'The liveness check failed. Try again facing the camera.',
  face_retake: 'Take the photo again, facing the camera.',
  step_up_factor_not_allowed: 'This second factor is not allowed at this organisation.',
  step_up_used: 'This confirmation was already used. Start again.',
  step_up_expired: 'This confirmation has expired. Start again.',
  invalid_nonce: 'This request was already used or has expired. Try again.',
  invalid_pairing_code: 'This pairing code is not valid or has expired. Get a new one.',
  anonymous_identify_not_allowed: 'Identifying someone without an event is not allowed here.',
  qr_token_expired: 'This QR code has expired. Ask for a new one.',
  too_many_rows: 'The file has too many rows. Split it into smaller files.',
  email_required: 'An e-mail address is needed for this.',
  self_registration_off: 'Self-registration is turned off for this organisation.',
  invitation_required: 'An invitation is needed to register.',
  age_below_minimum: 'This person is below the minimum age set for the organisation.',
  birth_date_required: 'A birth date is needed for this.',
  guardian_consent_required: 'A guardian’s consent is needed for this person.',
  invalid_transition: 'The event cannot go from {from} to {to}.',
  event_full: 'The event is full: its capacity is reached.',
  event_not_open: 'The event is not open for check-in.',
  event_not_published:
    'This event is a draft: its invitation links would not work yet. Publish it first (“Publish and invite”).',
  ends_before_start: 'The event cannot end before it starts. Check the start and end times.',
  capacity_below_checked_in: 'The capacity cannot be lower than the {checkedIn} guests already checked in.',
  already_checked_in: 'This guest is already checked in.',
  already_voided: 'This check-in was already undone.',
  checkin_not_admitted: 'This check-in was not an admission, so there is nothing to undo.',
  duplicate_guest: 'Another guest of this event has the same e-mail, document or person.',
  unsupported_file: 'This file is not a spreadsheet the service reads. Use CSV or XLSX.',
  webhook_url_not_set: 'Set a webhook URL first.',
  idempotency_key_reused: 'This request was already sent with other data. Reload the page and try again.',
  idempotency_key_in_use: 'The same request is still being handled. Wait a moment.',
  already_member: 'This address is already in the team.',
  email_in_use: 'This address already has an account with another organisation. Use another address.',
  last_owner: 'The organisation needs an active owner: make someone else owner first.',
  cannot_deactivate_self: 'You cannot deactivate your own account.',
  owner_only: 'Only an owner can make, change or deactivate an owner.',
  not_invited: 'This person is not waiting for an invitation.',
  invitation_invalid: 'This invitation link no longer works: it was used or replaced. Ask for a new one.',
  invitation_expired: 'This invitation link has expired. Ask the person who invited you to send a new one.',
  engine_unavailable: 'Face recognition is not available right now. Try again in a moment.',
  service_unavailable: 'The service is not available right now. Try again in a moment.',
  internal_error: 'Something went wrong on the service. Try again; if it happens again, contact support.',
};

const PT_BR: Record<ErrorCode, string> = {
  validation_failed: 'Alguns campos não são válidos. Confira e tente de novo.',
  malformed_json:
    'O console enviou um pedido que o serviço não conseguiu ler. Recarregue a página e tente de novo.',
  payload_too_large: 'Isto é grande demais para enviar.',
  headers_too_large: 'O pedido ficou grande demais. Recarregue a página e tente de novo.',
  malformed_request: 'O serviço não conseguiu ler este pedido. Recarregue a página e tente de novo.',
  request_timeout: 'O serviço demorou demais para responder. Tente de novo.',
  unsupported_media_type: 'Este tipo de arquivo ou conteúdo não é aceito.',
  not_found: 'Isto não existe mais: pode ter sido removido. Recarregue a página.',
  unauthorized: 'Sua sessão terminou. Entre de novo.',
  invalid_token: 'Este link ou sessão não é mais válido. Entre de novo.',
  token_expired: 'Sua sessão expirou. Entre de novo.',
  forbidden: 'Seu papel não permite isto. Peça a um proprietário ou administrador da organização.',
  insufficient_scope: 'Esta chave não tem permissão para isto.',
  conflict: 'Alguém alterou isto ao mesmo tempo. Recarregue a página e tente de novo.',
  rate_limited: 'Muitas tentativas em pouco tempo. Aguarde um momento e tente de novo.',
  mfa_required: 'Digite o código do seu aplicativo autenticador para continuar.',
  mfa_setup_required:
    'Sua organização exige a verificação em duas etapas: ative-a antes de fazer qualquer outra coisa.',
  invalid_mfa_code: 'Código incorreto. Digite o código atual de 6 dígitos do seu aplicativo autenticador.',
  invalid_reset_token:
    'Este link de redefinição não funciona mais (foi usado, substituído ou é antigo demais). Peça um novo.',
  invalid_credentials: 'E-mail ou senha incorretos.',
  account_locked: 'Muitas tentativas de entrada: a conta está bloqueada por um tempo. Tente mais tarde.',
  refresh_token_reused: 'Sua sessão foi encerrada por segurança. Entre de novo.',
  invalid_api_key: 'Esta chave de API não é válida.',
  invalid_base64: 'Não foi possível ler a foto. Escolha outro arquivo.',
  unsupported_image: 'Formato de imagem não suportado. Use uma foto JPEG ou PNG.',
  image_too_large: 'A foto é grande demais. Use uma menor.',
  no_face_detected: 'Nenhum rosto encontrado na foto. Use uma foto com o rosto bem visível.',
  face_quality_too_low: 'A foto não é boa o bastante: use uma foto nítida, bem iluminada e de frente.',
  duplicate_face: 'Este rosto já está cadastrado para outra pessoa.',
  photos_differ: 'As fotos não parecem ser da mesma pessoa.',
  liveness_failed: 'A prova de vida falhou. Tente de novo, de frente para a câmera.',
  face_retake: 'Tire a foto de novo, de frente para a câmera.',
  step_up_factor_not_allowed: 'Este segundo fator não é permitido nesta organização.',
  step_up_used: 'Esta confirmação já foi usada. Comece de novo.',
  step_up_expired: 'Esta confirmação expirou. Comece de novo.',
  invalid_nonce: 'Este pedido já foi usado ou expirou. Tente de novo.',
  invalid_pairing_code: 'Este código de pareamento não é válido ou expirou. Gere um novo.',
  anonymous_identify_not_allowed: 'Identificar alguém sem um evento não é permitido aqui.',
  qr_token_expired: 'Este QR code expirou. Peça um novo.',
  too_many_rows: 'O arquivo tem linhas demais. Divida-o em arquivos menores.',
  email_required: 'É preciso um endereço de e-mail para isto.',
  self_registration_off: 'O autocadastro está desativado nesta organização.',
  invitation_required: 'É preciso um convite para se cadastrar.',
  age_below_minimum: 'Esta pessoa tem menos que a idade mínima definida pela organização.',
  birth_date_required: 'É preciso a data de nascimento para isto.',
  guardian_consent_required: 'É preciso o consentimento de um responsável para esta pessoa.',
  invalid_transition: 'O evento não pode passar de {from} para {to}.',
  event_full: 'O evento está lotado: a capacidade foi atingida.',
  event_not_open: 'O evento não está aberto para entradas.',
  event_not_published:
    'Este evento é um rascunho: os links dos convites ainda não funcionariam. Publique-o antes (“Publicar e convidar”).',
  ends_before_start: 'O evento não pode terminar antes de começar. Confira o início e o término.',
  capacity_below_checked_in: 'A capacidade não pode ser menor que os {checkedIn} convidados que já entraram.',
  already_checked_in: 'Este convidado já entrou.',
  already_voided: 'Esta entrada já foi desfeita.',
  checkin_not_admitted: 'Esta entrada não foi uma admissão; não há o que desfazer.',
  duplicate_guest: 'Outro convidado deste evento tem o mesmo e-mail, documento ou pessoa.',
  unsupported_file: 'Este arquivo não é uma planilha que o serviço lê. Use CSV ou XLSX.',
  webhook_url_not_set: 'Defina primeiro uma URL de webhook.',
  idempotency_key_reused: 'Este pedido já foi enviado com outros dados. Recarregue a página e tente de novo.',
  idempotency_key_in_use: 'O mesmo pedido ainda está sendo tratado. Aguarde um momento.',
  already_member: 'Este endereço já está na equipe.',
  email_in_use: 'Este endereço já tem uma conta em outra organização. Use outro endereço.',
  last_owner: 'A organização precisa de um proprietário ativo: torne outra pessoa proprietária antes.',
  cannot_deactivate_self: 'Você não pode desativar a sua própria conta.',
  owner_only: 'Só um proprietário pode criar, alterar ou desativar um proprietário.',
  not_invited: 'Esta pessoa não está aguardando um convite.',
  invitation_invalid: 'Este link de convite não funciona mais: já foi usado ou substituído. Peça um novo.',
  invitation_expired: 'Este link de convite expirou. Peça a quem convidou você que envie um novo.',
  engine_unavailable: 'O reconhecimento facial não está disponível agora. Tente de novo em instantes.',
  service_unavailable: 'O serviço não está disponível agora. Tente de novo em instantes.',
  internal_error: 'Algo deu errado no serviço. Tente de novo; se repetir, fale com o suporte.',
};

const TEXTS: Record<Lang, Record<ErrorCode, string>> = { en: EN, 'pt-BR': PT_BR };

/** When the answer has no code the console knows (a newer service, a proxy's page, no connection). */
const GENERIC: Record<Lang, { refused: string; failed: string; unreachable: string }> = {
  en: {
    refused: 'The service refused this request.',
    failed: 'Something went wrong on the service. Try again in a moment.',
    unreachable: 'The service could not be reached. Check the connection and try again.',
  },
  'pt-BR': {
    refused: 'O serviço recusou este pedido.',
    failed: 'Algo deu errado no serviço. Tente de novo em instantes.',
    unreachable: 'Não foi possível falar com o serviço. Confira a conexão e tente de novo.',
  },
};

/** The sentence for `code` in the console's language, `{name}` filled from the problem's fields. */
export function errorText(code: string, fields: Record<string, unknown> = {}): string | undefined {
  const text = (TEXTS[lang()] as Record<string, string | undefined>)[code];
  return text?.replace(/\{(\w+)\}/g, (_, k: string) => {
    const v = fields[k];
    // Only `invalid_transition` names enum values: {from} and {to} are event statuses.
    if (typeof v === 'string') return isEventStatus(v) ? term('eventStatus', v) : v;
    return typeof v === 'number' ? String(v) : '';
  });
}

/** A failed call (or any thrown value) as the console shows it. */
export function shownError(err: unknown): ShownError {
  const generic = GENERIC[lang()];
  if (err instanceof PorticoError) {
    return {
      message: errorText(err.code, err.problem) ?? (err.status >= 500 ? generic.failed : generic.refused),
      code: err.code,
      ...(err.requestId ? { requestId: err.requestId } : {}),
    };
  }
  if (err instanceof PorticoHttpError) {
    return { message: err.status >= 500 ? generic.failed : generic.refused, code: `HTTP ${err.status}` };
  }
  // fetch fails with a TypeError when the service cannot be reached; other errors are the console's own
  // (already in the console's language).
  if (err instanceof TypeError) return { message: generic.unreachable, code: err.message };
  return { message: err instanceof Error ? err.message : String(err) };
}

const isEventStatus = (v: string): v is EventStatus => v in ENUM_WORDS.en.eventStatus;
