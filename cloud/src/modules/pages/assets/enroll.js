// Self-enrollment from an e-mailed link (`/enroll?token=`): consent, then three photos by default (the
// camera guides a straight look and small head turns to each side) or one to three chosen files, sent
// together as `frames`; the service's answer says what to fix, naming the photo when it can.
import {
  api,
  el,
  formatScore,
  header,
  notice,
  pageLanguage,
  problemText,
  render,
  translator,
} from './common.js';

const token = new URLSearchParams(location.search).get('token') ?? '';
// The link is checked first: its answer names the organisation and the language the service chose.
const verified = await api('POST', '/v1/public/onboarding/verify-token', {
  body: { enrollment_token: token },
});
const lang = pageLanguage(verified.data?.locale);
const t = translator(lang);

/** What the camera asks for each photo, in order; a slight turn (10-15 degrees) keeps the face usable. */
const STEPS = [
  { say: 'stepStraight', label: 'thumbStraight' },
  { say: 'stepLeft', label: 'thumbLeft' },
  { say: 'stepRight', label: 'thumbRight' },
];
/** Files larger than this are scaled down before sending, so three phone photos fit the body limit. */
const LARGE_FILE = 2_000_000;
const MAX_SIDE = 1600;

let personId = null;
/** The photos in the order they are sent: `{ dataUrl, from: 'camera' | 'file' }`. */
let photos = [];
/** The "use one photo" fallback: the camera stops after the first photo. */
let onePhoto = false;
/** The photo the camera is taking (an index into `photos`), null while it is off. */
let slot = null;
let stream = null;
let needsGuardian = false;
/** Indexes of the photos the service refused, shown on their thumbnails. */
let refused = new Set();

const wanted = () => (onePhoto ? 1 : STEPS.length);

const video = el('video', { id: 'camera', class: 'mirror', autoplay: true, playsinline: true, muted: true });
const stepLine = el('p', { id: 'step', class: 'step' });
const instruction = el('p', { id: 'instruction', class: 'instruction' });
const takeButton = el('button', { id: 'take-photo', onclick: () => take() });
const cameraBox = el(
  'div',
  { id: 'camera-box', class: 'camera-box', hidden: true },
  stepLine,
  instruction,
  video,
  el('div', { class: 'row' }, takeButton),
);
const thumbs = el('ol', { id: 'thumbs', class: 'thumbs', hidden: true });
const filesHint = el('p', { class: 'muted', id: 'files-hint' }, t('filesHint'));
const modeButton = el('button', { class: 'link', id: 'one-photo', onclick: () => toggleOnePhoto() });
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

const fileInput = el('input', {
  type: 'file',
  id: 'file',
  accept: 'image/jpeg,image/png',
  multiple: true,
  hidden: true,
  onchange: () => void useFiles([...(fileInput.files ?? [])]),
});

const sources = el(
  'div',
  { class: 'row', id: 'sources' },
  el('button', { id: 'use-camera', onclick: () => startCamera() }, t('useCamera')),
  el('button', { class: 'secondary', id: 'choose-file', onclick: () => fileInput.click() }, t('chooseFiles')),
  fileInput,
);

/** Redraws what depends on the state: the camera's step, the thumbnails, the buttons. */
function update() {
  cameraBox.hidden = slot === null;
  // Once the camera runs or photos are there, the hint about files is only clutter.
  filesHint.hidden = slot !== null || photos.length > 0;
  if (slot !== null) {
    stepLine.textContent = t('stepOf', { n: slot + 1, total: wanted() });
    instruction.textContent = t(STEPS[slot].say);
    takeButton.textContent = t('takePhotoN', { n: slot + 1 });
  }
  thumbs.hidden = photos.length === 0;
  thumbs.replaceChildren(...photos.map(thumbnail));
  modeButton.textContent = onePhoto ? t('useThreePhotos') : t('useOnePhoto');
  modeButton.hidden = photos.some((p) => p.from === 'file');
  // While the camera runs the set is not complete: nothing to send yet.
  submit.hidden = slot !== null;
  submit.disabled = photos.length === 0;
  submit.textContent = photos.length > 1 ? t('submitPhotos', { count: photos.length }) : t('submit');
}

