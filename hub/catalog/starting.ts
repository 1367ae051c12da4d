// A list asked for while the hub is still starting its servers: the first tools/list of a client
// that connects in the first seconds would otherwise hold the hub's own tools alone, and a client
// that lists once (most do) would never see the rest. So a list waits for the servers it would
// show that are starting for the first time, never longer than STARTING_WAIT_MS (a server that
// takes longer is listed once it is up, with notifications/tools/list_changed). A restarting
// server keeps its tools listed meanwhile (hub/children/child.ts), so it is not waited for.
// A request naming something no server has yet (a tool call, a prompt, a completion, a resource
// of a template) waits the same way before it is refused as unknown.
import type { Clock, Timer } from "../protocol/clock.js";
import type { ChildState } from "../children/child.js";

/** How long a list waits at most for servers still starting. */
export const STARTING_WAIT_MS = 5000;

/**
 * How long a request naming a tool, prompt or resource not (yet) known waits at most for servers
 * starting for the first time: it fails unless one of them brings the name, so it may wait longer
 * than a list, which answers with what it has.
 */
export const NAME_WAIT_MS = 30_000;

/** What the wait reads of a child: its state and its latest start (settled once up or failed). */
export interface StartingServer {
  readonly name: string;
  readonly state: ChildState;
  readonly started: Promise<void>;
}

/** Settles once every server `shown` admits has started (or failed to), or after `ms`, whichever is first. */
export async function untilStarted(servers: readonly StartingServer[], shown: (server: string) => boolean, clock: Clock, ms = STARTING_WAIT_MS): Promise<void> {
  const starts = servers.filter((s) => s.state === "starting" && shown(s.name)).map((s) => s.started);
  if (!starts.length) return;
  let timer: Timer | undefined;
  const bound = new Promise<void>((resolve) => (timer = clock.after(ms, resolve)));
  await Promise.race([Promise.allSettled(starts), bound]);
  timer?.cancel();
}
