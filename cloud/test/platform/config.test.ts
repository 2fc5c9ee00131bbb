import { mkdtemp, readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createCipher } from '../../src/infra/crypto.js';
import { loadSecrets } from '../../src/infra/secrets.js';

describe('configuration', () => {
  it('runs on the embedded defaults with an empty environment', () => {
    const c = loadConfig({ INIT_CWD: '/srv/portico' });
    expect(c.port).toBe(8080);
    expect(c.dataDir).toBe('/srv/portico/data');
    expect(c.databaseUrl).toBeUndefined();
    expect(c.mqtt).toEqual({
      url: undefined,
      port: 1883,
      host: '127.0.0.1',
      wsPort: 8083,
      wsUrl: undefined,
      username: 'portico-service',
      allowedOrigins: ['http://localhost:8080'],
      externalCredential: false,
    });
    expect(c.mail.smtpUrl).toBeUndefined();
  });

  it('gives the embedded broker a WebSocket port unless it is turned off', () => {
    expect(loadConfig({ MQTT_WS_PORT: '9001' }).mqtt.wsPort).toBe(9001);
    expect(loadConfig({ MQTT_WS_PORT: 'off' }).mqtt.wsPort).toBeUndefined();
    // A free TCP port asked for (tests, several processes): a free WebSocket port too, never the fixed one.
    expect(loadConfig({ MQTT_PORT: '0' }).mqtt.wsPort).toBe(0);
    expect(loadConfig({ MQTT_PORT: '0', MQTT_WS_PORT: '9001' }).mqtt.wsPort).toBe(9001);
    expect(() => loadConfig({ MQTT_WS_PORT: 'on' })).toThrow(/MQTT_WS_PORT/);
    expect(loadConfig({ MQTT_WS_URL: 'wss://mqtt.example.com/mqtt' }).mqtt.wsUrl).toBe(
      'wss://mqtt.example.com/mqtt',
    );
    expect(() => loadConfig({ MQTT_WS_URL: 'mqtt://mqtt.example.com' })).toThrow(/MQTT_WS_URL/);
  });

  it('treats empty values as unset and names every invalid variable', () => {
    expect(loadConfig({ DATABASE_URL: '', PORT: '' }).port).toBe(8080);
    expect(() => loadConfig({ PORT: 'eighty', DATABASE_URL: 'not a url' })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'not a url' });
    } catch (err) {
      expect((err as Error).message).toMatch(/PORT/);
      expect((err as Error).message).toMatch(/DATABASE_URL/);
    }
  });
});

describe('secrets', () => {
  it('generates secrets once into DATA_DIR/secrets.json with mode 0600 and reuses them', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'portico-secrets-'));
    const config = loadConfig({ DATA_DIR: dataDir });
    const first = await loadSecrets(config);
    const file = path.join(dataDir, 'secrets.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const second = await loadSecrets(config);
    expect(second.internalSecret).toBe(first.internalSecret);
    expect(second.dataKey.equals(first.dataKey)).toBe(true);
    expect(JSON.parse(await readFile(file, 'utf8')).dataEncryptionKey).toBe(first.dataKey.toString('base64'));
  });

  it('prefers secrets from the environment', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'portico-secrets-'));
    const key = Buffer.alloc(32, 7).toString('base64');
    const s = await loadSecrets(
      loadConfig({ DATA_DIR: dataDir, DATA_ENCRYPTION_KEY: key, INTERNAL_SECRET: 'x'.repeat(30) }),
    );
    expect(s.dataKey.toString('base64')).toBe(key);
    expect(s.internalSecret).toBe('x'.repeat(30));
  });
});

describe('encryption at rest', () => {
  const cipher = createCipher(Buffer.alloc(32, 1));

  it('round-trips and never stores the plaintext', () => {
    const plain = Buffer.from('512 floats of a face template');
    const sealed = cipher.encrypt(plain, 'person:1');
    expect(sealed.includes(plain)).toBe(false);
    expect(cipher.decrypt(sealed, 'person:1').equals(plain)).toBe(true);
  });

  it('refuses a ciphertext moved to another context or tampered with', () => {
    const sealed = cipher.encrypt(Buffer.from('secret'), 'person:1');
    expect(() => cipher.decrypt(sealed, 'person:2')).toThrow();
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => cipher.decrypt(tampered, 'person:1')).toThrow();
  });
});
