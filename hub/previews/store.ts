// The previews a hub holds (and, as a TokenStore of their own, its live views, hub/live/): each
// token's tenant and session, when it ends, and the tokens ended lately (so a browser is told
// "ended" rather than "unknown"). A lookup compares the whole token in constant time after finding
// it by its digest.
import { createHash, timingSafeEqual } from "node:crypto";
import type { Clock, Timer } from "../protocol/clock.js";

export interface Preview {
  token: string;
  tenant: string;
  /** The uid whose listening socket the port must be (the tenant's). */
  uid: number;
  port: number;
  /** The session that asked for it: the preview ends with it. */
  session: string;
  createdAt: Date;
  expiresAt: Date;
}

export type Ending = "revoked" | "expired" | "session ended" | "hub stopped";

/** What any token the store keeps is bound to. */
export interface TokenBound {
  token: string;
  tenant: string;
  session: string;
  expiresAt: Date;
}

/** What a token names: a live preview, one that ended (and why), or nothing known. */
export type Lookup<T extends TokenBound = Preview> = { preview: T } | { ended: Ending } | undefined;

// ended tokens remembered for a clearer answer; beyond this the oldest are forgotten (then 404)
const ENDED_KEPT = 4096;

const digest = (token: string) => createHash("sha256").update(token).digest("base64");

export class TokenStore<T extends TokenBound> {
  private readonly live = new Map<string, { item: T; timer: Timer }>();
  private readonly ended = new Map<string, Ending>();

  constructor(
    /** Called when a preview ends, however it ends: its open connections are cut. */
    private readonly onEnd: (preview: T, why: Ending) => void,
    /** When a preview expires. */
    private readonly clock: Clock,
  ) {}

  add(preview: T): void {
    const timer = this.clock.after(preview.expiresAt.getTime() - this.clock.now(), () => this.end(preview.token, "expired"));
    this.live.set(digest(preview.token), { item: preview, timer });
  }

  lookup(token: string): Lookup<T> {
    const key = digest(token);
    const found = this.live.get(key)?.item;
    if (found && found.token.length === token.length && timingSafeEqual(Buffer.from(found.token), Buffer.from(token))) {
      if (found.expiresAt.getTime() <= this.clock.now()) {
        this.end(found.token, "expired");
        return { ended: "expired" };
      }
      return { preview: found };
    }
    const ended = this.ended.get(key);
    return ended ? { ended } : undefined;
  }

  /** End one preview; false when the token names no live one. */
  end(token: string, why: Ending): boolean {
    const key = digest(token);
    const found = this.live.get(key);
    if (!found || found.item.token !== token) return false;
    found.timer.cancel();
    this.live.delete(key);
    this.ended.set(key, why);
    if (this.ended.size > ENDED_KEPT) this.ended.delete(this.ended.keys().next().value!);
    this.onEnd(found.item, why);
    return true;
  }

  /** Live previews, optionally only those of a tenant or of a session, oldest first. */
  list(filter: { tenant?: string; session?: string } = {}): T[] {
    return [...this.live.values()]
      .map(({ item }) => item)
      .filter((p) => (filter.tenant === undefined || p.tenant === filter.tenant) && (filter.session === undefined || p.session === filter.session));
  }

  count(tenant: string): number {
    let n = 0;
    for (const { item } of this.live.values()) if (item.tenant === tenant) n++;
    return n;
  }

  endAll(filter: { session?: string }, why: Ending): void {
    for (const p of this.list(filter)) this.end(p.token, why);
  }
}

/** The previews' store. */
export class PreviewStore extends TokenStore<Preview> {}
