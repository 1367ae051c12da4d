// A context's lifetime on the hub's clock (mock.timers drives it): a handle is good until
// AGENTBOX_CONTEXT_TTL_MS after it was minted, used or not; then it is refused with when it expired,
// and what its context held is freed whether or not anyone calls with it again. Handles over HTTP,
// attacked as an agent would, are handles.test.ts.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, mock, test } from "node:test";
import type { SessionView } from "../../../hub/catalog/selection.js";
import { MintedSecrets } from "../../../hub/observability/minted-secrets.js";
import { systemClock } from "../../../hub/protocol/clock.js";
import { Contexts, type MintedContext } from "../../../hub/sessions/contexts.js";
import { ClientSession, SessionRegistry, type CloseReason } from "../../../hub/sessions/registry.js";
import type { ServedTenant } from "../../../hub/tenants/served-tenant.js";

const alice = { name: "alice", keyDigest: "alice-digest" } as unknown as ServedTenant;
const view = {} as SessionView;
const TTL_MS = 4_000;
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("context handles on the hub's clock", () => {
  let closed: Array<[string, CloseReason]>;
  let registry: SessionRegistry;
  let contexts: Contexts;
  let caller: ClientSession;
  const withContext = (handle: string) => contexts.resolve(caller, { name: "t", arguments: { context: handle } }, "t", true);

  beforeEach(() => {
    mock.timers.enable({ apis: ["Date", "setTimeout", "setInterval"], now: 1_000_000 });
    closed = [];
    const secrets = new MintedSecrets();
    registry = new SessionRegistry(60 * 60_000, (session, reason) => closed.push([session.id, reason]), secrets, systemClock);
    contexts = new Contexts({
      sessions: registry,
      ttlMs: TTL_MS,
      idleMs: 60 * 60_000,
      newId: () => randomUUID(),
      open: async (id, kind, tenant, clientKey, view) => registry.add(new ClientSession(id, kind, tenant, clientKey, view, systemClock)),
      secrets,
      clock: systemClock,
    });
    caller = registry.add(new ClientSession("caller", "modern", alice, "client", view, systemClock));
  });
  afterEach(async () => {
    await registry.closeAll();
    mock.timers.reset();
  });

  test("a handle names its context until its ttl is over, used or not; then it is refused with when it expired, and the context is freed", async () => {
    const minted = (await contexts.mint(caller)) as MintedContext;
    assert.equal(minted.expiresAt.getTime(), 1_000_000 + TTL_MS);
    mock.timers.tick(TTL_MS - 1);
    const found = withContext(minted.handle);
    assert.ok("session" in found && found.session === minted.session, "good until the last millisecond");
    mock.timers.tick(1);
    await settle();
    assert.deepEqual(closed, [[minted.session.id, "ttl"]], "what it held is freed when it expires, with nobody calling");
    const refused = withContext(minted.handle);
    assert.ok("refused" in refused);
    const text = (refused.refused.content[0] as { text: string }).text;
    assert.match(text, new RegExp(`expired at ${new Date(1_000_000 + TTL_MS).toISOString()}.*4 s.*hub_new_context`, "s"));
    assert.deepEqual(
      registry.all().map((s) => s.id),
      ["caller"],
    );
  });
});
