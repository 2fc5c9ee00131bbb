// Face photos for enrollment: three by default, from the admin's webcam in guided steps (straight, head
// turned slightly left, slightly right) or one to three uploaded files, each with its quality checked by
// the service (nothing is stored) before the admin saves; a refusal on saving names the photo.
import type { AdminFaceQuality } from '@portico/contract';
import { ok, PorticoError } from '@portico/sdk';
import { useEffect, useRef, useState } from 'preact/hooks';
import { t } from './i18n.js';
import type { TextKey } from './texts.js';
import type { Session } from './session.js';
import { useAction } from './hooks.js';
import { Badge, ErrorNote } from './components/feedback.js';

/** The webcam's steps, in the order the photos are sent; small turns (10-15 degrees) keep the face usable. */
const STEPS: ReadonlyArray<{ say: TextKey; angle: TextKey }> = [
  { say: 'stepStraight', angle: 'angleStraight' },
  { say: 'stepLeft', angle: 'angleLeft' },
  { say: 'stepRight', angle: 'angleRight' },
];
/** Files larger than this are scaled down before sending, so three photos fit the body limit. */
const LARGE_FILE = 2_000_000;
const MAX_SIDE = 1600;

interface Shot {
  /** Tells a quality answer which photo it is about, even after a retake. */
  id: number;
  dataUrl: string;
  from: 'webcam' | 'file';
  quality: AdminFaceQuality | null;
}

let nextId = 1;

/** A file as a data URL; a large one scaled down (the browser applies its EXIF orientation). */
async function readPhoto(file: File): Promise<string> {
  if (file.size > LARGE_FILE) {
    try {
      const bitmap = await createImageBitmap(file);
      const scale = Math.min(1, MAX_SIDE / Math.max(bitmap.width, bitmap.height));
      const canvas = document.createElement('canvas');
      canvas.width = Math.round(bitmap.width * scale);
      canvas.height = Math.round(bitmap.height * scale);
      canvas.getContext('2d')!.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
      return canvas.toDataURL('image/jpeg', 0.92);
    } catch {
      // Not decodable here: send it as it is and let the service say what is wrong.
    }
  }
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error('unreadable file'));
    reader.readAsDataURL(file);
  });
}

/**
 * Why the service refused an enrollment's photos, in the admin's language, and which photos (0-based)
 * it named; null for any other error (shown as the service's own message).
 */
export function enrollmentRefusal(err: unknown, count: number): { message: string; photos: number[] } | null {
  if (!(err instanceof PorticoError)) return null;
  const p = err.problem as Record<string, unknown>;
  const isIndex = (v: unknown): v is number => Number.isInteger(v);
  switch (err.code) {
    case 'face_quality_too_low': {
      const vars = { quality: Number(p.quality).toFixed(2), required: Number(p.required).toFixed(2) };
      if (count > 1 && isIndex(p.photo))
        return { message: t('enrollQualityLow', { ...vars, n: p.photo + 1 }), photos: [p.photo] };
      return { message: t('enrollQualityLowOne', vars), photos: count === 1 ? [0] : [] };
    }
    case 'photos_differ': {
      const [a, b] = Array.isArray(p.photos) ? (p.photos as unknown[]) : [];
      if (!isIndex(a) || !isIndex(b)) return null;
      return { message: t('enrollPhotosDiffer', { a: a + 1, b: b + 1 }), photos: [a, b] };
    }
    case 'no_face_detected':
      return { message: count > 1 ? t('enrollNoFace') : t('enrollNoFaceOne'), photos: [] };
    case 'invalid_base64':
    case 'unsupported_image':
      return { message: t('enrollUnreadable'), photos: [] };
    case 'image_too_large':
    case 'payload_too_large':
      return { message: t('enrollTooLarge'), photos: [] };
    case 'duplicate_face':
      return { message: t('enrollDuplicate'), photos: [] };
    default:
      return null;
  }
}

