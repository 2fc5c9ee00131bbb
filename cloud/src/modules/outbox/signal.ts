// Wakes the outbox workers of this process right after a commit; other processes find the rows at
// their next poll. A signal, not a queue: the rows in the database are the queue.

/** What a worker takes from the database: outbox events (webhooks, bus) or jobs (mails, exports). */
export type OutboxWork = 'events' | 'jobs';

export interface OutboxSignal {
  /** Wakes the workers of `only` (a check-in writes events, never jobs), or every worker. */
  notify(only?: OutboxWork): void;
  subscribe(listener: () => void, work?: OutboxWork): () => void;
}

export function createOutboxSignal(): OutboxSignal {
  const listeners = new Map<() => void, OutboxWork>();
  return {
    notify: (only) => listeners.forEach((work, l) => (only === undefined || only === work) && l()),
    subscribe(listener, work = 'events') {
      listeners.set(listener, work);
      return () => listeners.delete(listener);
    },
  };
}
