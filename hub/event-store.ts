// Resumable SSE: keep the most recent events of every stream so a client reconnecting with
// Last-Event-ID gets what it missed. Bounded, so a stream nobody resumes cannot grow forever.
import type { EventStore } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

interface StoredEvent {
  streamId: string;
  message: JSONRPCMessage;
}

export class BoundedEventStore implements EventStore {
  private readonly events = new Map<string, StoredEvent>();
  private counter = 0;

  constructor(private readonly maxEvents = 1000) {}

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const eventId = `${streamId}_${++this.counter}`;
    this.events.set(eventId, { streamId, message });
    // Map iterates in insertion order: the first key is the oldest event
    while (this.events.size > this.maxEvents) this.events.delete(this.events.keys().next().value!);
    return eventId;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.events.get(eventId)?.streamId ?? streamOf(eventId);
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const streamId = this.events.get(lastEventId)?.streamId ?? streamOf(lastEventId);
    if (!streamId) return "";
    const after = Number(lastEventId.slice(lastEventId.lastIndexOf("_") + 1));
    for (const [eventId, event] of this.events) {
      if (event.streamId !== streamId) continue;
      if (Number(eventId.slice(eventId.lastIndexOf("_") + 1)) <= after) continue;
      await send(eventId, event.message);
    }
    return streamId;
  }

}

function streamOf(eventId: string): string | undefined {
  const i = eventId.lastIndexOf("_");
  return i > 0 ? eventId.slice(0, i) : undefined;
}
