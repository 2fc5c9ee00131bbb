/**
 * A fixed pool of worker threads, one analysis at a time each, so ONNX inference and pixel work
 * never run on the caller's event loop. A crashed worker fails its job and is replaced.
 */
import { Worker } from 'node:worker_threads';
import type { DecodeLimits } from './decode.js';
import { FaceEngineError, type FaceEngineErrorCode } from './errors.js';
import type { ModelName } from './models/manifest.js';
import type { AnalyzeOptions, FaceAnalysis, FaceProbe, ProbeOptions } from './types.js';

/** What a worker is asked to do with a frame: `Analyzer.analyze` or `Analyzer.probe`. */
export type WorkerTask =
  | { readonly kind: 'analyze'; readonly options: AnalyzeOptions }
  | { readonly kind: 'probe'; readonly options: ProbeOptions };

export interface WorkerRequest {
  readonly id: number;
  readonly frame: string | Uint8Array;
  readonly task: WorkerTask;
}

export type WorkerReply =
  | { readonly id: number; readonly ok: true; readonly result: FaceProbe }
  | {
      readonly id: number;
      readonly ok: false;
      readonly error: { code: FaceEngineErrorCode; message: string };
    };

type StartupReply = { readonly ready: true } | { readonly ready: false; readonly message: string };

interface Job {
  readonly request: WorkerRequest;
  readonly transfer: ArrayBuffer[];
  readonly resolve: (result: FaceProbe) => void;
  readonly reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
}

const WORKER_URL = new URL('./worker-entry.mjs', import.meta.url);

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  private constructor(
    private readonly models: Record<ModelName, Uint8Array>,
    private readonly limits: DecodeLimits,
  ) {}

  static async start(
    size: number,
    models: Record<ModelName, Uint8Array>,
    limits: DecodeLimits,
  ): Promise<WorkerPool> {
    const pool = new WorkerPool(models, limits);
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

  get pending(): number {
    return this.queue.length + this.slots.filter((s) => s.job).length;
  }

  private spawn(): Promise<void> {
    return new Promise((resolve, reject) => {
      const worker = new Worker(WORKER_URL, { workerData: { models: this.models, limits: this.limits } });
      const slot: Slot = { worker, job: undefined };
      const onStartup = (reply: StartupReply): void => {
        if (!reply.ready) {
          void worker.terminate();
          reject(new FaceEngineError('engine_failure', `face worker failed to start: ${reply.message}`));
          return;
        }
        worker.off('error', onStartupError);
        worker.on('message', (msg: WorkerReply) => this.finish(slot, msg));
        worker.on('error', (error) => this.crash(slot, error));
        worker.on('exit', (code) => this.crash(slot, new Error(`face worker exited with code ${code}`)));
        this.slots.push(slot);
        this.pump();
        resolve();
      };
      const onStartupError = (error: Error): void =>
        reject(new FaceEngineError('engine_failure', `face worker failed to start: ${error.message}`));
      worker.once('message', onStartup);
      worker.once('error', onStartupError);
    });
  }

  run(frame: string | Uint8Array, task: { kind: 'analyze'; options: AnalyzeOptions }): Promise<FaceAnalysis>;
  run(frame: string | Uint8Array, task: { kind: 'probe'; options: ProbeOptions }): Promise<FaceProbe>;
  run(frame: string | Uint8Array, task: WorkerTask): Promise<FaceProbe> {
    if (this.closed) return Promise.reject(new FaceEngineError('engine_closed', 'face engine is closed'));
    // Copy a caller's Buffer into a fresh, transferable buffer: Buffers may share a pooled slab.
    const payload = typeof frame === 'string' ? frame : new Uint8Array(frame);
    const transfer = typeof payload === 'string' ? [] : [payload.buffer as ArrayBuffer];
    return new Promise((resolve, reject) => {
      this.queue.push({ request: { id: this.nextId++, frame: payload, task }, transfer, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.job) continue;
      const job = this.queue.shift();
      if (!job) return;
      slot.job = job;
      slot.worker.postMessage(job.request, job.transfer);
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
    void slot.worker.terminate();
    if (!this.closed) this.spawn().catch(() => this.failQueueIfEmpty());
  }

  private failQueueIfEmpty(): void {
    if (this.slots.length > 0) return;
    for (const job of this.queue.splice(0)) {
      job.reject(new FaceEngineError('engine_failure', 'no face worker could be started'));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0))
      job.reject(new FaceEngineError('engine_closed', 'face engine is closed'));
    const slots = this.slots.splice(0);
    for (const slot of slots) {
      slot.worker.removeAllListeners('exit');
      slot.job?.reject(new FaceEngineError('engine_closed', 'face engine is closed'));
    }
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }
}
