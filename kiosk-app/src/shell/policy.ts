// The decisions of the Electron shell, kept out of Electron so they run (and are tested) in Node:
// which navigations and permissions the kiosk window allows, when a crashed renderer is reloaded,
// whether the device agent must be started or is already there, and how it is started.

/** Only the kiosk's own origin: a link or a redirect elsewhere is refused. */
export function isAllowedNavigation(url: string, kioskUrl: string): boolean {
  try {
    return new URL(url).origin === new URL(kioskUrl).origin;
  } catch {
    return false;
  }
}

/** The camera and nothing else (Electron's name for camera/microphone is `media`). */
export function isAllowedPermission(permission: string, details: { mediaTypes?: string[] } = {}): boolean {
  return permission === 'media' && (details.mediaTypes ?? ['video']).every((t) => t === 'video');
}

/**
 * Reload delays after renderer crashes: at once the first time, then doubling up to `maxDelayMs`, so a
 * page that crashes on load does not spin the CPU; a quiet `resetAfterMs` starts over.
 */
export function createCrashPolicy(
  options: { maxDelayMs?: number; resetAfterMs?: number; now?: () => number } = {},
) {
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const resetAfterMs = options.resetAfterMs ?? 60_000;
  const now = options.now ?? Date.now;
  let crashes = 0;
  let last = -Infinity;
  return {
    /** Milliseconds to wait before reloading after this crash. */
    crashed(): number {
      if (now() - last > resetAfterMs) crashes = 0;
      last = now();
      crashes++;
      return crashes === 1 ? 0 : Math.min(maxDelayMs, 1000 * 2 ** (crashes - 2));
    },
  };
}

/**
 * Attaches to a running agent (its `/status` answers) or starts one and waits until it answers.
 * Returns whether it was started here (then the shell stops it on quit).
 */
export async function ensureAgent(options: {
  agentUrl: string;
  start: () => void;
  timeoutMs?: number;
  fetchImpl?: typeof fetch;
}): Promise<{ started: boolean }> {
  const doFetch = options.fetchImpl ?? fetch;
  const answers = async () => {
    try {
      return (await doFetch(`${options.agentUrl}/status`, { signal: AbortSignal.timeout(1000) })).ok;
    } catch {
      return false;
    }
  };
  if (await answers()) return { started: false };
  options.start();
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  while (!(await answers())) {
    if (Date.now() > deadline) throw new Error(`the device agent did not answer at ${options.agentUrl}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { started: true };
}

/**
 * glibc malloc settings the agent runs with (its `start` script sets the same): large buffers come
 * from and go back to the kernel at once instead of staying in the heap, and two arenas instead of
 * one per thread. Measured with a 50,000-guest replica after 30 decisions: 461 MB resident without,
 * 397 MB with (device-agent README). Other C libraries ignore them. Set in the environment, they win.
 */
export const AGENT_MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_ARENA_MAX: '2' } as const;

const mallocDefaults = (env: Record<string, string | undefined>) =>
  Object.fromEntries(Object.entries(AGENT_MALLOC_ENV).filter(([name]) => env[name] === undefined));

/**
 * How the shell starts the device agent. Built (`pnpm --filter @portico/kiosk build`, a package): the
 * bundled `dist/agent/main.mjs` run by Electron's own Node (`ELECTRON_RUN_AS_NODE`), its data under the
 * app's user-data folder and its models from the package's resources unless the environment says
 * otherwise. From the sources: `node --import tsx src/main.ts` in device-agent/.
 */
export function agentCommand(options: {
  builtAgent: string | null;
  agentSourceDir: string;
  execPath: string;
  userDataDir: string;
  modelDir: string | null;
  env: Record<string, string | undefined>;
}): { command: string; args: string[]; cwd?: string; env: Record<string, string> } {
  if (!options.builtAgent) {
    return {
      command: options.env.NODE_BINARY ?? 'node',
      args: ['--import', 'tsx', 'src/main.ts'],
      cwd: options.agentSourceDir,
      env: mallocDefaults(options.env),
    };
  }
  return {
    command: options.execPath,
    args: [options.builtAgent],
    env: {
      ...mallocDefaults(options.env),
      ELECTRON_RUN_AS_NODE: '1',
      AGENT_DATA_DIR: options.env.AGENT_DATA_DIR ?? `${options.userDataDir}/agent-data`,
      ...(options.modelDir && !options.env.PORTICO_MODEL_DIR && { PORTICO_MODEL_DIR: options.modelDir }),
    },
  };
}
