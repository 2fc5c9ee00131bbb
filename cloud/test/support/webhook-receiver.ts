// A real HTTP server standing in for a tenant's webhook endpoint: records every request with its raw
// body, and answers with whatever status the test sets (or never, to test the time-out).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  receivedAt: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Status to answer with; `'hang'` never answers. */
  respondWith: number | 'hang';
  /** Answers this long after the request arrived (a slow receiver); 0 answers at once. */
  delayMs: number;
  /** The answer's body for a request (none by default). */
  respondBody: ((hit: ReceivedWebhook) => string) | null;
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  /** The first parsed body that matches, waiting for it to arrive. */
  waitForBody(match: (body: any) => boolean, timeoutMs?: number): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

  close(): Promise<void>;
}

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const waiting = new Set<() => void>();
  const receiver: WebhookReceiver = {
    url: '',
    received,
    respondWith: 200,
    delayMs: 0,
    respondBody: null,
    async waitFor(count, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline)
          throw new Error(`expected ${count} webhook requests, got ${received.length}`);
        await new Promise<void>((resolve) => {
          waiting.add(resolve);
          setTimeout(resolve, 50);
        });
      }
      return received;
    },
    async waitForBody(match, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = received.map((r) => JSON.parse(r.rawBody)).find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error('no matching webhook arrived');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = {
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      received.push(hit);
      waiting.forEach((w) => w());
      const status = receiver.respondWith;
      if (status === 'hang') return;
      const body = receiver.respondBody?.(hit) ?? '';
      if (receiver.delayMs > 0) setTimeout(() => res.writeHead(status).end(body), receiver.delayMs);
      else res.writeHead(status).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/portico`;
  return receiver;
}
