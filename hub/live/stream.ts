// One stream a child runs for the hub (a tab's screencast, a terminal's output) and the people
// watching it. The child sends one frame at a time (servers/lib/live.ts); the hub acknowledges it
// once it reached at least one viewer, so the stream runs at the pace of its fastest viewer and
// the slower ones skip frames. Whatever the child sends is checked here: a child is its tenant's.
import type { Result } from "@modelcontextprotocol/sdk/types.js";
import {
  LIVE_ACK_METHOD,
  LIVE_CLOSE_METHOD,
  LIVE_CONTROL_METHOD,
  LIVE_INPUT_METHOD,
  MAX_FRAME_BYTES,
  MAX_OUTPUT_CHARS,
  type LiveInputEvent,
  type LiveOpened,
} from "../../servers/lib/live.js";
import { errorMessage } from "../../servers/lib/log.js";
import type { Viewer } from "./viewer.js";

/** What a stream needs of its child: requests (hub/children/child.ts Child is one). */
export interface LiveChild {
  request(method: string, params: Record<string, unknown>): Promise<Result>;
}

// a person's keys and pointer waiting to reach the child; past it, moves are dropped first
const INPUTS_WAITING = 64;
// what a view keeps of a terminal's output, to draw for a viewer who joins or fell behind
const TAIL_CHARS = 64 * 1024;
const FIELD_CHARS = 2048;

const text = (value: unknown) => (typeof value === "string" ? value.slice(0, FIELD_CHARS) : "");

export class Stream {
  readonly viewers = new Set<Viewer>();
  holder?: Viewer;
  /** The newest frame, as sent to viewers, for one who joins while the page is still. */
  private latest?: Buffer;
  /** The child's last frame or output is not acknowledged yet. */
  private owed = false;
  private tail = "";
  /** Inputs and control changes on their way to the child, in the order the person made them. */
  private outbox: Array<{ method: string; params: Record<string, unknown>; event?: LiveInputEvent }> = [];
  private sending = false;
  private ended = false;

  constructor(
    readonly key: string,
    readonly name: string,
    readonly child: LiveChild,
    readonly opened: LiveOpened,
    /** Called once when the stream is over, however it ended. */
    private readonly onEnd: (stream: Stream) => void,
  ) {
    if (typeof opened.output === "string") this.tail = opened.output.slice(-TAIL_CHARS);
  }

  /** The first ack starts the child's stream (servers/lib/live-host.ts). */
  start(): void {
    this.ackChild();
  }

  join(viewer: Viewer): void {
    this.viewers.add(viewer);
    const { kind, tab, terminal, url, title, cols, rows } = this.opened;
    viewer.status("hello", { type: "opened", kind, tab, terminal, url, title, cols, rows, holder: this.holderFor(viewer) });
    if (kind === "terminal" && this.tail) viewer.offerOutput(this.tail, () => this.tail);
    if (this.latest) viewer.offerFrame(this.latest);
  }

  leave(viewer: Viewer): void {
    if (!this.viewers.delete(viewer)) return;
    if (this.holder === viewer) this.control(viewer, false);
    if (!this.viewers.size) this.close("no one watches");
  }

  private holderFor(viewer: Viewer): "you" | "another person" | "agent" {
    return this.holder === viewer ? "you" : this.holder ? "another person" : "agent";
  }

  /** A viewer takes control or hands it back; false when another person holds it. */
  control(viewer: Viewer, take: boolean): boolean {
    if (take && this.holder && this.holder !== viewer) return false;
    if (!take && this.holder !== viewer) return true;
    this.holder = take ? viewer : undefined;
    // after the inputs already on their way: a click made just before the hand-back still lands
    this.post({ method: LIVE_CONTROL_METHOD, params: { stream: this.name, holder: take ? "person" : "agent" } });
    for (const v of this.viewers) v.status("control", { type: "control", holder: this.holderFor(v) });
    return true;
  }

  /** A person's input, from the holder only, in order; bounded while the child is slow. */
  input(viewer: Viewer, event: LiveInputEvent): void {
    if (viewer !== this.holder || this.ended) return;
    if (this.outbox.length >= INPUTS_WAITING) {
      const move = this.outbox.findIndex(({ event: e }) => e?.type === "mouse" && e.action === "move");
      if (move < 0) return;
      this.outbox.splice(move, 1);
    }
    this.post({ method: LIVE_INPUT_METHOD, params: { stream: this.name, event }, event });
  }

