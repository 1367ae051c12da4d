// Resumable SSE: keep the most recent events of every stream so a client reconnecting with
// Last-Event-ID gets what it missed. Bounded in bytes per session and across the hub (an
// EventBudget shared by every session's store), so neither a stream nobody resumes nor a client
// asking for large results over and over can fill the hub's memory. What is dropped is said so
// to a resuming client: a warning naming how many events it lost, and an error in place of any
// lost response, so no request waits forever for a result the hub no longer has.
//
// Evicting an event never touches a live stream: the SDK writes each message to its stream from
// its own reference after storeEvent returns; the store only serves replays.
import type { EventStore } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { approximateJsonSize } from "../protocol/json-size.js";

/** What an event costs beyond its JSON: its id, the map entry, the record (measured: ~150 bytes). */
const EVENT_OVERHEAD_BYTES = 160;
/**
 * Streams remembered per session once their events are gone, for telling a resume what it lost
 * (each POST with a stream is one; ~200 bytes each, so a session's memory stays near its ~50 KB).
 */
const STREAMS_REMEMBERED = 100;
/** Lost responses remembered per stream (a request stream carries one per request of its POST). */
const LOST_RESPONSES_REMEMBERED = 64;

interface StoredEvent {
  streamId: string;
  seq: number;
  message: JSONRPCMessage;
  bytes: number;
}

/** What a session's store knows of one stream: its last sequence number and what it dropped. */
interface StreamLog {
  seq: number;
  kept: number;
  /** Every event of the stream up to this sequence number is gone (eviction goes oldest first). */
  droppedThrough: number;
  lostResponses: Array<{ seq: number; id: RequestId }>;
}

/** The bytes every session's event store may hold: per session, and all of them together. */
export class EventBudget {
  used = 0;
  private readonly stores = new Set<BoundedEventStore>();

  constructor(
    readonly perSession: number,
    readonly total: number,
  ) {}

  add(store: BoundedEventStore): void {
    this.stores.add(store);
  }

  remove(store: BoundedEventStore): void {
    this.stores.delete(store);
  }

  /** Over the hub's total, the oldest events of the largest store go first: one greedy session cannot evict a small one's. */
  reclaim(): void {
    while (this.used > this.total) {
      let largest: BoundedEventStore | undefined;
      for (const store of this.stores) if (!largest || store.bytes > largest.bytes) largest = store;
      if (!largest?.evictOldest()) return;
    }
  }
}

export class BoundedEventStore implements EventStore {
  /** Insertion order is age: the first entry is the oldest event. */
  private readonly events = new Map<string, StoredEvent>();
  /** Every stream the store knows of. */
  private readonly streams = new Map<string, StreamLog>();
  /**
   * The streams none of whose events are kept, least recently emptied first: the only ones ever
   * forgotten. Apart from the others, so that forgetting looks at these alone: scanning every stream
   * on each event cost a session's calls more the more it had made (76 µs a call after a few thousand).
   */
  private readonly emptyStreams = new Map<string, StreamLog>();
  private forgotStreams = false;
  bytes = 0;

