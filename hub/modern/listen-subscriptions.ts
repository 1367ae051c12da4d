// A 2026-07-28 client subscribes to resources by opening a subscriptions/listen stream whose filter
// names them; the SDK serves the stream, and the hub makes the resources' servers watch them (a
// resources/subscribe under the tenant's modern context) for as long as any of the tenant's streams
// names them: counted per URI, subscribed at the first stream and unsubscribed after the last.
import type { SubscribeRequest } from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../../servers/lib/log.js";
import { subscribe, unsubscribe, type HandlerCtx } from "../sessions/handlers.js";
import { quietChannel } from "../sessions/forward.js";
import { knownOwner } from "../sessions/resources.js";

/** A listen may name at most this many resources (a tenant's file server holds 1000 subscriptions per context). */
export const MAX_LISTEN_URIS = 100;

/** The resource URIs a subscriptions/listen request's filter names, if it is one. */
export function listenedUris(body: unknown): string[] | undefined {
  const request = body as { method?: unknown; params?: { notifications?: { resourceSubscriptions?: unknown } } } | null;
  if (request?.method !== "subscriptions/listen") return undefined;
  const uris = request.params?.notifications?.resourceSubscriptions;
  return Array.isArray(uris) && uris.length > 0 && uris.every((u) => typeof u === "string") ? [...new Set(uris as string[])] : undefined;
}

interface Held {
  streams: number;
  /** Settles once the server watches the URI. */
  subscribed: Promise<unknown>;
}

export class ListenSubscriptions {
  /**
   * The tenant's modern context and a URI -> the streams naming it. Keyed by context too: a context
   * that ended took its subscriptions with it (its servers were told), so a new one subscribes anew.
   */
  private readonly held = new Map<string, Held>();
  /** The same key -> its unsubscribe under way: a new stream's subscribe goes after it, or the server would drop the new one. */
  private readonly leaving = new Map<string, Promise<unknown>>();

  /**
   * Subscribe the URIs of a new stream that servers can watch; the returned function releases them
   * when it ends. Throws (having released what it took) when a server refuses one: the stream would
   * never hear of it.
   */
  async acquire(ctx: HandlerCtx, uris: string[]): Promise<() => void> {
    if (uris.length > MAX_LISTEN_URIS) {
      throw new Error(
        `A listen may name at most ${MAX_LISTEN_URIS} resources in resourceSubscriptions (it named ${uris.length}); subscribe to a folder instead.`,
      );
    }
    const taken: Array<[string, string, Held]> = [];
    const release = () => {
      for (const [key, uri, entry] of taken.splice(0)) this.release(ctx, key, uri, entry);
    };
    try {
      // a URI no server watches is heard of only if its server says so unasked, as before this stream
      for (const uri of uris.filter((u) => knownOwner(ctx.session, ctx.view, u)?.capabilities.resources?.subscribe)) {
        const key = `${ctx.session.id}\0${uri}`;
        let entry = this.held.get(key);
        if (!entry) {
          const params = { uri } as SubscribeRequest["params"];
          const after = this.leaving.get(key) ?? Promise.resolve();
          const fresh: Held = { streams: 0, subscribed: after.then(() => subscribe(ctx, params, quietChannel())) };
          this.held.set(key, fresh);
          // a refusal is the stream's that asked; the next stream asks again
          fresh.subscribed.catch(() => this.held.get(key) === fresh && this.held.delete(key));
          entry = fresh;
        }
        entry.streams++;
        taken.push([key, uri, entry]);
        await entry.subscribed;
      }
    } catch (err) {
      release();
      throw err;
    }
    return release;
  }

  private release(ctx: HandlerCtx, key: string, uri: string, entry: Held): void {
    if (--entry.streams > 0 || this.held.get(key) !== entry) return;
    this.held.delete(key);
    const left = entry.subscribed
      .then(() => unsubscribe(ctx, { uri }, quietChannel()))
      .catch((err: unknown) => ctx.hub.log.debug("a listen's resource was not unsubscribed", { uri: uri.slice(0, 200), error: errorMessage(err) }))
      .finally(() => this.leaving.get(key) === left && this.leaving.delete(key));
    this.leaving.set(key, left);
  }
}
