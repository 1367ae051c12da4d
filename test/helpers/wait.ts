// Waiting on an event instead of sleeping a fixed time before asserting it happened: poll a
// condition until it holds, with a generous deadline that only a real failure reaches.

/** What the queue helpers need of a hub (./hub.ts's TestHub is one). */
interface HubOrigin {
  origin: string;
}

/** Poll `probe` until it returns something other than false/undefined/null; that value is returned. */
export async function until<T>(what: string, probe: () => T | Promise<T>, ms = 15_000, everyMs = 50): Promise<Exclude<T, false | undefined | null>> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value as Exclude<T, false | undefined | null>;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export interface QueueStats {
  running: number;
  queued: number;
}

/** The hub's count of calls running in and queued for one of its servers (GET /; of the tenant whose API key is `key`, on a hub with keys). */
export async function queueOf(hub: HubOrigin, server: string, key?: string): Promise<QueueStats> {
  const headers: Record<string, string> = key ? { Authorization: `Bearer ${key}` } : {};
  const status = (await (await fetch(`${hub.origin}/`, { headers })).json()) as { servers: Array<QueueStats & { name: string }> };
  const entry = status.servers.find((s) => s.name === server);
  if (!entry) throw new Error(`no server '${server}' in the hub's status`);
  return { running: entry.running, queued: entry.queued };
}

/** Wait until the hub has handed at least `running` calls to a server and holds `queued` in its queue. */
export function untilQueue(hub: HubOrigin, server: string, want: Partial<QueueStats>, key?: string): Promise<true> {
  return until(`${server} to have ${JSON.stringify(want)} calls`, async () => {
    const now = await queueOf(hub, server, key);
    return (now.running >= (want.running ?? 0) && now.queued >= (want.queued ?? 0)) || undefined;
  });
}
