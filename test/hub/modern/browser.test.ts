// The built-in browser for 2026-07-28 clients: no session travels, yet a tenant's page stays open
// between calls (its default context holds it), a ref from one call's snapshot clicks in the next,
// and another tenant's agent sees none of it.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { startSite, type Site } from "../../fixtures/browser/site.js";
import { callModern, connectModern } from "./modern-client.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

async function browser(client: Client, tool: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = await callModern(client, `browser_${tool}`, args);
  assert.equal(result.isError, undefined, `browser_${tool}: ${textOf(result)}`);
  return textOf(result);
}

const refOf = (snapshot: string, needle: string) => {
  const line = snapshot.split("\n").find((l) => l.includes(needle) && /\[ref=/.test(l));
  assert.ok(line, `no ${needle} in:\n${snapshot}`);
  return line.match(/\[ref=([^\]]+)\]/)![1];
};

describe("the browser for 2026-07-28 clients of two tenants", () => {
  let hub: TestHub;
  let site: Site;
  let alice: Client;
  let aliceAgain: Client;
  let bob: Client;

  before(async () => {
    site = await startSite();
    hub = await startHub({ servers: ["browser"], config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } } });
    [alice, aliceAgain, bob] = await Promise.all([
      connectModern(hub, { headers: auth(KEY_A) }),
      connectModern(hub, { headers: auth(KEY_A) }),
      connectModern(hub, { headers: auth(KEY_B) }),
    ]);
  });
  after(async () => {
    await Promise.allSettled([alice?.close(), aliceAgain?.close(), bob?.close()]);
    await hub?.stop();
    await site?.close();
  });

  test("a page opened in one call is there in the next, and a ref from its snapshot clicks later", async () => {
    assert.match(await browser(alice, "navigate", { url: `${site.origin}/a` }), /Page A/);
    const snapshot = await browser(alice, "snapshot");
    assert.match(snapshot, /Page A/);
    await browser(alice, "click", { ref: refOf(snapshot, "to B") });
    // another connection of the same tenant is the same default context: the same tab
    assert.match(await browser(aliceAgain, "snapshot"), /Page B/);
  });

  test("bob's agent sees nothing of alice's page, and his own page leaves hers alone", async () => {
    const tabs = await callModern(bob, "browser_tabs", {});
    assert.doesNotMatch(JSON.stringify(tabs), /Page [AB]|\/a"|\/b"/);
    assert.match(await browser(bob, "navigate", { url: `${site.origin}/form` }), /Form/);
    assert.doesNotMatch(await browser(bob, "snapshot"), /Page [AB]/);
    assert.match(await browser(alice, "snapshot"), /Page B/);
  });
});
