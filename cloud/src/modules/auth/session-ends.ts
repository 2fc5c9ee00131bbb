// Login sessions ended in this process (logout, a reused refresh token, a password reset, MFA switched
// on, a role change or a deactivation), said after the commit to what holds a session open for long: the
// live check-in stream then checks its session against the database at once instead of at its next
// keep-alive. A hint, not the truth: the database is (other API processes find out at their keep-alive).

export interface SessionEnds {
  /** After a commit that ended one or more of `userId`'s sessions. */
  ended(userId: string): void;
  subscribe(listener: (userId: string) => void): () => void;
}

export function createSessionEnds(): SessionEnds {
  const listeners = new Set<(userId: string) => void>();
  return {
    ended: (userId) => listeners.forEach((l) => l(userId)),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
