// SSRF guard for tenant webhook URLs: http(s) only, no loopback, private, link-local, CGNAT,
// multicast or unspecified hosts (IPv4, IPv6, `localhost`). Checked when the URL is saved; the
// webhook worker must also check the address a host name resolves to (`isPrivateAddress`) at
// delivery time, since DNS can change after the check. The address ranges are those of
// webhooks/address-policy.ts, so saving and sending agree.
import { isIP } from 'node:net';
import { isPublicAddress } from '../webhooks/address-policy.js';

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

/** True for addresses a webhook must never reach; the one address policy lives with the webhook sender. */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '');
  return isIP(ip) !== 0 && !isPublicAddress(ip);
}
