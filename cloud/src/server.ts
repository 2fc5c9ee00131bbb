// Starts the HTTP server on a built runtime and stops everything gracefully.
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { answerClientError } from './http/client-error.js';
import type { Runtime } from './runtime.js';
import { startWorkers } from './workers.js';

export interface RunningServer {
  url: string;
  server: Server;
  /** Stops accepting connections, lets in-flight requests finish (up to `graceMs`), stops the workers, then closes the runtime. */
  stop(graceMs?: number): Promise<void>;
}

export class PortInUseError extends Error {}

export async function startServer(runtime: Runtime): Promise<RunningServer> {
  const { config } = runtime.deps;
  const app = createApp(runtime.deps);
  const server = app.listen(config.port, config.host);
  server.on('clientError', answerClientError(runtime.deps.logger));
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new PortInUseError(
              `Port ${config.port} on ${config.host} is already in use. Set PORT to a free port.`,
            )
          : err,
      ),
    );
  });
  // Responses not finished yet. A stop lets requests in flight finish, but an event stream (the
  // console's live check-ins) never does: it is ended at once (its client reconnects, to another
  // process when there is one) instead of holding the stop for its whole grace.
  const unfinished = new Set<ServerResponse>();
  server.on('request', (_req, res: ServerResponse) => {
    unfinished.add(res);
    res.once('close', () => unfinished.delete(res));
  });
  const endStreams = () => {
    for (const res of unfinished) {
      if (String(res.getHeader('content-type') ?? '').startsWith('text/event-stream')) res.end();
    }
  };
  const workers = startWorkers(runtime.deps);
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
  let stopping: Promise<void> | undefined;
  return {
    url,
    server,
    stop(graceMs = 10_000) {
      stopping ??= (async () => {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => server.closeAllConnections(), graceMs);
          server.close(() => {
            clearTimeout(timer);
            resolve();
          });
          server.closeIdleConnections();
          endStreams();
        });
        await workers.stop();
        await runtime.close();
      })();
      return stopping;
    },
  };
}
