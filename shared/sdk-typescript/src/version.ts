// The SDK's version, sent in its User-Agent (test/transport.test.ts checks it against package.json).
export const VERSION = '0.1.0';
