// One person's open view: what the hub has sent it and not heard back about. Frames go one at a
// time: the next only after the viewer says it drew the last; meanwhile only the newest waits
// (latest wins), so a viewer that never reads costs the hub one frame reference however long it
// stalls. Status messages (navigations, control) wait the same way while its socket is backed up,
// and a terminal's output piles up only to a bound, past which the viewer is sent the terminal's
// tail afresh instead.
import type { WebSocketConnection } from "./websocket.js";

/** Status messages go straight out while the socket holds less than this unsent. */
const STATUS_BACKLOG_BYTES = 64 * 1024;
/** A viewer's unsent terminal output past which it is reset to the tail instead. */
export const OUTPUT_BACKLOG_CHARS = 256 * 1024;

export class Viewer {
  /** A frame (or output) was sent and the viewer has not acknowledged it. */
  private busy = false;
  private pendingFrame?: Buffer;
  private pendingOutput = "";
  /** The pending output replaces the screen (it outgrew the backlog and is the terminal's tail). */
  private pendingReset = false;
  private pendingStatus = new Map<string, string>();
  /** Frames actually written to the socket (for tests and the bench). */
  framesSent = 0;

  constructor(
    readonly socket: WebSocketConnection,
    readonly tenant: string,
  ) {}

  /** What waits for the viewer: at most one frame, whatever happens. */
  get queued(): number {
    return this.pendingFrame ? 1 : 0;
  }

  /** Offer a frame; true when it went out now (the viewer was free). */
  offerFrame(frame: Buffer): boolean {
    if (this.busy) {
      this.pendingFrame = frame;
      return false;
    }
    this.busy = true;
    this.framesSent++;
    this.socket.send(frame);
    return true;
  }

  offerOutput(data: string, tail: () => string): void {
    if (!this.busy) {
      this.busy = true;
      this.socket.send(JSON.stringify({ type: "output", data }));
      return;
    }
    this.pendingOutput += data;
    if (this.pendingOutput.length > OUTPUT_BACKLOG_CHARS) {
      this.pendingOutput = tail();
      this.pendingReset = true;
    }
  }

  /** A small message; kept (the newest of its kind) while the socket is backed up. */
  status(kind: string, message: object): void {
    const text = JSON.stringify(message);
    if (this.socket.buffered < STATUS_BACKLOG_BYTES && !this.pendingStatus.size) return this.socket.send(text);
    this.pendingStatus.delete(kind);
    this.pendingStatus.set(kind, text);
  }

  /** The viewer drew what it was sent: the next waiting frame or output goes; returns the frame sent, if any. */
  acked(): Buffer | undefined {
    this.busy = false;
    for (const text of this.pendingStatus.values()) this.socket.send(text);
    this.pendingStatus.clear();
    if (this.pendingOutput) {
      const data = this.pendingOutput;
      const reset = this.pendingReset;
      this.pendingOutput = "";
      this.pendingReset = false;
      this.busy = true;
      this.socket.send(JSON.stringify({ type: "output", data, ...(reset ? { reset: true } : {}) }));
      return undefined;
    }
    const frame = this.pendingFrame;
    this.pendingFrame = undefined;
    if (frame) this.offerFrame(frame);
    return frame;
  }
}