function thumbnail(photo, i) {
  const n = i + 1;
  const label = photo.from === 'camera' ? t(STEPS[i].label) : t('thumbFile', { n });
  const button =
    photo.from === 'camera'
      ? el(
          'button',
          {
            class: 'secondary',
            id: `retake-${n}`,
            'aria-label': t('retakeN', { n }),
            onclick: () => startCamera(i),
          },
          t('retake'),
        )
      : el(
          'button',
          {
            class: 'secondary',
            id: `remove-${n}`,
            'aria-label': t('removeN', { n }),
            onclick: () => remove(i),
          },
          t('remove'),
        );
  return el(
    'li',
    { class: refused.has(i) ? 'refused' : slot === i ? 'current' : undefined },
    el('img', { src: photo.dataUrl, alt: t('photoN', { n }) }),
    el('span', { class: 'caption' }, `${n} · ${label}`),
    button,
  );
}

function stopCamera() {
  stream?.getTracks().forEach((track) => track.stop());
  stream = null;
  slot = null;
}

/** Opens the camera on photo `at` (the next one missing by default): a retake or the next step. */
async function startCamera(at = photos.length) {
  if (at >= wanted()) at = 0;
  if (!stream) {
    try {
      stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'user' }, audio: false });
    } catch {
      stream = null;
      result.replaceChildren(notice('error', t('cameraError')));
      return;
    }
    video.srcObject = stream;
  }
  // Files and camera photos are not mixed: the camera starts a new set.
  if (photos.some((p) => p.from === 'file')) photos = [];
  slot = Math.min(at, photos.length);
  result.replaceChildren();
  update();
  cameraBox.scrollIntoView({ block: 'nearest' });
}

function take() {
  const canvas = el('canvas');
  canvas.width = video.videoWidth;
  canvas.height = video.videoHeight;
  canvas.getContext('2d').drawImage(video, 0, 0);
  photos[slot] = { dataUrl: canvas.toDataURL('image/jpeg', 0.92), from: 'camera' };
  refused.delete(slot);
  // The next missing photo, or the camera is done.
  if (photos.length < wanted()) slot = photos.length;
  else stopCamera();
  update();
}

function toggleOnePhoto() {
  onePhoto = !onePhoto;
  if (onePhoto) {
    photos = photos.slice(0, 1);
    refused = new Set([...refused].filter((i) => i === 0));
    if (slot !== null && photos.length === 1 && slot !== 0) stopCamera();
    update();
  } else if (photos.length > 0 && photos.length < wanted()) {
    void startCamera(photos.length);
  } else {
    update();
  }
}

function remove(i) {
  photos.splice(i, 1);
  refused = new Set([...refused].filter((j) => j !== i).map((j) => (j > i ? j - 1 : j)));
  update();
}

