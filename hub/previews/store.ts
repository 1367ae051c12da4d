// The tokens a hub holds for links under its own address (previews, recordings' downloads, live
// views of hub/live/): each token's tenant and session, when it ends, and the tokens ended lately
// (so a browser is told "ended" rather than "unknown"). A lookup compares the whole token in
// constant time after finding it by its digest.
import { createHash, timingSafeEqual } from "node:crypto";
import type { Clock, Timer } from "../protocol/clock.js";

/** What a token grants, and to whom: it ends with its session, or when it expires. */
export interface Grant {
  token: string;
  tenant: string;
  /** The session that asked for it: the grant ends with it. */
  session: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface Preview extends Grant {
  /** The uid whose listening socket the port must be (the tenant's). */
  uid: number;
  port: number;
}

export type Ending = "revoked" | "expired" | "session ended" | "hub stopped";

/** What a token names: a live grant, one that ended (and why), or nothing known. */
export type Lookup<T extends Grant = Preview> = { preview: T } | { ended: Ending } | undefined;

// ended tokens remembered for a clearer answer; beyond this the oldest are forgotten (then 404)
const ENDED_KEPT = 4096;

const digest = (token: string) => createHash("sha256").update(token).digest("base64");

export class TokenStore<T extends Grant = Preview> {
  private readonly live = new Map<string, { grant: T; timer: Timer }>();
  private readonly ended = new Map<string, Ending>();

  constructor(
    /** Called when a grant ends, however it ends (a preview's open connections are cut). */
    private readonly onEnd: (grant: T, why: Ending) => void,
    /** When a grant expires. */
    private readonly clock: Clock,
  ) {}

  add(grant: T): void {
    const timer = this.clock.after(grant.expiresAt.getTime() - this.clock.now(), () => this.end(grant.token, "expired"));
    this.live.set(digest(grant.token), { grant, timer });
  }

  lookup(token: string): Lookup<T> {
    const key = digest(token);
    const found = this.live.get(key)?.grant;
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

  /** End one grant; false when the token names no live one. */
  end(token: string, why: Ending): boolean {
    const key = digest(token);
    const found = this.live.get(key);
    if (!found || found.grant.token !== token) return false;
    found.timer.cancel();
    this.live.delete(key);
    this.ended.set(key, why);
    if (this.ended.size > ENDED_KEPT) this.ended.delete(this.ended.keys().next().value!);
    this.onEnd(found.grant, why);
    return true;
  }

  /** Live grants, optionally only those of a tenant or of a session, oldest first. */
  list(filter: { tenant?: string; session?: string } = {}): T[] {
    return [...this.live.values()]
      .map(({ grant }) => grant)
      .filter((p) => (filter.tenant === undefined || p.tenant === filter.tenant) && (filter.session === undefined || p.session === filter.session));
  }

  count(tenant: string): number {
    let n = 0;
    for (const { grant } of this.live.values()) if (grant.tenant === tenant) n++;
    return n;
  }

  endAll(filter: { session?: string }, why: Ending): void {
    for (const p of this.list(filter)) this.end(p.token, why);
  }
}

/** The previews a hub holds. */
export class PreviewStore extends TokenStore<Preview> {}
