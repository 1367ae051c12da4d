// Where time decides who may open a session, on the hub's clock (mock.timers drives it): at a cap,
// sessions idle past AGENTBOX_SESSION_RECLAIM_IDLE_MS make room and a session with a call running
// never does, however long it has been quiet; sessions idle past AGENTBOX_SESSION_IDLE_MS expire;
// the churn rate refuses a burst until its window has passed. The same over HTTP, with real
// clients, is session-caps.test.ts.
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, mock, test } from "node:test";
import type { SessionView } from "../../../hub/catalog/selection.js";
import type { SessionLimits } from "../../../hub/config/session-limits.js";
import { MintedSecrets } from "../../../hub/observability/minted-secrets.js";
import { systemClock } from "../../../hub/protocol/clock.js";
import { SessionAdmission } from "../../../hub/sessions/admission.js";
import { ClientSession, SessionRegistry, type CloseReason, type InflightCall } from "../../../hub/sessions/registry.js";
import type { ServedTenant } from "../../../hub/tenants/served-tenant.js";

const alice = { name: "alice", keyDigest: "alice-digest" } as unknown as ServedTenant;
const view = {} as SessionView;
/** Lets a closing session finish closing (setImmediate is not among the mocked timers). */
const settle = () => new Promise((resolve) => setImmediate(resolve));
const limits = (over: Partial<SessionLimits> = {}): SessionLimits => ({
  eventStoreBytes: 1,
  eventStoreTotalBytes: 1,
  maxSessions: 3,
  maxSessionsPerClient: 200,
  reclaimIdleMs: 60_000,
  sessionRate: false,
  ...over,
});

describe("sessions on the hub's clock", () => {
  let closed: Array<[string, CloseReason]>;
  let registry: SessionRegistry;
  const open = (id: string) => registry.add(new ClientSession(id, "streamable", alice, "client", view, systemClock));

  beforeEach(() => {
    mock.timers.enable({ apis: ["Date", "setTimeout", "setInterval"], now: 1_000_000 });
    closed = [];
    registry = new SessionRegistry(30 * 60_000, (session, reason) => closed.push([session.id, reason]), new MintedSecrets(), systemClock);
  });
  afterEach(async () => {
    await registry.closeAll();
    mock.timers.reset();
  });

  test("at the cap, sessions idle past the floor make room, the longest idle first; none younger does", async () => {
    const admission = new SessionAdmission(limits(), registry);
    open("oldest");
    mock.timers.tick(10_000);
    open("older");
    mock.timers.tick(10_000);
    open("young");
    mock.timers.tick(40_000);
    // oldest idle 60 s: not past the floor yet
    assert.equal(admission.full(alice, "client")?.status, 503, "no session is idle past the floor");
    mock.timers.tick(1);
    assert.equal(admission.full(alice, "client"), undefined, "the oldest makes room");
    await settle();
    assert.deepEqual(closed, [["oldest", "reclaimed"]]);
    assert.deepEqual(
      registry.all().map((s) => s.id),
      ["older", "young"],
    );
  });

  test("a session with a call running is never reclaimed, however long since its client said anything", () => {
    const admission = new SessionAdmission(limits({ maxSessions: 1 }), registry);
    const busy = open("busy");
    busy.inflight.add({ id: "call", seq: 1 } as InflightCall);
    mock.timers.tick(10 * 60_000);
    assert.equal(busy.quietMs, 10 * 60_000);
    assert.equal(busy.idleMs, 0, "a call running is not idleness");
    const refused = admission.full(alice, "client");
    assert.equal(refused?.status, 503);
    assert.equal(refused?.headers.get("retry-after"), "60", "it says to come back when a session could be idle past the floor");
    assert.deepEqual(closed, []);
  });

  test("a client's use keeps its session from idling out; unused past AGENTBOX_SESSION_IDLE_MS it is closed", async () => {
    const used = open("used");
    const left = open("left");
    for (let minute = 0; minute < 40; minute++) {
      mock.timers.tick(60_000);
      used.touch();
    }
    await settle();
    assert.deepEqual(closed, [["left", "idle"]]);
    assert.equal(registry.get("used"), used);
    assert.equal(registry.get("left"), undefined);
    assert.equal(left.closed, true);
  });

  test("a client opening sessions faster than AGENTBOX_SESSION_RATE is refused until the window has passed", async () => {
    const admission = new SessionAdmission(limits({ sessionRate: { points: 2, seconds: 1 } }), registry);
    // a burst of five times the rate is allowed (over ten windows), then the rate itself
    const opened = async () => {
      let n = 0;
      while (!(await admission.tooFast("client"))) n++;
      return n;
    };
    assert.equal(await opened(), 12, "the rate and the burst");
    const refused = await admission.tooFast("client");
    assert.equal(refused?.status, 429);
    assert.equal(refused?.headers.get("retry-after"), "1");
    assert.equal(await admission.tooFast("another client"), undefined, "another client is not slowed");
    mock.timers.tick(1_000);
    assert.equal(await opened(), 2, "a new window lets the rate through");
  });
});
