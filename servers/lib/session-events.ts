// The hub tells every child when a client session ends with this notification.
export const SESSION_CLOSED_METHOD = "notifications/agentbox/session_closed";
/** The _meta key carrying the client session id on every call the hub forwards. */
export const SESSION_META_KEY = "agentbox/session";

type Listener = (session: string) => void | Promise<void>;
const listeners = new Set<Listener>();

export function onSessionClosed(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export async function emitSessionClosed(session: string): Promise<void> {
  await Promise.allSettled([...listeners].map((l) => l(session)));
}
