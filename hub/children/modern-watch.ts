// The resources the hub's clients subscribed to on a 2026-07-28 child. That revision has no
// resources/subscribe: a client names the URIs it wants updates for in a subscriptions/listen
// stream's filter, fixed for the stream's life. The hub keeps one such stream per child naming
// every URI some session subscribed to, and replaces it when that set changes: the new stream is
// acknowledged before the old one is closed, so no update falls between them. The updates arrive
// as notifications/resources/updated, which the link hands on like a 2025 child's.
import { setTimeout as delay } from "node:timers/promises";
import type { Client, McpSubscription } from "@modelcontextprotocol/client";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../../servers/lib/log.js";

/** The pause before a cut stream is opened again (a child that cuts every stream is not asked in a loop). */
const REOPEN_AFTER_MS = 1000;

export class ResourceWatch {
  /** URI -> the sessions (as the hub named them to the child) subscribed to it. */
  private readonly watchers = new Map<string, Set<string>>();
  private stream?: McpSubscription;
  /** The URIs the current stream asked for. */
  private named: string[] = [];
  /** The latest change to the stream: changes run one after another, each naming the set as it then is. */
  private settled: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: Client,
    private readonly server: string,
    private readonly timeoutMs: number,
  ) {}

  /** Watch `uri` for `session`; settles once the child's stream names it (and fails, unwatched, when the child refuses). */
  async subscribe(uri: string, session: string): Promise<void> {
    const sessions = this.watchers.get(uri) ?? new Set();
    if (sessions.has(session)) return;
    sessions.add(session);
    this.watchers.set(uri, sessions);
    try {
      await this.renew();
    } catch (err) {
      this.drop(uri, session);
      throw err;
    }
    if (!this.stream?.honoredFilter.resourceSubscriptions?.includes(uri)) {
      this.drop(uri, session);
      throw new McpError(ErrorCode.InvalidRequest, `The '${this.server}' server did not take a subscription to ${uri.slice(0, 200)}.`);
    }
  }

  /** Stop watching `uri` for `session` (nothing when it did not watch it); the stream stops naming it once nobody does. */
  async unsubscribe(uri: string, session: string): Promise<void> {
    if (this.drop(uri, session)) await this.renew().catch(() => undefined);
  }

  /** A session that ended holds nothing any more: its URIs stop being named once no other session watches them. */
  async forget(session: string): Promise<void> {
    let dropped = false;
    for (const uri of [...this.watchers.keys()]) dropped = this.drop(uri, session) || dropped;
    if (dropped) await this.renew().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.watchers.clear();
    await this.stream?.close();
    this.stream = undefined;
  }

  private drop(uri: string, session: string): boolean {
    const sessions = this.watchers.get(uri);
    if (!sessions?.delete(session)) return false;
    if (!sessions.size) this.watchers.delete(uri);
    return true;
  }

  /** A stream naming exactly the watched URIs (none: no stream). */
  private renew(): Promise<void> {
    const next = this.settled.then(async () => {
      const uris = [...this.watchers.keys()].sort();
      if (this.stream && JSON.stringify(uris) === JSON.stringify(this.named)) return;
      const old = this.stream;
      const stream = uris.length ? await this.client.listen({ resourceSubscriptions: uris }, { timeout: this.timeoutMs }) : undefined;
      this.stream = stream;
      this.named = uris;
      // a stream cut (an HTTP stream dropped) is opened again, after a pause: the sessions still want their updates
      void stream?.closed.then(async (cause) => {
        if (cause !== "remote" || this.stream !== stream) return;
        this.stream = undefined;
        await delay(REOPEN_AFTER_MS);
        await this.renew().catch((err: unknown) => this.client.onerror?.(new Error(`reopening a listen stream: ${errorMessage(err)}`)));
      });
      await old?.close().catch((err: unknown) => this.client.onerror?.(new Error(`closing a listen stream: ${errorMessage(err)}`)));
    });
    // a failed change leaves the stream as it was: the next change starts from there
    this.settled = next.catch(() => undefined);
    return next;
  }
}
