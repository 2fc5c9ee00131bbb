/**
 * A fixed pool of workers, one analysis at a time each, so ONNX inference and pixel work never run on
 * the caller's event loop. A crashed worker fails its job and is replaced.
 *
 * Workers are processes by default. ONNX Runtime applies `set_denormal_as_zero` once per process, to
 * the thread that creates the first session (threads started later from that thread inherit it). In a
 * pool of threads started by a thread without it, only the first worker flushed denormals; the others
 * ran the embedder about 7x slower (measured here: 11.9 ms against 86.8 ms per `fr_feature` run; two
 * processes: 10.9 and 14.0 ms). One worker can be a thread of the caller's process instead
 * (`isolation: 'thread'`): it is the first to create sessions, so it flushes denormals, and the
 * process saves a second Node runtime and second copies of ONNX Runtime, sharp and the models (about
 * 80 MB resident, measured for the device agent). The price: a native crash in a model takes the
 * caller's process down with it, where a worker process would only be replaced.
 */
import { fork } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { OffloadableModel } from './analyzer.js';
import type { DecodeLimits } from './decode.js';
import { FaceEngineError, type FaceEngineErrorCode } from './errors.js';
import type { ModelName } from './models/manifest.js';
import type { AnalyzeOptions, FaceAnalysis, FaceProbe, ProbeOptions } from './types.js';

/** What a worker is asked to do: `Analyzer.analyze`, `Analyzer.probe`, or one model run lent by another worker. */
export type WorkerTask =
  | { readonly kind: 'analyze'; readonly frame: string | Uint8Array; readonly options: AnalyzeOptions }
  | { readonly kind: 'probe'; readonly frame: string | Uint8Array; readonly options: ProbeOptions }
  | { readonly kind: 'model'; readonly model: OffloadableModel; readonly input: Float32Array };

export interface WorkerRequest {
  readonly id: number;
  readonly task: WorkerTask;
}

export type WorkerReply =
  | { readonly id: number; readonly ok: true; readonly result: FaceProbe | Float32Array }
  | {
      readonly id: number;
      readonly ok: false;
      readonly error: { code: FaceEngineErrorCode; message: string };
    };

/** A worker asks the pool to run one model for it on an idle worker (`ModelOffload`). */
export interface OffloadRequest {
  readonly offload: { readonly id: number; readonly model: OffloadableModel; readonly input: Float32Array };
}

/** The pool's answer to an OffloadRequest: the model's output, or null to run it locally. */
export interface OffloadReply {
  readonly offloadReply: { readonly id: number; readonly output: Float32Array | null };
}

/** The first message a worker receives: its models (already verified) and limits. */
export interface WorkerInit {
  readonly init: { readonly models: Record<ModelName, Uint8Array>; readonly limits: DecodeLimits };
}

export type StartupReply = { readonly ready: true } | { readonly ready: false; readonly message: string };

interface Job {
  readonly request: WorkerRequest;
  readonly resolve: (result: FaceProbe | Float32Array) => void;
  readonly reject: (error: Error) => void;
}

/** Where the pool's workers run (see the top of this file). */
export type WorkerIsolation = 'process' | 'thread';

/**
 * A worker as the pool drives it, a process or a thread alike: it emits 'message', 'error' and 'exit'.
 */
interface WorkerLink {
  readonly events: EventEmitter;
  send(message: WorkerInit | WorkerRequest | OffloadReply): void;
  /** Ends the worker; 'exit' follows unless it has exited already. */
  kill(): void;
  readonly exited: boolean;
}

