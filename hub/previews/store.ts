// The previews a hub holds: each token's tenant, port and session, when it ends, and the tokens
// ended lately (so a browser is told "ended" rather than "unknown"). Bounded per tenant; a lookup
// compares the whole token in constant time after finding it by its digest.
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

/** What a token names: a live preview, one that ended (and why), or nothing known. */
export type Lookup = { preview: Preview } | { ended: Ending } | undefined;

// ended tokens remembered for a clearer answer; beyond this the oldest are forgotten (then 404)
const ENDED_KEPT = 4096;

const digest = (token: string) => createHash("sha256").update(token).digest("base64");

export class PreviewStore {
  private readonly live = new Map<string, Preview & { timer: Timer }>();
  private readonly ended = new Map<string, Ending>();

  constructor(
    /** Called when a preview ends, however it ends: its open connections are cut. */
    private readonly onEnd: (preview: Preview, why: Ending) => void,
    /** When a preview expires. */
    private readonly clock: Clock,
  ) {}

  add(preview: Preview): void {
    const timer = this.clock.after(preview.expiresAt.getTime() - this.clock.now(), () => this.end(preview.token, "expired"));
    this.live.set(digest(preview.token), { ...preview, timer });
  }

  lookup(token: string): Lookup {
    const key = digest(token);
    const found = this.live.get(key);
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
    if (!found || found.token !== token) return false;
    found.timer.cancel();
    this.live.delete(key);
    this.ended.set(key, why);
    if (this.ended.size > ENDED_KEPT) this.ended.delete(this.ended.keys().next().value!);
    this.onEnd(found, why);
    return true;
  }

  /** Live previews, optionally only those of a tenant or of a session, oldest first. */
  list(filter: { tenant?: string; session?: string } = {}): Preview[] {
    return [...this.live.values()]
      .filter((p) => (filter.tenant === undefined || p.tenant === filter.tenant) && (filter.session === undefined || p.session === filter.session))
      .map(({ timer: _timer, ...p }) => p);
  }

  count(tenant: string): number {
    let n = 0;
    for (const p of this.live.values()) if (p.tenant === tenant) n++;
    return n;
  }

  endAll(filter: { session?: string }, why: Ending): void {
    for (const p of this.list(filter)) this.end(p.token, why);
  }
}
