// Electron's main process for the kiosk: thin on purpose (Electron's binary cannot run on the build
// machines); every decision is in ./policy.ts. Full screen kiosk window on the kiosk server's page,
// camera permission only, no navigation away, renderer reloaded after a crash, the device agent
// started unless one already answers.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, session } from 'electron';
import { startKioskServer } from '../server.js';
import {
  agentCommand,
  createCrashPolicy,
  ensureAgent,
  isAllowedNavigation,
  isAllowedPermission,
} from './policy.js';

const AGENT_URL = process.env.AGENT_URL ?? 'http://127.0.0.1:7171';
const AGENT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../device-agent');
// Present once built: dist/shell/main.mjs runs dist/agent/main.mjs.
const BUILT_AGENT = fileURLToPath(new URL('../agent/main.mjs', import.meta.url));

let agent: ChildProcess | null = null;

async function main() {
  await app.whenReady();
  const { started } = await ensureAgent({
    agentUrl: AGENT_URL,
    start: () => {
      const resources = (process as { resourcesPath?: string }).resourcesPath;
      const run = agentCommand({
        builtAgent: existsSync(BUILT_AGENT) ? BUILT_AGENT : null,
        agentSourceDir: AGENT_DIR,
        execPath: process.execPath,
        userDataDir: app.getPath('userData'),
        modelDir: app.isPackaged && resources ? path.join(resources, 'models') : null,
        env: process.env,
      });
      agent = spawn(run.command, run.args, {
        ...(run.cwd && { cwd: run.cwd }),
        env: { ...process.env, ...run.env },
        stdio: 'inherit',
      });
    },
  });
  console.log(JSON.stringify({ msg: started ? 'agent started' : 'agent attached', url: AGENT_URL }));
  const kiosk = await startKioskServer({
    agentUrl: AGENT_URL,
    cloudUrl: process.env.PORTICO_CLOUD_URL ?? '',
  });
  const pageUrl = `${kiosk.url}/?event=${encodeURIComponent(process.env.KIOSK_EVENT ?? '')}`;

  session.defaultSession.setPermissionRequestHandler((_contents, permission, callback, details) =>
    callback(isAllowedPermission(permission, details as { mediaTypes?: string[] })),
  );
  session.defaultSession.setPermissionCheckHandler((_contents, permission) =>
    isAllowedPermission(permission),
  );

  const win = new BrowserWindow({
    kiosk: true,
    fullscreen: true,
    autoHideMenuBar: true,
    webPreferences: {
      preload: fileURLToPath(new URL('./preload.cjs', import.meta.url)),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
    },
  });
  win.webContents.on('will-navigate', (event, url) => {
    if (!isAllowedNavigation(url, kiosk.url)) event.preventDefault();
  });
  win.webContents.setWindowOpenHandler(() => ({ action: 'deny' }));
  const crashes = createCrashPolicy();
  win.webContents.on('render-process-gone', () => {
    setTimeout(() => void win.loadURL(pageUrl), crashes.crashed());
  });
  await win.loadURL(pageUrl);

  app.on('before-quit', () => {
    agent?.kill('SIGTERM');
    void kiosk.close();
  });
}

void main();