function startWorker(isolation: WorkerIsolation): WorkerLink {
  if (isolation === 'thread') {
    // No inherited flags, as for a process: the entry registers its own TypeScript loader.
    const thread = new Worker(WORKER_ENTRY, { execArgv: [] });
    let exited = false;
    thread.once('exit', () => (exited = true));
    return {
      events: thread,
      send: (message) => thread.postMessage(message),
      kill: () => void thread.terminate(),
      get exited() {
        return exited;
      },
    };
  }
  // Structured clone ("advanced") keeps typed arrays typed; no inherited flags (a profiler or a test
  // runner's loader): the entry registers its own TypeScript loader.
  const child = fork(WORKER_ENTRY, [], {
    serialization: 'advanced',
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return {
    events: child,
    send: (message) => child.send(message),
    kill: () => child.kill(),
    get exited() {
      return child.exitCode !== null || child.signalCode !== null;
    },
  };
}

interface Slot {
  worker: WorkerLink;
  job: Job | undefined;
}

const WORKER_ENTRY = fileURLToPath(new URL('./worker-entry.mjs', import.meta.url));

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private isClosed = false;
  /** Workers being started (a replacement after a crash included). */
  private starting = 0;
  private lentCount = 0;

  private constructor(
    private readonly models: Record<ModelName, Uint8Array>,
    private readonly limits: DecodeLimits,
    private readonly isolation: WorkerIsolation,
  ) {}

  /** `size` workers; with `isolation: 'thread'`, only one (see the top of this file). */
  static async start(
    size: number,
    models: Record<ModelName, Uint8Array>,
    limits: DecodeLimits,
    isolation: WorkerIsolation = 'process',
  ): Promise<WorkerPool> {
    if (isolation === 'thread' && size !== 1) {
      throw new RangeError('a face engine in a thread has one worker: use processes for more');
    }
    const pool = new WorkerPool(models, limits, isolation);
    try {
      await Promise.all(Array.from({ length: size }, () => pool.spawn()));
    } catch (error) {
      await pool.close();
      throw error;
    }
    return pool;
  }

  get size(): number {
    return this.slots.length;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  private spawn(): Promise<void> {
    this.starting++;
    const started = new Promise<void>((resolve, reject) => {
      const worker = startWorker(this.isolation);
      const slot: Slot = { worker, job: undefined };
      const { events } = worker;
      const failStartup = (message: string): void => {
        events.removeAllListeners();
        worker.kill();
        reject(new FaceEngineError('engine_failure', `face worker failed to start: ${message}`));
      };
      const onStartupExit = (code: number | null): void => failStartup(`exited with code ${code}`);
      const onStartupError = (error: Error): void => failStartup(error.message);
      events.once('message', (reply: StartupReply) => {
        if (!reply.ready) return failStartup(reply.message);
        events.off('exit', onStartupExit);
        events.off('error', onStartupError);
        events.on('message', (msg: WorkerReply | OffloadRequest) =>
          'offload' in msg ? this.lend(slot, msg.offload) : this.finish(slot, msg),
        );
        events.on('error', (error: Error) => this.crash(slot, error));
        events.on('exit', (code: number | null, signal?: NodeJS.Signals | null) =>
          this.crash(slot, new Error(`face worker exited with ${signal ?? `code ${code}`}`)),
        );
        this.slots.push(slot);
        this.pump();
        resolve();
      });
      events.once('exit', onStartupExit);
      events.once('error', onStartupError);
      const init: WorkerInit = { init: { models: this.models, limits: this.limits } };
      worker.send(init);
    });
    return started.finally(() => this.starting--);
  }

  /** Sends to a worker; a closed channel counts as a crash (the 'exit' event follows). */
  private send(slot: Slot, message: WorkerRequest | OffloadReply): void {
    try {
      slot.worker.send(message);
    } catch (error) {
      this.crash(slot, error as Error);
    }
  }

  run(task: Extract<WorkerTask, { kind: 'analyze' }>): Promise<FaceAnalysis>;
  run(task: Extract<WorkerTask, { kind: 'probe' }>): Promise<FaceProbe>;
  run(task: Extract<WorkerTask, { kind: 'analyze' | 'probe' }>): Promise<FaceProbe> {
    if (this.isClosed) return Promise.reject(new FaceEngineError('engine_closed', 'face engine is closed'));
    // No worker running and none starting (the replacement of a crashed one failed): refuse rather
    // than queue a job nobody will take.
    if (this.slots.length + this.starting === 0)
      return Promise.reject(new FaceEngineError('engine_failure', 'no face worker could be started'));
    // A Buffer that is a view on a larger pooled slab would be sent whole: send a compact copy then.
    const frame =
      typeof task.frame === 'string' || task.frame.byteLength === task.frame.buffer.byteLength
        ? task.frame
        : new Uint8Array(task.frame);
    return new Promise((resolve, reject) => {
      this.queue.push({
        request: { id: this.nextId++, task: { ...task, frame } },
        resolve: resolve as (result: FaceProbe | Float32Array) => void,
        reject,
      });
      this.pump();
    });
  }

  /** Model runs lent to an idle worker so far (a lone frame then uses two cores). */
  get lent(): number {
    return this.lentCount;
  }

  /**
   * Runs one model for a busy worker on an idle one, if any; otherwise answers null at once so the
   * asker runs it itself. Lending never waits for a worker, so it cannot deadlock, and under load
   * (nobody idle) every worker simply runs its own frames.
   */
  private lend(asker: Slot, offload: OffloadRequest['offload']): void {
    const reply = (output: Float32Array | null): void => {
      if (this.slots.includes(asker)) this.send(asker, { offloadReply: { id: offload.id, output } });
    };
    const idle = this.queue.length === 0 ? this.slots.find((s) => !s.job && s !== asker) : undefined;
    if (!idle) return reply(null);
    this.lentCount++;
    idle.job = {
      request: { id: this.nextId++, task: { kind: 'model', model: offload.model, input: offload.input } },
      resolve: (output) => reply(output as Float32Array),
      reject: () => reply(null),
    };
    this.send(idle, idle.job.request);
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.job) continue;
      const job = this.queue.shift();
      if (!job) return;
      slot.job = job;
      this.send(slot, job.request);
    }
  }

  private finish(slot: Slot, reply: WorkerReply): void {
    const job = slot.job;
    slot.job = undefined;
    if (job && job.request.id === reply.id) {
      if (reply.ok) job.resolve(reply.result);
      else job.reject(new FaceEngineError(reply.error.code, reply.error.message));
    }
    this.pump();
  }

  private crash(slot: Slot, error: Error): void {
    const index = this.slots.indexOf(slot);
    if (index === -1) return;
    this.slots.splice(index, 1);
    slot.job?.reject(new FaceEngineError('engine_failure', `face worker crashed: ${error.message}`));
    slot.job = undefined;
    slot.worker.events.removeAllListeners('message');
    slot.worker.kill();
    if (!this.isClosed) this.spawn().catch(() => this.failQueueIfEmpty());
  }

  private failQueueIfEmpty(): void {
    if (this.slots.length > 0) return;
    for (const job of this.queue.splice(0)) {
      job.reject(new FaceEngineError('engine_failure', 'no face worker could be started'));
    }
  }

  async close(): Promise<void> {
    this.isClosed = true;
    for (const job of this.queue.splice(0))
      job.reject(new FaceEngineError('engine_closed', 'face engine is closed'));
    const slots = this.slots.splice(0);
    for (const slot of slots) {
      slot.worker.events.removeAllListeners('exit');
      slot.job?.reject(new FaceEngineError('engine_closed', 'face engine is closed'));
    }
    await Promise.all(
      slots.map(
        ({ worker }) =>
          new Promise<void>((resolve) => {
            if (worker.exited) return resolve();
            worker.events.once('exit', () => resolve());
            worker.kill();
          }),
      ),
    );
  }
}
