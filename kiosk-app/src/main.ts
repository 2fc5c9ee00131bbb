// `pnpm --filter @portico/kiosk start`: serves the kiosk UI next to a running device agent.
import { listSetting } from '../../device-agent/src/request-guard.js';
import { startKioskServer } from './server.js';

const agentUrl = process.env.AGENT_URL ?? 'http://127.0.0.1:7171';
const cloudUrl = process.env.PORTICO_CLOUD_URL;
if (!cloudUrl) {
  console.error('PORTICO_CLOUD_URL is required (the cloud that serves the event branding)');
  process.exit(1);
}
const server = await startKioskServer({
  agentUrl,
  cloudUrl,
  port: Number(process.env.KIOSK_PORT ?? 7172),
  // Other names the page is opened by (comma separated); any other Host is refused (DNS rebinding).
  allowedHosts: listSetting(process.env.KIOSK_ALLOWED_HOSTS),
});
console.log(JSON.stringify({ msg: 'kiosk listening', url: server.url, agentUrl }));
