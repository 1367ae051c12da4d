// How long a 2026-07-28 call waits for its client's answers (input_required), on the hub's clock
// (mock.timers drives it, and the SDK's state codec, which reads Date.now): 600 s after each round
// was kept, the call is cancelled and its state names nothing; a retry in time takes the call, and
// the expiry with it. Rounds over HTTP are input-required.test.ts and input-rounds.test.ts.
import assert from "node:assert/strict";
import type { ServerContext } from "@modelcontextprotocol/server";
import { afterEach, beforeEach, describe, mock, test } from "node:test";
import { ANSWER_WAIT_SECONDS, PendingCalls } from "../../../hub/modern/pending-calls.js";
import { MintedSecrets } from "../../../hub/observability/minted-secrets.js";
import { systemClock } from "../../../hub/protocol/clock.js";
import type { PendingCall } from "../../../hub/sessions/pending-call.js";
import type { ClientSession } from "../../../hub/sessions/registry.js";

const WAIT_MS = ANSWER_WAIT_SECONDS * 1000;
const session = {} as ClientSession;
const round = { mcpReq: { method: "tools/call" }, http: { authInfo: { clientId: "alice" } } } as unknown as ServerContext;

describe("calls waiting for their clients' answers, on the hub's clock", () => {
  let pending: PendingCalls;
  let abandoned: string[];
  let call: PendingCall;

  beforeEach(() => {
    mock.timers.enable({ apis: ["Date", "setTimeout"], now: Date.UTC(2026, 0, 1) });
    pending = new PendingCalls(new MintedSecrets(), systemClock);
    abandoned = [];
    call = { id: "call-1", sealedRound: 0, session, target: "ask", abandon: (why: string) => abandoned.push(why) } as unknown as PendingCall;
  });
  afterEach(() => mock.timers.reset());

  test("a call nobody answers is cancelled 600 s after its round, saying why, and its state then names nothing", async () => {
    pending.keep(call);
    const sealed = await pending.seal(call, round);
    const state = await pending.verify(sealed, round);
    mock.timers.tick(WAIT_MS - 1);
    assert.deepEqual(abandoned, [], "it waits the whole time");
    mock.timers.tick(1);
    assert.deepEqual(abandoned, [`No answer came within ${ANSWER_WAIT_SECONDS} s; the call was cancelled.`]);
    assert.throws(() => pending.resume(state, session, "ask"), /Invalid requestState: it names no call waiting for an answer here .*expired/s);
    mock.timers.tick(1_000);
    await assert.rejects(pending.verify(sealed, round), /expired/, "the sealed state has expired with it");
  });

  test("a retry in time takes the call and calls its expiry off; the next round waits its own 600 s", async () => {
    pending.keep(call);
    mock.timers.tick(WAIT_MS - 1);
    assert.equal(pending.resume({ call: "call-1", round: 1 }, session, "ask"), call);
    mock.timers.tick(WAIT_MS);
    assert.deepEqual(abandoned, [], "a call taken by its retry is not cancelled by the old round's expiry");
    pending.keep(call);
    mock.timers.tick(WAIT_MS - 1);
    assert.deepEqual(abandoned, []);
    assert.throws(() => pending.resume({ call: "call-1", round: 1 }, session, "ask"), /earlier round's/, "the first round's state is spent");
    mock.timers.tick(1);
    assert.equal(abandoned.length, 1);
  });
});
