// `printf %s 123456 | pnpm --filter @portico/device-agent hash-pin`: prints the STAFF_PIN_HASH of a PIN
// read from standard input (not an argument: it would stay in the shell history and the process list).
import { text } from 'node:stream/consumers';
import { hashPin } from './pin.js';

try {
  console.log(hashPin((await text(process.stdin)).trim()));
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
