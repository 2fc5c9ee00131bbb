/** One pool worker: owns its ONNX sessions and analyses one frame at a time for the pool. */
import { parentPort, workerData } from 'node:worker_threads';
import { Analyzer } from './analyzer.js';
import type { DecodeLimits } from './decode.js';
import { isFaceEngineError } from './errors.js';
import type { ModelName } from './models/manifest.js';
import type { WorkerReply, WorkerRequest } from './pool.js';

interface WorkerInit {
  readonly models: Record<ModelName, Uint8Array>;
  readonly limits: DecodeLimits;
}

const port = parentPort;
if (!port) throw new Error('worker.ts must run in a worker thread');
const init = workerData as WorkerInit;

try {
  const analyzer = await Analyzer.create(init.models, { limits: init.limits });
  port.on('message', (request: WorkerRequest) => {
    const { frame, task } = request;
    const work =
      task.kind === 'analyze' ? analyzer.analyze(frame, task.options) : analyzer.probe(frame, task.options);
    work.then(
      (result) => {
        const reply: WorkerReply = { id: request.id, ok: true, result };
        port.postMessage(reply, [result.embedding.buffer as ArrayBuffer]);
      },
      (error: unknown) => {
        const reply: WorkerReply = {
          id: request.id,
          ok: false,
          error: isFaceEngineError(error)
            ? { code: error.code, message: error.message }
            : { code: 'engine_failure', message: (error as Error)?.message ?? String(error) },
        };
        port.postMessage(reply);
      },
    );
  });
  port.postMessage({ ready: true });
} catch (error) {
  port.postMessage({ ready: false, message: (error as Error).message });
}
