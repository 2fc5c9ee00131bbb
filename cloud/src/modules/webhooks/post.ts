// One webhook HTTP POST. Built on node:http(s) so the address check runs inside DNS resolution: the
// address that is checked is the address that is connected to (no DNS-rebinding gap). No redirects.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isPrivateAddress, isPublicAddress } from './address-policy.js';

export class BlockedAddressError extends Error {}

export interface PostResult {
  statusCode: number;
  /** The start of the answer body, at most `maxBodyBytes` bytes (the rest is read and dropped). */
  body: Buffer;
  /** The answer body was longer than what `body` holds. */
  truncated: boolean;
}

function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as dns.LookupAddress[];
      const allowed = list.filter((a) => allowPrivate || isPublicAddress(a.address));
      if (allowed.length === 0) {
        return callback(new BlockedAddressError(`${hostname} resolves only to non-public addresses`), '', 0);
      }
      if ((options as dns.LookupOptions).all)
        return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

export function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { timeoutMs: number; allowPrivate: boolean; maxBodyBytes: number },
): Promise<PostResult> {
  const target = new URL(url);
  const literal = target.hostname.replace(/^\[|\]$/g, '');
  if (!options.allowPrivate && (literal === 'localhost' || isPrivateAddress(literal))) {
    return Promise.reject(new BlockedAddressError(`${target.hostname} is not a public address`));
  }
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      target,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
        lookup: guardedLookup(options.allowPrivate),
        signal: AbortSignal.timeout(options.timeoutMs),
      },
      (res) => {
        // The start of the body is kept for the delivery log; the rest is drained so the socket is
        // released (within the same time-out as the request).
        const chunks: Buffer[] = [];
        let kept = 0;
        let truncated = false;
        res.on('data', (chunk: Buffer) => {
          const room = options.maxBodyBytes - kept;
          if (chunk.length > room) truncated = true;
          if (room <= 0) return;
          const part = chunk.subarray(0, room);
          chunks.push(part);
          kept += part.length;
        });
        res.on('end', () =>
          resolve({ statusCode: res.statusCode ?? 0, body: Buffer.concat(chunks), truncated }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
