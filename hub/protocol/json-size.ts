// How large a message is without serializing it: the event store (hub/http/event-store.ts) keeps
// events within a byte budget by it, and a server's queue (hub/children/queue-budget.ts) the calls
// waiting for a slot.

/**
 * Roughly the length of a message's JSON, without making it (the SDK serializes each message once
 * to write it; a second JSON.stringify here would double the cost of every large result): strings
 * by `stringSize` (their length unless told otherwise), everything else by a small constant.
 * Iterative, so deep nesting cannot overflow.
 */
export function approximateJsonSize(message: unknown, stringSize: (text: string) => number = (text) => text.length): number {
  let size = 0;
  const pending: unknown[] = [message];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === "string") size += stringSize(value) + 2;
    else if (Array.isArray(value)) {
      size += 2 + value.length;
      for (const item of value) pending.push(item);
    } else if (value !== null && typeof value === "object") {
      size += 2;
      for (const key in value) {
        size += stringSize(key) + 4;
        pending.push((value as Record<string, unknown>)[key]);
      }
    } else size += 8;
  }
  return size;
}
