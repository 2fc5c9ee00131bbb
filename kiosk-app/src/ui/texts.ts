// Every word the kiosk shows, in English and Brazilian Portuguese. The event's branding locale picks
// the language (pt* -> pt-BR, anything else -> en); short sentences, read from two metres away.
export type Lang = 'en' | 'pt-BR';

const en = {
  tapToStart: 'Touch the screen to check in',
  lookAtCamera: 'Look at the camera',
  fitOval: 'Put your face inside the oval',
  tooDark: 'Too dark: face the light',
  noFace: 'We cannot see your face: come closer, into the oval',
  holdStill: 'Hold still',
  step: (n: number, of: number) => `Step ${n} of ${of}`,
  blink: 'Blink your eyes',
  turnHead: 'Turn your head left, then back',
  checking: 'Checking…',
  welcome: (first: string) => `Welcome, ${first}!`,
  welcomeSub: 'You are checked in.',
  notRecognised: 'We did not recognise you',
  notRecognisedSub: 'Try again, or ask a member of staff.',
  tryAgain: 'Try again',
  livenessFailed: 'We could not confirm it is you',
  livenessFailedSub: 'Please follow the instructions on the screen.',
  geofence: 'This check-in is outside the event area',
  geofenceSub: 'Please ask a member of staff.',
  closed: 'The event is not open for check-in',
  closedSub: 'Please ask a member of staff.',
  full: 'The event is full',
  fullSub: 'Please ask a member of staff.',
  methodNotAllowed: 'Face check-in is not used at this event',
  unavailable: 'Check-in is not available right now',
  unavailableSub: 'Please ask a member of staff.',
  cameraBlocked: 'The camera is not available',
  offline: (n: number) => `Offline: check-ins still work and are saved here (${n} waiting to upload)`,
};
type Texts = typeof en;

const ptBR: Texts = {
  tapToStart: 'Toque na tela para fazer o check-in',
  lookAtCamera: 'Olhe para a câmera',
  fitOval: 'Coloque o rosto dentro do oval',
  tooDark: 'Muito escuro: fique de frente para a luz',
  noFace: 'Não vemos seu rosto: chegue mais perto, dentro do oval',
  holdStill: 'Fique parado',
  step: (n, of) => `Passo ${n} de ${of}`,
  blink: 'Pisque os olhos',
  turnHead: 'Vire a cabeça para a esquerda e volte',
  checking: 'Verificando…',
  welcome: (first) => `Bem-vindo(a), ${first}!`,
  welcomeSub: 'Seu check-in foi feito.',
  notRecognised: 'Não reconhecemos você',
  notRecognisedSub: 'Tente de novo ou fale com a equipe.',
  tryAgain: 'Tentar de novo',
  livenessFailed: 'Não conseguimos confirmar que é você',
  livenessFailedSub: 'Siga as instruções da tela.',
  geofence: 'Este check-in está fora da área do evento',
  geofenceSub: 'Fale com a equipe.',
  closed: 'O evento não está aberto para check-in',
  closedSub: 'Fale com a equipe.',
  full: 'O evento está lotado',
  fullSub: 'Fale com a equipe.',
  methodNotAllowed: 'Este evento não usa check-in pelo rosto',
  unavailable: 'O check-in não está disponível agora',
  unavailableSub: 'Fale com a equipe.',
  cameraBlocked: 'A câmera não está disponível',
  offline: (n) => `Sem conexão: o check-in continua funcionando e fica salvo aqui (${n} para enviar)`,
};

export function textsFor(locale: string | undefined): { lang: Lang; t: Texts } {
  return locale?.toLowerCase().startsWith('pt') ? { lang: 'pt-BR', t: ptBR } : { lang: 'en', t: en };
}
