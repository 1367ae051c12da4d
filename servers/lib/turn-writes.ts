// Many small writes to one stream within one turn of the event loop, leaving as one system call.
// Under load the hub writes a line to a child's stdin and an audit line per tool call; each was a
// write(2) of its own and woke the child (or the log reader) once per message. The requests that
// arrive in one poll of the event loop are now written together when that poll ends (setImmediate
// runs right after it), by corking the stream until then: order on the stream is kept, as every
// writer's data waits in the same buffer, and a stream's backpressure still counts what waits.
import type { Writable } from "node:stream";

// an array, not a Set: a Set cleared every turn links each retired table to the next, which kept
// what the writes of each turn allocated alive through young-generation collections (hub/protocol/call-table.ts)
let held: Writable[] = [];
let flushQueued = false;
let exitHooked = false;

/** What is written to `stream` from now until this turn of the event loop ends leaves together, in order. */
export function holdUntilTurnEnds(stream: Writable): void {
  if (held.includes(stream) || stream.destroyed || stream.writableEnded) return;
  held.push(stream);
  stream.cork();
  if (!exitHooked) {
    exitHooked = true;
    // process.exit() (or an uncaught error) ends the process before setImmediate runs: write what waits
    process.once("exit", flushHeldWrites);
  }
  if (flushQueued) return;
  flushQueued = true;
  setImmediate(flushHeldWrites);
}

/** Writes out everything held now (a stream about to be ended or closed calls this first). */
export function flushHeldWrites(): void {
  flushQueued = false;
  const streams = held;
  held = [];
  // an uncork may write synchronously and its callbacks hold the stream again: that waits for the next turn
  for (const stream of streams) stream.uncork();
}
