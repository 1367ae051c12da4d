// holdUntilTurnEnds (servers/lib/turn-writes.ts): what the hub writes to a child's stdin or to the
// audit trail within one turn of the event loop leaves in one write, in order, and nothing is held
// past that turn.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { nextTurn } from "../../servers/lib/next-turn.js";
import { flushHeldWrites, holdUntilTurnEnds } from "../../servers/lib/turn-writes.js";

/** A stream that records each write it is asked to make, as the batch of chunks it got. */
function recordingStream() {
  const batches: string[][] = [];
  const stream = new Writable({
    writev(chunks, done) {
      batches.push(chunks.map(({ chunk }) => String(chunk)));
      done();
    },
    write(chunk, _encoding, done) {
      batches.push([String(chunk)]);
      done();
    },
  });
  return { stream, batches };
}

test("the writes of one turn leave together, in order, once the turn ends", async () => {
  const { stream, batches } = recordingStream();
  for (const line of ["a\n", "b\n", "c\n"]) {
    holdUntilTurnEnds(stream);
    stream.write(line);
  }
  // a writer that does not hold the stream still goes after what was held before it
  stream.write("d\n");
  assert.deepEqual(batches, [], "nothing written before the turn ends");
  await nextTurn();
  assert.deepEqual(batches, [["a\n", "b\n", "c\n", "d\n"]]);
  holdUntilTurnEnds(stream);
  stream.write("e\n");
  await nextTurn();
  assert.deepEqual(batches.at(-1), ["e\n"], "a later turn is a write of its own");
});

test("what is held is written at once when flushed (the process exits, a stream is closed)", () => {
  const { stream, batches } = recordingStream();
  holdUntilTurnEnds(stream);
  stream.write("x\n");
  flushHeldWrites();
  assert.deepEqual(batches, [["x\n"]]);
});

test("ending a held stream writes what it holds; a stream already ended is not held", async () => {
  const { stream, batches } = recordingStream();
  holdUntilTurnEnds(stream);
  stream.write("last\n");
  await new Promise<void>((resolve) => stream.end(resolve));
  assert.deepEqual(batches.flat(), ["last\n"]);
  holdUntilTurnEnds(stream);
  assert.equal(stream.writableCorked, 0);
  await nextTurn();
});
