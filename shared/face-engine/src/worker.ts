/**
 * One pool worker: owns its ONNX sessions (its first one flushes denormals for its thread) and
 * analyses one frame at a time for the pool, talking over the IPC channel of `fork` in a process of
 * its own, or over its port as a thread of the pool's process.
 */
import { parentPort } from 'node:worker_threads';
import { Analyzer, type ModelOffload } from './analyzer.js';
import { isFaceEngineError } from './errors.js';
import type {
  OffloadReply,
  OffloadRequest,
  StartupReply,
  WorkerInit,
  WorkerReply,
  WorkerRequest,
} from './pool.js';

if (!parentPort && !process.send) {
  throw new Error('worker.ts must run in a worker thread or in a process forked with an IPC channel');
}
const channel = parentPort ?? process;
const send = (message: WorkerReply | OffloadRequest | StartupReply): void => {
  if (parentPort) parentPort.postMessage(message);
  else process.send!(message);
};
// The pool's process went away (crash, kill -9): nothing left to work for. (A thread ends with it.)
if (!parentPort) process.on('disconnect', () => process.exit(0));

// Model runs this worker has asked the pool to lend to an idle worker, by request id.
const lent = new Map<number, (output: Float32Array | null) => void>();
let nextLent = 1;
const offload: ModelOffload = (model, input) =>
  new Promise((resolve) => {
    const id = nextLent++;
    lent.set(id, resolve);
    send({ offload: { id, model, input } });
  });

function failure(id: number, error: unknown): WorkerReply {
  return {
    id,
    ok: false,
    error: isFaceEngineError(error)
      ? { code: error.code, message: error.message }
      : { code: 'engine_failure', message: (error as Error)?.message ?? String(error) },
  };
}

async function serve(analyzer: Analyzer, message: WorkerRequest | OffloadReply): Promise<void> {
  if ('offloadReply' in message) {
    const { id, output } = message.offloadReply;
    lent.get(id)?.(output);
    lent.delete(id);
    return;
  }
  const { id, task } = message;
  try {
    const result =
      task.kind === 'model'
        ? // ORT's output may be a view on a larger buffer: send a compact copy.
          (await analyzer.runModel(task.model, task.input)).slice()
        : task.kind === 'analyze'
          ? await analyzer.analyze(task.frame, task.options)
          : await analyzer.probe(task.frame, task.options);
    send({ id, ok: true, result });
  } catch (error) {
    send(failure(id, error));
  }
}

channel.once('message', ({ init }: WorkerInit) => {
  Analyzer.create(init.models, { limits: init.limits, offload }).then(
    (analyzer) => {
      channel.on('message', (message: WorkerRequest | OffloadReply) => void serve(analyzer, message));
      send({ ready: true });
    },
    (error: unknown) => send({ ready: false, message: (error as Error).message }),
  );
});
