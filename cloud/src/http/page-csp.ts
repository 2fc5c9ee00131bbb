/**
 * The Content-Security-Policy of every HTML page the cloud serves (the person pages and the admin
 * console): scripts and styles from this origin only, no inline code; images also from data: (QR codes),
 * blob: (the camera, thumbnails) and https (event logos).
 */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob: https:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');
