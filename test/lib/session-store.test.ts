// SessionStore's idle rules on their own (servers/lib/session-state.ts): what the sweep frees, what
// a running call holds, and what parts with their own idle time keep. The sweep is called with a
// clock of the test's own, a whole idle time (a minute) past or short of the last use, so no test
// depends on how fast the machine is.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { emitSessionClosed } from "../../servers/lib/session-events.js";
import { SessionStore, type SessionStoreOptions } from "../../servers/lib/session-state.js";

const IDLE_MS = 60_000;
const later = (ms: number) => Date.now() + ms;

interface State {
  session: string;
  parts: Map<string, number>;
}

/** A store whose states record how they were freed. */
function storeOf(extra: Partial<SessionStoreOptions<State>> = {}) {
  const freed: Array<[string, string]> = [];
  const store = new SessionStore<State>({
    create: (session) => ({ session, parts: new Map() }),
    dispose: (_state, session, reason) => void freed.push([session, reason]),
    idleMs: IDLE_MS,
    ...extra,
  });
  return { store, freed };
}

/** A call that runs until the test ends it. */
function pendingCall() {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  return { end, run: () => ended };
}

describe("SessionStore idle sweep", () => {
  test("frees a session untouched for the idle time, and keeps one used within it", async () => {
    const { store, freed } = storeOf();
    await store.get("s-old");
    await store.sweep(later(IDLE_MS / 2));
    assert.deepEqual(freed, [], "used within the idle time: kept");
    await store.sweep(later(2 * IDLE_MS));
    assert.deepEqual(freed, [["s-old", "idle"]]);
    assert.deepEqual(store.sessions(), []);
  });

  test("a session a call is running on is not idle however long the call takes", async () => {
    const { store, freed } = storeOf();
    const call = pendingCall();
    let seen: State | undefined;
    const result = store.use("s-busy", (state) => {
      seen = state;
      return call.run().then(() => "done");
    });
    await store.sweep(later(10 * IDLE_MS));
    assert.deepEqual(freed, [], "busy: kept");
    assert.deepEqual(store.sessions(), ["s-busy"]);
    call.end();
    assert.equal(await result, "done");
    assert.equal(seen, await store.peek("s-busy"), "the call was given the session's own state");
  });

  test("idle time counts from the end of the last call, and overlapping calls all hold the session", async () => {
    const { store, freed } = storeOf();
    const first = pendingCall();
    const second = pendingCall();
    const a = store.use("s-two", first.run);
    const b = store.use("s-two", second.run);
    first.end();
    await a;
    await store.sweep(later(10 * IDLE_MS));
    assert.deepEqual(freed, [], "one call still running: kept");
    second.end();
    await b;
    await store.sweep(later(IDLE_MS / 2));
    assert.deepEqual(freed, [], "ended just now: not idle yet");
    await store.sweep(later(2 * IDLE_MS));
    assert.deepEqual(freed, [["s-two", "idle"]]);
  });

  test("a call that fails still lets the session go idle afterwards", async () => {
    const { store, freed } = storeOf();
    await assert.rejects(
      store.use("s-fail", () => Promise.reject(new Error("boom"))),
      /boom/,
    );
    await store.sweep(later(2 * IDLE_MS));
    assert.deepEqual(freed, [["s-fail", "idle"]]);
  });

  test("the session ending frees its state even while a call runs on it", async () => {
    const { store, freed } = storeOf();
    const call = pendingCall();
    const result = store.use("s-closed", call.run);
    await store.get("s-closed");
    await emitSessionClosed("s-closed");
    assert.deepEqual(freed, [["s-closed", "closed"]]);
    call.end();
    await result;
    const fresh = await store.get("s-closed");
    assert.equal(fresh.parts.size, 0, "a later call gets a new state");
  });

  test("idleMs 0 keeps state until the session ends", async () => {
    const { store, freed } = storeOf({ idleMs: 0 });
    await store.get("s-forever");
    await store.sweep(later(1000 * IDLE_MS));
    assert.deepEqual(freed, []);
  });
});

describe("SessionStore parts with their own idle time", () => {
  /** Parts map a name to when it was last used; the sweep frees those used before the cutoff. */
  const sweepParts = (state: State, _session: string, cutoff: number) => {
    for (const [name, lastUsed] of state.parts) if (lastUsed < cutoff) state.parts.delete(name);
    return state.parts.size > 0;
  };

  test("frees idle parts of a session in use and keeps the others", async () => {
    const { store, freed } = storeOf({ sweepParts });
    const state = await store.get("s-parts");
    state.parts.set("stale", Date.now() - 2 * IDLE_MS);
    state.parts.set("fresh", Date.now());
    await store.sweep(later(IDLE_MS / 2));
    assert.deepEqual([...state.parts.keys()], ["fresh"]);
    assert.deepEqual(freed, []);
  });

  test("a part still in use keeps a session not itself touched for the idle time", async () => {
    const { store, freed } = storeOf({ sweepParts });
    const state = await store.get("s-part-busy");
    state.parts.set("waiting", later(10 * IDLE_MS));
    await store.sweep(later(2 * IDLE_MS));
    assert.deepEqual(freed, [], "a part in use: kept");
    state.parts.set("waiting", Date.now());
    await store.sweep(later(2 * IDLE_MS));
    assert.deepEqual(state.parts.size, 0, "the part idle too: freed");
    assert.deepEqual(freed, [["s-part-busy", "idle"]], "and nothing left in use: the session freed");
  });

  test("a call on a session does not keep its idle parts, only the session", async () => {
    const { store, freed } = storeOf({ sweepParts });
    const call = pendingCall();
    const result = store.use("s-part-call", async (state) => {
      state.parts.set("old", Date.now() - 2 * IDLE_MS);
      await call.run();
    });
    const state = await store.get("s-part-call");
    await store.sweep(later(10 * IDLE_MS));
    assert.equal(state.parts.size, 0, "the idle part freed");
    assert.deepEqual(freed, [], "the busy session kept");
    call.end();
    await result;
  });
});