  private post(message: (typeof this.outbox)[number]): void {
    this.outbox.push(message);
    if (!this.sending) void this.drain();
  }

  private async drain(): Promise<void> {
    this.sending = true;
    while (this.outbox.length && !this.ended) {
      const { method, params } = this.outbox.shift()!;
      await this.child.request(method, params).catch(() => undefined);
    }
    this.sending = false;
  }

  /** An event the child sent for this stream; anything malformed or out of turn is dropped. */
  event(params: Record<string, unknown>): void {
    if (this.ended) return;
    switch (params.type) {
      case "frame":
        return this.frame(params);
      case "output":
        return this.output(params);
      case "navigated":
      case "switched": {
        const status = {
          type: params.type,
          url: text(params.url),
          title: text(params.title),
          ...(params.type === "switched" ? { tab: Number(params.tab) } : {}),
        };
        Object.assign(this.opened, { url: status.url, title: status.title }, params.type === "switched" ? { tab: status.tab } : {});
        for (const v of this.viewers) v.status("page", status);
        return;
      }
      case "closed":
        return this.close(text(params.why) || "it ended", false);
    }
  }

  private frame(params: Record<string, unknown>): void {
    // one frame in flight: a child that sends another before its ack is ignored until it waits
    if (this.owed || typeof params.data !== "string" || params.data.length > Math.ceil(MAX_FRAME_BYTES / 3) * 4) return this.refuse();
    const jpeg = Buffer.from(params.data, "base64");
    if (jpeg.length < 4 || jpeg[0] !== 0xff || jpeg[1] !== 0xd8) return this.refuse();
    const m = (params.metadata ?? {}) as Record<string, unknown>;
    const num = (v: unknown, fallback: number) => (typeof v === "number" && Number.isFinite(v) ? v : fallback);
    const metadata = {
      deviceWidth: num(m.deviceWidth, 0),
      deviceHeight: num(m.deviceHeight, 0),
      offsetTop: num(m.offsetTop, 0),
      pageScaleFactor: num(m.pageScaleFactor, 1),
      scrollOffsetX: num(m.scrollOffsetX, 0),
      scrollOffsetY: num(m.scrollOffsetY, 0),
    };
    // one buffer for every viewer: a 4-byte header length, the header as JSON, the JPEG
    const header = Buffer.from(JSON.stringify(metadata));
    const size = Buffer.alloc(4);
    size.writeUInt32BE(header.length);
    const message = Buffer.concat([size, header, jpeg]);
    this.latest = message;
    this.owed = true;
    let delivered = false;
    for (const v of this.viewers) delivered = v.offerFrame(message) || delivered;
    if (delivered) this.ackChild();
  }

  /** A frame the hub will not show: let the child go on, unless it is one out of turn (then it waits for the ack it owes). */
  private refuse(): void {
    if (!this.owed) this.ackChild();
  }

  private output(params: Record<string, unknown>): void {
    if (this.owed || typeof params.data !== "string") return;
    const data = params.data.slice(-MAX_OUTPUT_CHARS);
    this.tail = (this.tail + data).slice(-TAIL_CHARS);
    this.owed = true;
    for (const v of this.viewers) v.offerOutput(data, () => this.tail);
    this.ackChild();
  }

  /** A viewer drew its frame: if that was the child's latest, the child may send the next. */
  viewerAcked(viewer: Viewer): void {
    const sent = viewer.acked();
    if (this.owed && sent && sent === this.latest) this.ackChild();
  }

  private ackChild(): void {
    this.owed = false;
    this.call(LIVE_ACK_METHOD, { stream: this.name });
  }

  private call(method: string, params: Record<string, unknown>): void {
    void this.child.request(method, params).catch((err) => {
      if (method !== LIVE_CLOSE_METHOD) this.close(`the server stopped streaming (${errorMessage(err)})`, false);
    });
  }

  /** End the stream for everyone: viewers are told why and their sockets closed. */
  close(why: string, tellChild = true): void {
    if (this.ended) return;
    this.ended = true;
    this.outbox = [];
    if (tellChild) this.call(LIVE_CLOSE_METHOD, { stream: this.name });
    for (const v of this.viewers) {
      v.status("closed", { type: "closed", why });
      v.socket.close(1000, "stream ended");
    }
    this.viewers.clear();
    this.onEnd(this);
  }
}
