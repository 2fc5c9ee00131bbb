// The check-in stream read with fetch (EventSource cannot send the Authorization header): server-sent
// events parsed from the body, reconnecting after a drop with the last event id.
import type { AdminCheckin } from '@portico/contract';
import type { Session } from './session.js';

const RETRY_MS = 3000;

/** Calls `onCheckin` for each new check-in until the signal aborts; `onState` says whether it is connected. */
export async function followCheckins(
  session: Session,
  signal: AbortSignal,
  onCheckin: (c: AdminCheckin) => void,
  onState: (connected: boolean) => void,
): Promise<void> {
  let lastId: string | undefined;
  while (!signal.aborted) {
    try {
      const { data: body } = await session.api.GET('/v1/admin/checkins/stream', {
        parseAs: 'stream',
        signal,
        headers: { accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) },
      });
      if (!body) throw new Error('no stream');
      onState(true);
      const reader = body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const message = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let data = '';
          for (const line of message.split('\n')) {
            if (line.startsWith('id:')) lastId = line.slice(3).trim();
            else if (line.startsWith('data:')) data += line.slice(5).trim();
          }
          if (data) onCheckin(JSON.parse(data) as AdminCheckin);
        }
      }
    } catch {
      if (signal.aborted) return;
    }
    onState(false);
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}
