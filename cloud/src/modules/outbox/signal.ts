// Wakes the outbox workers of this process right after a commit; other processes find the rows at
// their next poll. A signal, not a queue: the rows in the database are the queue.
export interface OutboxSignal {
  notify(): void;
  subscribe(listener: () => void): () => void;
}

export function createOutboxSignal(): OutboxSignal {
  const listeners = new Set<() => void>();
  return {
    notify: () => listeners.forEach((l) => l()),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