  constructor(private readonly budget = new EventBudget(16 * 1024 * 1024, 128 * 1024 * 1024)) {
    budget.add(this);
  }

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const log = this.streamLog(streamId);
    const seq = ++log.seq;
    const eventId = `${streamId}_${seq}`;
    const bytes = approximateJsonSize(message) + EVENT_OVERHEAD_BYTES;
    if (bytes > this.budget.perSession) {
      // never kept; what came before it on its stream goes too, so what a stream lost is always its oldest part
      for (const [id, event] of this.events) if (event.streamId === streamId) this.evict(id, event);
      this.recordDropped(log, seq, message);
      this.markEmpty(streamId, log);
    } else {
      this.events.set(eventId, { streamId, seq, message, bytes });
      log.kept++;
      this.emptyStreams.delete(streamId);
      this.bytes += bytes;
      this.budget.used += bytes;
      while (this.bytes > this.budget.perSession) this.evictOldest();
      this.budget.reclaim();
    }
    this.forgetEmptyStreams(log);
    return eventId;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.events.get(eventId)?.streamId ?? streamOf(eventId);
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const streamId = streamOf(lastEventId);
    if (!streamId) return "";
    const after = Number(lastEventId.slice(streamId.length + 1));
    if (!Number.isSafeInteger(after)) return streamId;
    const log = this.streams.get(streamId);
    if (log && log.droppedThrough > after) {
      // its id is the last lost event's, so resuming again from it does not repeat the warning
      const noticeId = `${streamId}_${log.droppedThrough}`;
      await send(noticeId, this.lossNotice(`${log.droppedThrough - after} event(s) of this stream were`));
      for (const lost of log.lostResponses) if (lost.seq > after) await send(noticeId, this.lostResponse(lost.id));
    } else if (!log && this.forgotStreams) {
      await send(lastEventId, this.lossNotice("Events of this stream may have been"));
    }
    for (const [eventId, event] of this.events) {
      if (event.streamId === streamId && event.seq > after) await send(eventId, event.message);
    }
    return streamId;
  }

  /** Drop the oldest event; false when there is none. */
  evictOldest(): boolean {
    const oldest = this.events.entries().next();
    if (oldest.done) return false;
    this.evict(...oldest.value);
    return true;
  }

  /** The session ended: its events no longer count against the hub's total. */
  dispose(): void {
    this.budget.used -= this.bytes;
    this.bytes = 0;
    this.events.clear();
    this.budget.remove(this);
  }

  private evict(eventId: string, event: StoredEvent): void {
    this.events.delete(eventId);
    this.bytes -= event.bytes;
    this.budget.used -= event.bytes;
    const log = this.streams.get(event.streamId);
    if (!log) return;
    log.kept--;
    this.recordDropped(log, event.seq, event.message);
    if (log.kept === 0) this.markEmpty(event.streamId, log);
  }

  /** Moves a stream with no events kept to the young end of the empty ones. */
  private markEmpty(streamId: string, log: StreamLog): void {
    this.emptyStreams.delete(streamId);
    this.emptyStreams.set(streamId, log);
  }

  private recordDropped(log: StreamLog, seq: number, message: JSONRPCMessage): void {
    log.droppedThrough = Math.max(log.droppedThrough, seq);
    if ("id" in message && ("result" in message || "error" in message) && message.id !== undefined) {
      log.lostResponses.push({ seq, id: message.id });
      if (log.lostResponses.length > LOST_RESPONSES_REMEMBERED) log.lostResponses.shift();
    }
  }

  private streamLog(streamId: string): StreamLog {
    let log = this.streams.get(streamId);
    if (!log) this.streams.set(streamId, (log = { seq: 0, kept: 0, droppedThrough: 0, lostResponses: [] }));
    return log;
  }

  /** Past STREAMS_REMEMBERED, the streams emptied longest ago are forgotten (never `current`); those with events kept are bounded by the bytes. */
  private forgetEmptyStreams(current: StreamLog): void {
    for (const [id, old] of this.emptyStreams) {
      if (this.streams.size <= STREAMS_REMEMBERED) return;
      if (old === current) continue;
      this.emptyStreams.delete(id);
      this.streams.delete(id);
      this.forgotStreams = true;
    }
  }

  private lossNotice(what: string): JSONRPCMessage {
    const perSession = mib(this.budget.perSession);
    const total = mib(this.budget.total);
    return {
      jsonrpc: "2.0",
      method: "notifications/message",
      params: {
        level: "warning",
        logger: "agentbox",
        data:
          `${what} dropped before you resumed: the hub keeps at most ${perSession} of undelivered events per session (AGENTBOX_EVENT_STORE_BYTES) ` +
          `and ${total} across all sessions (AGENTBOX_EVENT_STORE_TOTAL_BYTES). A request whose result was dropped is answered with an error: ` +
          "call it again, and stay connected while large results arrive.",
      },
    };
  }

  private lostResponse(id: RequestId): JSONRPCMessage {
    return {
      jsonrpc: "2.0",
      id,
      error: {
        code: -32000,
        message:
          "The result of this request was dropped before you resumed (the hub's buffer of undelivered events was full); call it again, and stay " +
          "connected while it runs, or ask for less at once.",
      },
    };
  }
}

function streamOf(eventId: string): string | undefined {
  const i = eventId.lastIndexOf("_");
  return i > 0 ? eventId.slice(0, i) : undefined;
}

const mib = (bytes: number) => (bytes >= 1024 * 1024 ? `${+(bytes / 1024 / 1024).toFixed(1)} MiB` : `${Math.round(bytes / 1024)} KiB`);