export function PhotoPicker(props: {
  session: Session;
  /** The photos to enroll, in order (none: save without enrolling); null while the webcam is taking them. */
  onPhotos: (dataUrls: string[] | null) => void;
  /** Photos (0-based) the service refused on the last save, marked until they change. */
  refused?: readonly number[];
}) {
  const [photos, setPhotos] = useState<Shot[]>([]);
  const [onePhoto, setOnePhoto] = useState(false);
  /** The photo the webcam is taking, null while it is off. */
  const [slot, setSlot] = useState<number | null>(null);
  const [stream, setStream] = useState<MediaStream | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const video = useRef<HTMLVideoElement>(null);
  const action = useAction();
  const wanted = onePhoto ? 1 : STEPS.length;

  useEffect(() => {
    if (video.current && stream) video.current.srcObject = stream;
    return () => stream?.getTracks().forEach((track) => track.stop());
  }, [stream]);
  const dataUrls = photos.map((p) => p.dataUrl);
  const taking = slot !== null;
  useEffect(() => props.onPhotos(taking ? null : dataUrls), [taking, dataUrls.join('\n')]);

  /** Asks the service for each new photo's quality; the answer lands on that photo if it is still there. */
  const checkQuality = (shots: Shot[]) =>
    action.run(async () => {
      await Promise.all(
        shots.map(async (shot) => {
          const quality = ok(
            await props.session.api.POST('/v1/admin/face-quality', { body: { image: shot.dataUrl } }),
          );
          setPhotos((list) => list.map((p) => (p.id === shot.id ? { ...p, quality } : p)));
        }),
      );
    });

  const stopWebcam = () => {
    setStream(null);
    setSlot(null);
  };
  /** Opens the webcam on photo `at`: the next step, or a retake; `fresh` starts a new set. */
  const startWebcam = (at: number, fresh = false) =>
    action.run(async () => {
      if (!stream)
        setStream(await navigator.mediaDevices.getUserMedia({ video: { width: 640, height: 480 } }));
      setNote(null);
      // Uploaded files and webcam photos are not mixed: the webcam starts a new set.
      const keep = fresh || photos.some((p) => p.from === 'file') ? [] : photos;
      if (keep !== photos) setPhotos(keep);
      setSlot(Math.min(at, keep.length));
    });
  const takePhoto = () => {
    const v = video.current!;
    const canvas = document.createElement('canvas');
    canvas.width = v.videoWidth;
    canvas.height = v.videoHeight;
    canvas.getContext('2d')!.drawImage(v, 0, 0);
    const shot: Shot = {
      id: nextId++,
      dataUrl: canvas.toDataURL('image/jpeg', 0.92),
      from: 'webcam',
      quality: null,
    };
    const next = [...photos];
    next[slot!] = shot;
    setPhotos(next);
    // The next missing photo, or the webcam is done.
    if (next.length < wanted) setSlot(next.length);
    else stopWebcam();
    void checkQuality([shot]);
  };
  const fromFiles = (e: Event) => {
    const input = e.currentTarget as HTMLInputElement;
    const files = [...(input.files ?? [])];
    input.value = '';
    if (files.length === 0) return;
    stopWebcam();
    void action.run(async () => {
      const chosen = files.slice(0, STEPS.length);
      const shots = await Promise.all(
        chosen.map(async (file): Promise<Shot> => ({
          id: nextId++,
          dataUrl: await readPhoto(file),
          from: 'file',
          quality: null,
        })),
      );
      setPhotos(shots);
      setNote(files.length > chosen.length ? t('tooManyPhotos') : null);
      await checkQuality(shots);
    });
  };
  const toggleOnePhoto = () => {
    const one = !onePhoto;
    setOnePhoto(one);
    if (one) {
      setPhotos(photos.slice(0, 1));
      if (slot !== null && slot > 0) stopWebcam();
    } else if (photos.length > 0 && photos.length < STEPS.length && photos[0]!.from === 'webcam') {
      void startWebcam(photos.length);
    }
  };
  const remove = (i: number) => setPhotos(photos.filter((_, j) => j !== i));

  const refused = new Set(props.refused ?? []);
  const fromFile = photos.some((p) => p.from === 'file');
  return (
    <fieldset class="enroll-photos">
      <legend>{t('photos')}</legend>
      <p class="muted" id="photos-help">
        {t('photosHelp')}
      </p>
      <div class="row">
        <button
          type="button"
          class="secondary"
          id="use-webcam"
          onClick={() => void (photos.length < wanted ? startWebcam(photos.length) : startWebcam(0, true))}
        >
          {t('useWebcam')}
        </button>
        <label>
          {t('uploadPhotos')}
          <input type="file" id="photo-file" accept="image/jpeg,image/png" multiple onChange={fromFiles} />
        </label>
        {fromFile ? null : (
          <button type="button" class="outline secondary" id="one-photo" onClick={toggleOnePhoto}>
            {onePhoto ? t('useThreePhotos') : t('useOnePhoto')}
          </button>
        )}
      </div>
      {stream && slot !== null ? (
        <div class="webcam-step">
          <p id="step" class="muted">
            <strong>{t('stepOf', { n: slot + 1, total: wanted })}</strong>
          </p>
          <p id="instruction" class="instruction">
            {t(STEPS[slot]!.say)}
          </p>
          <video ref={video} id="webcam" autoplay muted playsInline class="photo-preview mirror" />
          <button type="button" id="take-photo" onClick={takePhoto}>
            {t('takePhotoN', { n: slot + 1 })}
          </button>
        </div>
      ) : null}
      {photos.length ? (
        <ol class="photo-thumbs" id="photos">
          {photos.map((p, i) => (
            <li key={p.id} class={refused.has(i) ? 'refused' : slot === i ? 'current' : undefined}>
              <img src={p.dataUrl} alt={t('photoN', { n: i + 1 })} class="thumb" />
              <span class="caption">
                {i + 1} · {p.from === 'webcam' ? t(STEPS[i]!.angle) : t('angleFile')}
              </span>
              <QualityLine n={i + 1} quality={p.quality} />
              {p.from === 'webcam' ? (
                <button
                  type="button"
                  class="outline"
                  id={`retake-${i + 1}`}
                  aria-label={t('retakeN', { n: i + 1 })}
                  onClick={() => void startWebcam(i)}
                >
                  {t('retake')}
                </button>
              ) : (
                <button
                  type="button"
                  class="outline secondary"
                  id={`remove-${i + 1}`}
                  aria-label={t('removeN', { n: i + 1 })}
                  onClick={() => remove(i)}
                >
                  {t('remove')}
                </button>
              )}
            </li>
          ))}
        </ol>
      ) : null}
      {note ? <p class="muted">{note}</p> : null}
      <ErrorNote error={action.error} />
    </fieldset>
  );
}

/** A photo's quality as the service measured it, against the tenant's level. */
function QualityLine(props: { n: number; quality: AdminFaceQuality | null }) {
  const { quality } = props;
  if (!quality)
    return (
      <small aria-busy="true" id={`quality-${props.n}`}>
        {t('checkingQuality')}
      </small>
    );
  return (
    <small id={`quality-${props.n}`} role="status">
      {t('quality')}: <strong>{quality.quality === null ? '—' : quality.quality.toFixed(2)}</strong> (≥{' '}
      {quality.threshold.toFixed(2)}){' '}
      {!quality.faceDetected ? (
        <Badge tone="bad">{t('noFace')}</Badge>
      ) : quality.acceptable ? (
        <Badge tone="ok">{t('qualityOk')}</Badge>
      ) : (
        <Badge tone="bad">{t('qualityLow')}</Badge>
      )}
      {quality.issues.length ? <span> {quality.issues.join(', ')}</span> : null}
    </small>
  );
}
