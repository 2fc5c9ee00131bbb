// The kiosk's one client of the device agent, through its own origin (`/agent/*` is relayed to the agent
// on this machine; frames never go anywhere else). Answers keep their status: the flows decide on it.
// Their schemas are the agent's (`@portico/contract`, agent.ts); errors are problem+json with a `code`.
import type { AgentProblem } from '@portico/contract';

export interface AgentReply<T> {
  status: number;
  /** `Retry-After`, in seconds (0 when absent): a staff lock-out says how long it lasts. */
  retryAfterS: number;
  body: T & Partial<Pick<AgentProblem, 'code'>>;
}

/** A call to the agent; `staffToken` is sent as `x-staff-session` (the staff routes). */
export async function agent<T>(
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  staffToken?: string,
): Promise<AgentReply<T>> {
  const res = await fetch(`/agent${path}`, {
    method,
    headers: {
      ...(staffToken && { 'x-staff-session': staffToken }),
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return {
    status: res.status,
    retryAfterS: Number(res.headers.get('retry-after') ?? 0),
    body: (await res.json()) as AgentReply<T>['body'],
  };
}
