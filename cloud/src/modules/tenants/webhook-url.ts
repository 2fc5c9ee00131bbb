// SSRF guard for tenant webhook URLs: http(s) only, no loopback, private, link-local, CGNAT,
// multicast or unspecified hosts (IPv4, IPv6, `localhost`). Checked when the URL is saved; the
// webhook worker must also check the address a host name resolves to (`isPrivateAddress`) at
// delivery time, since DNS can change after the check.
import { isIP } from 'node:net';

export type WebhookUrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

export function checkWebhookUrl(raw: string, options: { allowPrivate: boolean }): WebhookUrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'not a valid URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { ok: false, reason: 'must be http or https' };
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  if (options.allowPrivate) return { ok: true, url };
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost'))
    return { ok: false, reason: 'loopback host refused' };
  if (isIP(host) && isPrivateAddress(host))
    return { ok: false, reason: 'private, loopback or link-local address refused' };
  return { ok: true, url };
}

/** True for addresses a webhook must never reach (loopback, private, link-local, CGNAT, multicast, …). */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '').toLowerCase();
  const family = isIP(ip);
  if (family === 4) return isPrivateV4(ip);
  if (family !== 6) return false;
  // Dotted IPv4-mapped / -compatible forms (::ffff:10.0.0.1); anything more exotic is refused.
  if (ip.includes('.')) {
    const prefix = ip.slice(0, ip.lastIndexOf(':') + 1);
    return prefix === '::ffff:' || prefix === '::' ? isPrivateV4(ip.slice(prefix.length)) : true;
  }
  const words = expandV6(ip);
  if (!words) return true;
  if (words.every((w) => w === 0)) return true; // ::
  if (words.slice(0, 7).every((w) => w === 0) && words[7] === 1) return true; // ::1
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) {
    return isPrivateV4(`${words[6]! >> 8}.${words[6]! & 255}.${words[7]! >> 8}.${words[7]! & 255}`);
  }
  const first = words[0]!;
  if ((first & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local
  if ((first & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((first & 0xffc0) === 0xfec0) return true; // fec0::/10 site-local (deprecated)
  if ((first & 0xff00) === 0xff00) return true; // multicast
  if (first === 0x64 && words[1] === 0xff9b) return true; // 64:ff9b::/96 NAT64 can reach private v4
  return false;
}

function isPrivateV4(ip: string): boolean {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return true;
  const [a, b] = parts as [number, number, number, number];
  return (
    a === 0 || // "this network"
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // CGNAT
    (a === 169 && b === 254) || // link-local, cloud metadata
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && parts[2] === 0) || // IETF protocol assignments
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a >= 224 // multicast, reserved, broadcast
  );
}

function expandV6(ip: string): number[] | null {
  const [head, tail, ...rest] = ip.split('::');
  if (rest.length > 0) return null;
  const parse = (s: string | undefined) => (s ? s.split(':').map((w) => parseInt(w, 16)) : []);
  const h = parse(head);
  const t = parse(tail);
  if (tail === undefined && h.length !== 8) return null;
  const words = [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff)
    ? words
    : null;
}
