// A face photo for enrollment, from a file or the admin's webcam, with its quality checked by the
// service (nothing is stored) before the admin saves.
import type { AdminFaceQuality } from '@portico/contract';
import { ok } from '@portico/sdk';
import { useEffect, useRef, useState } from 'preact/hooks';
import { t } from './i18n.js';
import type { Session } from './session.js';
import { Badge, ErrorNote, useAction } from './ui.js';

export function PhotoPicker(props: {
  session: Session;
  onPhoto: (dataUrl: string | null, q: AdminFaceQuality | null) => void;
}) {
  const [photo, setPhoto] = useState<string | null>(null);
  const [quality, setQuality] = useState<AdminFaceQuality | null>(null);
  const [stream, setStream] = useState<MediaStream | null>(null);
  const video = useRef<HTMLVideoElement>(null);
  const check = useAction();

  useEffect(() => {
    if (video.current && stream) video.current.srcObject = stream;
    return () => stream?.getTracks().forEach((track) => track.stop());
  }, [stream]);

  const use = (dataUrl: string) => {
    setPhoto(dataUrl);
    setQuality(null);
    props.onPhoto(dataUrl, null);
    void check.run(async () => {
      const q = ok(await props.session.api.POST('/v1/admin/face-quality', { body: { image: dataUrl } }));
      setQuality(q);
      props.onPhoto(dataUrl, q);
    });
  };
  const fromFile = (e: Event) => {
    const file = (e.currentTarget as HTMLInputElement).files?.[0];
    if (!file) return;
    const reader = new FileReader();
    reader.onload = () => use(String(reader.result));
    reader.readAsDataURL(file);
  };
  const startWebcam = () =>
    check.run(async () => {
      setStream(await navigator.mediaDevices.getUserMedia({ video: { width: 640, height: 480 } }));
    });
  const takePhoto = () => {
    const v = video.current!;
    const canvas = document.createElement('canvas');
    canvas.width = v.videoWidth;
    canvas.height = v.videoHeight;
    canvas.getContext('2d')!.drawImage(v, 0, 0);
    setStream(null);
    use(canvas.toDataURL('image/jpeg', 0.92));
  };

  return (
    <fieldset>
      <legend>{t('photo')}</legend>
      <div class="row">
        <label>
          {t('uploadPhoto')}
          <input type="file" id="photo-file" accept="image/jpeg,image/png" onChange={fromFile} />
        </label>
        <button type="button" class="secondary" id="use-webcam" onClick={() => void startWebcam()}>
          {t('useWebcam')}
        </button>
      </div>
      {stream ? (
        <div>
          <video ref={video} id="webcam" autoplay muted playsInline class="photo-preview" />
          <button type="button" id="take-photo" onClick={takePhoto}>
            {t('takePhoto')}
          </button>
        </div>
      ) : null}
      {photo ? <img src={photo} alt={t('photo')} class="photo-preview" /> : null}
      {check.busy ? <p aria-busy="true">{t('checkingQuality')}</p> : null}
      {quality ? (
        <p id="quality" role="status">
          {t('quality')}: <strong>{quality.quality === null ? '—' : quality.quality.toFixed(2)}</strong> (≥{' '}
          {quality.threshold.toFixed(2)}){' '}
          {!quality.faceDetected ? (
            <Badge tone="bad">{t('noFace')}</Badge>
          ) : quality.acceptable ? (
            <Badge tone="ok">{t('qualityOk')}</Badge>
          ) : (
            <Badge tone="bad">{t('qualityLow')}</Badge>
          )}
          {quality.issues.length ? <small> {quality.issues.join(', ')}</small> : null}
        </p>
      ) : null}
      <ErrorNote error={check.error} />
    </fieldset>
  );
}