/** A file as a data URL; a large one scaled down (the browser applies its EXIF orientation). */
async function readPhoto(file) {
  if (file.size > LARGE_FILE) {
    try {
      const bitmap = await createImageBitmap(file);
      const scale = Math.min(1, MAX_SIDE / Math.max(bitmap.width, bitmap.height));
      const canvas = el('canvas');
      canvas.width = Math.round(bitmap.width * scale);
      canvas.height = Math.round(bitmap.height * scale);
      canvas.getContext('2d').drawImage(bitmap, 0, 0, canvas.width, canvas.height);
      return canvas.toDataURL('image/jpeg', 0.92);
    } catch {
      // Not decodable here: send it as it is and let the service say what is wrong.
    }
  }
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

async function useFiles(files) {
  fileInput.value = '';
  if (files.length === 0) return;
  stopCamera();
  const chosen = files.slice(0, STEPS.length);
  photos = await Promise.all(chosen.map(async (file) => ({ dataUrl: await readPhoto(file), from: 'file' })));
  refused = new Set();
  result.replaceChildren(...(files.length > chosen.length ? [notice('error', t('tooManyFiles'))] : []));
  update();
}

/** The photo a refusal is about, 1-based, when the service said which (only with several photos). */
function photoNumber(d) {
  return photos.length > 1 && Number.isInteger(d.photo) ? d.photo + 1 : null;
}

/** What to do about refused photos: retake them (camera) or choose others (files). */
function fixIt() {
  return el('p', {}, photos.some((p) => p.from === 'file') ? t('fixChoose') : t('fixRetake'));
}

function explain(res) {
  const d = res.data ?? {};
  const tips = el('p', { class: 'muted' }, photos.length > 1 ? t('tipsMany') : t('tips'));
  switch (d.code) {
    case 'face_quality_too_low': {
      const n = photoNumber(d);
      const vars = { n, quality: formatScore(lang, d.quality), required: formatScore(lang, d.required) };
      if (n) refused.add(n - 1);
      return [
        notice('error', n ? t('qualityLowPhoto', vars) : t('qualityLow', vars)),
        n ? fixIt() : null,
        tips,
      ];
    }
    case 'photos_differ': {
      const [a, b] = Array.isArray(d.photos) ? d.photos : [];
      if (Number.isInteger(a) && Number.isInteger(b)) {
        refused.add(a).add(b);
        return [notice('error', t('photosDiffer', { a: a + 1, b: b + 1 })), fixIt()];
      }
      return [notice('error', t('photosDifferAny'))];
    }
    case 'no_face_detected':
      return [notice('error', photos.length > 1 ? t('noFaceMany') : t('noFace')), tips];
    case 'invalid_base64':
    case 'unsupported_image':
      return [notice('error', t('unreadablePhoto'))];
    case 'image_too_large':
      return [notice('error', t('photoTooLarge'))];
    case 'payload_too_large':
      return [notice('error', t('photosTooLarge'))];
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
      return [notice('error', problemText(t, res))];
  }
}

async function send() {
  if (!consent.checked || (needsGuardian && !guardian.checked)) {
    result.replaceChildren(notice('error', t('consentNeeded')));
    return;
  }
  submit.disabled = true;
  refused = new Set();
  result.replaceChildren(el('p', { class: 'muted' }, photos.length > 1 ? t('sendingMany') : t('sending')));
  const body = { personId, enrollment_token: token, frames: photos.map((p) => p.dataUrl) };
  if (needsGuardian) body.guardianConsent = { relationship: 'parent', given: true };
  const res = await api('POST', '/v1/public/onboarding/enroll', { body });
  if (res.ok) {
    submit.hidden = true;
    cameraBox.hidden = true;
    sources.hidden = true;
    for (const button of thumbs.querySelectorAll('button')) button.hidden = true;
    modeButton.hidden = true;
    const vars = { quality: formatScore(lang, res.data.quality), count: res.data.photos };
    result.replaceChildren(
      el(
        'p',
        { class: 'notice ok quality', role: 'status' },
        res.data.photos > 1 ? t('enrolledOkMany', vars) : t('enrolledOk', vars),
      ),
    );
    return;
  }
  const why = explain(res);
  update();
  result.replaceChildren(...why.filter(Boolean));
}

async function start() {
  const res = verified;
  if (!res.ok) return render(header(t, lang, t('enrollTitle')), notice('error', t('enrollLinkInvalid')));
  personId = res.data.personId;
  update();
  render(
    header(t, lang, t('enrollTitle')),
    el('section', { class: 'hero' }, el('h1', { id: 'organiser' }, res.data.organisation.name)),
    el(
      'section',
      { class: 'card' },
      el('p', {}, t('enrollIntro')),
      el('label', { class: 'check' }, consent, t('consent')),
      guardianRow,
      sources,
      filesHint,
      cameraBox,
      thumbs,
      el('div', { class: 'row' }, submit, modeButton),
      result,
    ),
  );
}

start();
