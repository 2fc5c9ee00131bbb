// Self-enrollment from an e-mailed link (`/enroll?token=`): consent, a photo from the camera or a file,
// and the quality measured by the service with what to fix when it is not enough.
import { api, chooseLanguage, el, header, notice, render, translator } from './common.js';

const lang = chooseLanguage();
const t = translator(lang);
const token = new URLSearchParams(location.search).get('token') ?? '';

let personId = null;
let frame = null;
let stream = null;
let needsGuardian = false;

const preview = el('img', { class: 'preview', id: 'preview', alt: '', hidden: true });
const video = el('video', { id: 'camera', autoplay: true, playsinline: true, muted: true, hidden: true });
const result = el('div', { id: 'result' });
const consent = el('input', { type: 'checkbox', id: 'consent' });
const guardian = el('input', { type: 'checkbox', id: 'guardian' });
const guardianRow = el(
  'label',
  { class: 'check', hidden: true, id: 'guardian-row' },
  guardian,
  t('guardian'),
);
const submit = el('button', { id: 'submit', disabled: true, onclick: () => send() }, t('submit'));

function stopCamera() {
  stream?.getTracks().forEach((track) => track.stop());
  stream = null;
  video.hidden = true;
}

function usePhoto(dataUrl) {
  frame = dataUrl;
  preview.src = dataUrl;
  preview.hidden = false;
  submit.disabled = false;
  result.replaceChildren();
}

async function startCamera() {
  try {
    stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'user' }, audio: false });
  } catch {
    result.replaceChildren(notice('error', t('cameraError')));
    return;
  }
  video.srcObject = stream;
  video.hidden = false;
  preview.hidden = true;
  takeButton.hidden = false;
}

const takeButton = el(
  'button',
  {
    id: 'take-photo',
    hidden: true,
    onclick: () => {
      const canvas = el('canvas');
      canvas.width = video.videoWidth;
      canvas.height = video.videoHeight;
      canvas.getContext('2d').drawImage(video, 0, 0);
      usePhoto(canvas.toDataURL('image/jpeg', 0.92));
      stopCamera();
      takeButton.hidden = true;
    },
  },
  t('takePhoto'),
);

const fileInput = el('input', {
  type: 'file',
  id: 'file',
  accept: 'image/jpeg,image/png',
  capture: 'user',
  hidden: true,
  onchange: () => {
    const file = fileInput.files?.[0];
    if (!file) return;
    stopCamera();
    const reader = new FileReader();
    reader.onload = () => usePhoto(String(reader.result));
    reader.readAsDataURL(file);
  },
});

function explain(res) {
  const d = res.data ?? {};
  switch (d.code) {
    case 'face_quality_too_low':
      return [
        notice(
          'error',
          t('qualityLow', { quality: Number(d.quality).toFixed(2), required: Number(d.required).toFixed(2) }),
        ),
        el('p', { class: 'muted' }, t('tips')),
      ];
    case 'no_face_detected':
      return [notice('error', t('noFace')), el('p', { class: 'muted' }, t('tips'))];
    case 'duplicate_face':
      return [notice('error', t('duplicate'))];
    case 'guardian_consent_required':
      needsGuardian = true;
      guardianRow.hidden = false;
      return [notice('error', t('guardianNeeded'))];
    case 'birth_date_required':
      return [notice('error', t('birthDateNeeded'))];
    case 'age_below_minimum':
      return [notice('error', t('tooYoung'))];
    case 'engine_unavailable':
      return [notice('error', t('engineDown'))];
    case 'invalid_token':
    case 'token_expired':
    case 'not_found':
      return [notice('error', t('enrollLinkInvalid'))];
    default:
      return [
        notice(
          'error',
          res.status === 0 ? t('networkError') : t('genericError', { code: d.code ?? res.status }),
        ),
      ];
  }
}

async function send() {
  if (!consent.checked || (needsGuardian && !guardian.checked)) {
    result.replaceChildren(notice('error', t('consentNeeded')));
    return;
  }
  submit.disabled = true;
  result.replaceChildren(el('p', { class: 'muted' }, t('sending')));
  const body = { personId, enrollment_token: token, frame };
  if (needsGuardian) body.guardianConsent = { relationship: 'parent', given: true };
  const res = await api('POST', '/v1/public/onboarding/enroll', { body });
  submit.disabled = false;
  if (res.ok) {
    submit.hidden = true;
    result.replaceChildren(
      el(
        'p',
        { class: 'notice ok quality', role: 'status' },
        t('enrolledOk', { quality: res.data.quality.toFixed(2) }),
      ),
    );
    return;
  }
  result.replaceChildren(...explain(res));
}

async function start() {
  render(header(t, lang, t('enrollTitle')), el('p', { class: 'muted' }, t('loading')));
  const res = await api('POST', '/v1/public/onboarding/verify-token', { body: { enrollment_token: token } });
  if (!res.ok) return render(header(t, lang, t('enrollTitle')), notice('error', t('enrollLinkInvalid')));
  personId = res.data.personId;
  render(
    header(t, lang, t('enrollTitle')),
    el(
      'section',
      { class: 'card' },
      el('p', {}, t('enrollIntro')),
      el('label', { class: 'check' }, consent, t('consent')),
      guardianRow,
      el(
        'div',
        { class: 'row' },
        el('button', { class: 'secondary', id: 'use-camera', onclick: startCamera }, t('useCamera')),
        el(
          'button',
          { class: 'secondary', id: 'choose-file', onclick: () => fileInput.click() },
          t('chooseFile'),
        ),
        fileInput,
      ),
      el('p', {}, video, preview),
      el('div', { class: 'row' }, takeButton, submit),
      result,
    ),
  );
}

start();
