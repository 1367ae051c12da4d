// A child's side of live views (./live.ts): the hub's requests handled on the SDK server, each open
// stream kept under a name of its own, and the server-specific part (a tab's screencast, a pty's
// output) left to the server's LiveProvider. A stream ends when the hub closes it, when its session
// ends, or when what it shows goes away (the provider then emits "closed").
import { randomBytes } from "node:crypto";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { z } from "zod";
import {
  LIVE_ACK_METHOD,
  LIVE_CLOSE_METHOD,
  LIVE_CONTROL_METHOD,
  LIVE_EVENT_METHOD,
  LIVE_INPUT_METHOD,
  LIVE_OPEN_METHOD,
  liveControlParams,
  liveInputParams,
  liveOpenParams,
  streamParams,
  type LiveEvent,
  type LiveInputEvent,
  type LiveOpened,
  type LiveOpenParams,
} from "./live.js";
import { errorMessage, type Logger } from "./log.js";
import { onSessionClosed } from "./session-events.js";
import { ToolError } from "./tool.js";

type Without<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;
/** An event as a provider emits it; the host names the stream. */
export type StreamEvent = Without<LiveEvent, "stream">;

/** One open stream, as its provider runs it. */
export interface LiveStream {
  input(event: LiveInputEvent): Promise<void>;
  /** A person took control (the agent's tools on it then answer heldByPersonText), or gave it back. */
  control(holder: "person" | "agent"): void;
  /** The hub took the last frame or output: the next may come. */
  ack(): void;
  close(): Promise<void>;
}

export interface LiveProvider {
  open(params: LiveOpenParams, emit: (event: StreamEvent) => void): Promise<{ opened: Omit<LiveOpened, "stream">; stream: LiveStream }>;
}

const request = <M extends string, P extends z.ZodType>(method: M, params: P) => z.object({ method: z.literal(method), params });

// what a stream may say before the hub's first ack (a navigation and its load, say): more is dropped
const EARLY_EVENTS = 16;

interface Entry {
  session: string;
  stream?: LiveStream;
  /** Until the hub's first ack, events wait here: the hub knows the stream's name only once `open` answered. */
  early?: StreamEvent[];
}

export function serveLive(server: Server, provider: LiveProvider, log: Logger): void {
  const streams = new Map<string, Entry>();
  const send = (name: string, event: StreamEvent) => {
    void server.notification({ method: LIVE_EVENT_METHOD, params: { stream: name, ...event } }).catch(() => undefined);
    if (event.type === "closed") void end(name);
  };
  const find = (name: string) => {
    const stream = streams.get(name)?.stream;
    if (!stream) throw new ToolError(`No live stream '${name}' (it ended).`);
    return stream;
  };
  const end = async (name: string) => {
    const found = streams.get(name);
    if (!found) return;
    streams.delete(name);
    // a stream releases a person's hold as it ends: nobody is left to hand it back
    found.stream?.control("agent");
    await found.stream?.close().catch((err) => log.debug("live stream close failed", { error: errorMessage(err) }));
  };

  server.setRequestHandler(request(LIVE_OPEN_METHOD, liveOpenParams.passthrough()), async ({ params }) => {
    const name = `l${randomBytes(8).toString("hex")}`;
    const entry: Entry = { session: params.session, early: [] };
    streams.set(name, entry);
    const emit = (event: StreamEvent) => {
      if (streams.get(name) !== entry) return;
      if (!entry.early) return send(name, event);
      if (entry.early.length < EARLY_EVENTS || event.type === "frame" || event.type === "closed") entry.early.push(event);
    };
    try {
      const { opened, stream } = await provider.open(params, emit);
      entry.stream = stream;
      return { stream: name, ...opened };
    } catch (err) {
      streams.delete(name);
      throw err;
    }
  });
  server.setRequestHandler(request(LIVE_INPUT_METHOD, liveInputParams.passthrough()), async ({ params }) => {
    await find(params.stream).input(params.event);
    return {};
  });
  server.setRequestHandler(request(LIVE_CONTROL_METHOD, liveControlParams.passthrough()), async ({ params }) => {
    find(params.stream).control(params.holder);
    return {};
  });
  server.setRequestHandler(request(LIVE_ACK_METHOD, streamParams.passthrough()), async ({ params }) => {
    const entry = streams.get(params.stream);
    if (!entry?.stream) return {};
    if (!entry.early) {
      entry.stream.ack();
      return {};
    }
    // the first ack starts the stream: what it said meanwhile goes now, in order
    const early = entry.early;
    entry.early = undefined;
    for (const event of early) send(params.stream, event);
    return {};
  });
  server.setRequestHandler(request(LIVE_CLOSE_METHOD, streamParams.passthrough()), async ({ params }) => {
    await end(params.stream);
    return {};
  });
  onSessionClosed(async (session) => {
    await Promise.all([...streams].filter(([, s]) => s.session === session).map(([name]) => end(name)));
  });
}
