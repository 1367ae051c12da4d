// Live views (issue 38): the hub asks a child (browser, terminal) to stream one of a session's tabs
// or terminals to people watching, over the child's own stdio channel. Method names and shapes are
// defined once here and imported on both sides. Flow control is one frame in flight: the child sends
// a frame (or a batch of output) and sends the next only after the hub's `ack`, so a stream never
// holds more than one message in the hub per child, whatever the child does.
import { z } from "zod";

export const LIVE_OPEN_METHOD = "agentbox/live/open";
export const LIVE_INPUT_METHOD = "agentbox/live/input";
export const LIVE_CONTROL_METHOD = "agentbox/live/control";
export const LIVE_ACK_METHOD = "agentbox/live/ack";
export const LIVE_CLOSE_METHOD = "agentbox/live/close";
export const LIVE_EVENT_METHOD = "notifications/agentbox/live/event";

/** The largest frame (JPEG bytes) a stream may carry; a child sending more has its frame dropped. */
export const MAX_FRAME_BYTES = 2 * 1024 * 1024;
/** The most terminal output one event carries; the child keeps the tail when more piled up unacknowledged. */
export const MAX_OUTPUT_CHARS = 256 * 1024;
/** The largest text one input event may paste or type. */
export const MAX_INPUT_TEXT = 16 * 1024;
/** Viewers ask for frames at most this large (CSS pixels of the viewer): bounds what Chromium encodes. */
export const MAX_VIEW_SIZE = 4096;

export const liveOpenParams = z.object({
  session: z.string().min(1),
  tab: z.number().int().min(0).optional(),
  terminal: z.string().min(1).max(64).optional(),
  maxWidth: z.number().int().min(16).max(MAX_VIEW_SIZE),
  maxHeight: z.number().int().min(16).max(MAX_VIEW_SIZE),
});
export type LiveOpenParams = z.infer<typeof liveOpenParams>;

/** What `open` answers: the child's name for the stream and what it shows now. */
export interface LiveOpened {
  stream: string;
  kind: "browser" | "terminal";
  tab?: number;
  terminal?: string;
  url?: string;
  title?: string;
  /** A terminal's size and its recent output, to draw before the live output. */
  cols?: number;
  rows?: number;
  output?: string;
  [key: string]: unknown;
}

const modifiers = z.number().int().min(0).max(15).optional().describe("Alt 1, Ctrl 2, Meta 4, Shift 8 (CDP's bits)");
const coordinate = z.number().finite().min(-100_000).max(100_000);

/** What a person does in a view, in the page's CSS pixels (the viewer maps its own coordinates through the frame's metadata). */
export const liveInputEvent = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("mouse"),
    action: z.enum(["move", "down", "up", "wheel"]),
    x: coordinate,
    y: coordinate,
    button: z.enum(["left", "middle", "right"]).optional(),
    clickCount: z.number().int().min(1).max(3).optional(),
    deltaX: coordinate.optional(),
    deltaY: coordinate.optional(),
    modifiers,
  }),
  z.object({ type: z.literal("key"), action: z.enum(["down", "up"]), key: z.string().min(1).max(32), modifiers }),
  z.object({ type: z.literal("text"), text: z.string().min(1).max(MAX_INPUT_TEXT) }),
]);
export type LiveInputEvent = z.infer<typeof liveInputEvent>;

export const streamParams = z.object({ stream: z.string().min(1).max(64) });
export const liveInputParams = streamParams.extend({ event: liveInputEvent });
export const liveControlParams = streamParams.extend({ holder: z.enum(["person", "agent"]) });

/** The frame's geometry, as Chromium's screencast reports it: what maps view coordinates to the page's. */
export interface FrameMetadata {
  deviceWidth: number;
  deviceHeight: number;
  offsetTop: number;
  pageScaleFactor: number;
  scrollOffsetX: number;
  scrollOffsetY: number;
}

export type LiveEvent =
  | { stream: string; type: "frame"; data: string; metadata: FrameMetadata }
  | { stream: string; type: "navigated"; url: string; title: string }
  | { stream: string; type: "switched"; tab: number; url: string; title: string }
  | { stream: string; type: "closed"; why: string }
  | { stream: string; type: "output"; data: string };

/** When an agent's call on a tab or terminal a person holds is told to try again (its reply's retryAfterMs). */
export const HELD_RETRY_AFTER_MS = 5000;

/** The words an agent's tool answers with while a person holds its tab or terminal (a `reply.held`): nothing done. */
export function heldByPersonText(what: string): string {
  return `A person is using this ${what} through a live view and holds control: nothing was done. Wait, or call again later.`;
}

/** Said once, on the agent's next call after the person handed control back. */
export function controlBackText(what: string): string {
  return `A person used this ${what} through a live view and handed control back: take a new look before acting (it may have changed).`;
}
