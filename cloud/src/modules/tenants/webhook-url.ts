// SSRF guard for tenant webhook URLs: http(s) only, a non-empty host, no loopback, private,
// link-local, CGNAT, multicast or unspecified hosts (IPv4, IPv6, IPv6 forms that carry a non-public
// IPv4 address, `localhost`). Checked when the URL is saved; the
// webhook sender checks again the address a host name resolves to at delivery time, since DNS can
// change after the check. Both use the ranges of webhooks/address-policy.ts.
import { isPrivateAddress } from '../webhooks/address-policy.js';

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
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
  // `http://./` parses with host "."; any empty label is no host a request can reach.
  if (host.split('.').some((label) => label === '')) return { ok: false, reason: 'empty host' };
  if (options.allowPrivate) return { ok: true, url };
  if (host === 'localhost' || host.endsWith('.localhost'))
    return { ok: false, reason: 'loopback host refused' };
  if (isPrivateAddress(host)) return { ok: false, reason: 'private, loopback or link-local address refused' };
  return { ok: true, url };
}
