// The rules that keep web pages of other sites away from the agent and the kiosk server, on requests
// as Node hands them over (the Chromium test, kiosk-app/test/cross-origin.test.ts, shows them end to end).
import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { refuse, requestGuard } from '../src/request-guard.js';

const guard = requestGuard({
  port: 7171,
  extraHosts: ['kiosk.lan', 'gate.lan:8080'],
  extraOrigins: ['http://ui.lan:3000/'],
});
const request = (method: string, headers: Record<string, string>) =>
  ({ method, headers }) as unknown as http.IncomingMessage;

describe('request guard', () => {
  it('answers for the loopback names, [::1] and the extra hosts, each with its port', () => {
    for (const host of [
      '127.0.0.1:7171',
      'localhost:7171',
      '[::1]:7171',
      'KIOSK.lan:7171',
      'gate.lan:8080',
    ]) {
      expect(refuse(request('GET', { host }), guard)).toBeNull();
    }
  });

  it('refuses any other Host, a missing one and a known name on another port with 421 host_not_allowed', () => {
    for (const host of ['evil.example:7171', 'localhost', '127.0.0.1:7172', '']) {
      expect(refuse(request('GET', host ? { host } : {}), guard)).toMatchObject({
        status: 421,
        code: 'host_not_allowed',
      });
    }
  });

  it('takes the address listened on, unless every interface, and a bare name on port 80', () => {
    expect(requestGuard({ port: 80, listenHost: '192.168.1.5' }).hosts).toEqual(
      new Set([
        '127.0.0.1:80',
        '127.0.0.1',
        'localhost:80',
        'localhost',
        '[::1]:80',
        '[::1]',
        '192.168.1.5:80',
        '192.168.1.5',
      ]),
    );
    expect(requestGuard({ port: 7171, listenHost: '0.0.0.0' }).hosts.has('0.0.0.0:7171')).toBe(false);
  });

  it('accepts its own origin, the extra origins and no Origin at all; refuses others and "null" with 403', () => {
    const post = (origin?: string) =>
      refuse(
        request('POST', {
          host: 'localhost:7171',
          'content-type': 'application/json',
          ...(origin && { origin }),
        }),
        guard,
      );
    expect(post()).toBeNull();
    expect(post('http://localhost:7171')).toBeNull();
    expect(post('http://ui.lan:3000')).toBeNull();
    for (const origin of ['http://127.0.0.1:9999', 'https://localhost:7171', 'null']) {
      expect(post(origin)).toMatchObject({ status: 403, code: 'origin_not_allowed' });
    }
    expect(
      refuse(request('GET', { host: 'localhost:7171', origin: 'http://evil.example' }), guard),
    ).toMatchObject({
      status: 403,
    });
  });

  it('takes bodies as application/json only (415 unsupported_media_type), and an empty POST without a type', () => {
    const post = (headers: Record<string, string>) =>
      refuse(request('POST', { host: 'localhost:7171', ...headers }), guard);
    expect(post({ 'content-type': 'application/json; charset=utf-8', 'content-length': '2' })).toBeNull();
    expect(post({ 'content-length': '0' })).toBeNull();
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      expect(post({ 'content-type': type, 'content-length': '2' })).toMatchObject({
        status: 415,
        code: 'unsupported_media_type',
      });
    }
    expect(post({ 'content-length': '2' })).toMatchObject({ status: 415 });
  });
});
