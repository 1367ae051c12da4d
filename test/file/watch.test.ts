// The file server's workspace watch in process: it runs only while someone listens (a subscription,
// a change-feed reader) and stops when nobody does; the feed's ring is bounded and its cursors say
// when something was missed; a subscriber hears each burst once, not once per write.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { createLogger } from "../../servers/lib/log.js";
import { ChangeRing } from "../../servers/file/watch/ring.js";
import { limitsFromEnv, WorkspaceChanges } from "../../servers/file/watch/changes.js";
import { tempDir } from "../helpers/hub.js";
import { until } from "../helpers/wait.js";

const log = createLogger({ server: "watch-test" });

describe("the workspace watch", () => {
  const root = tempDir("agentbox-watch-");
  const told: string[] = [];
  const changes = new WorkspaceChanges(root, { ...limitsFromEnv(), ringSize: 50, feedIdleMs: 300 }, (uri) => told.push(uri), log);
  after(() => changes.stop());

  test("runs while a subscription is held and stops when the last one ends", async () => {
    assert.equal(changes.watching, false);
    await changes.subscribe("s1", "file:///a.txt", "a.txt");
    await changes.subscribe("s2", "file:///a.txt", "a.txt");
    assert.equal(changes.watching, true);
    fs.writeFileSync(path.join(root, "a.txt"), "1");
    await until("the update", () => told.includes("file:///a.txt"));
    await changes.unsubscribe("s1", "file:///a.txt");
    assert.equal(changes.watching, true, "s2 still listens");
    await changes.sessionClosed("s2");
    assert.equal(changes.watching, false);
  });

  test("a change-feed reader keeps it running until it stops reading", async () => {
    await changes.read("reader");
    assert.equal(changes.watching, true);
    await until("the reader's lease to end", () => !changes.watching);
  });

  test("a burst of writes to one file is heard a few times, not once per write", async () => {
    told.length = 0;
    await changes.subscribe("s1", "file:///burst.txt", "burst.txt");
    const file = path.join(root, "burst.txt");
    for (let i = 0; i < 10_000; i++) fs.appendFileSync(file, `${i}\n`);
    fs.writeFileSync(path.join(root, "end.txt"), "");
    const cursor = changes.ring.cursor();
    await until("the end marker", () => changes.ring.since(undefined, (c) => c.path === "end.txt", 10).changes.length > 0);
    assert.ok(told.length > 0 && told.length < 1000, `${told.length} updates for 10,000 writes`);
    assert.equal(changes.ring.since(cursor, () => true, 100).missed, false);
    await changes.sessionClosed("s1");
  });

  test("per-session subscriptions are bounded", async () => {
    const small = new WorkspaceChanges(root, { ...limitsFromEnv(), subscriptionsPerSession: 2 }, () => undefined, log);
    await small.subscribe("s", "file:///1", "1");
    await small.subscribe("s", "file:///2", "2");
    assert.throws(() => small.subscribe("s", "file:///3", "3"), /already has 2 resource subscriptions/);
    await small.stop();
  });
});

describe("the change ring", () => {
  const change = (n: number) => ({ path: `f${n}`, kind: "added" as const, at: "" });

  test("keeps the newest changes only, and a cursor from before them missed some", () => {
    const ring = new ChangeRing(10);
    const start = ring.cursor();
    for (let i = 0; i < 25; i++) ring.push(change(i));
    const page = ring.since(start, () => true, 100);
    assert.equal(page.missed, true);
    assert.deepEqual(
      page.changes.map((c) => c.path),
      Array.from({ length: 10 }, (_, i) => `f${i + 15}`),
    );
    assert.deepEqual(ring.since(page.next, () => true, 100).changes, []);
  });

  test("pages by limit without missing anything", () => {
    const ring = new ChangeRing(10);
    const start = ring.cursor();
    for (let i = 0; i < 5; i++) ring.push(change(i));
    const first = ring.since(start, () => true, 2);
    assert.equal(first.more, true);
    const rest = ring.since(first.next, () => true, 10);
    assert.deepEqual(
      [...first.changes, ...rest.changes].map((c) => c.path),
      ["f0", "f1", "f2", "f3", "f4"],
    );
    assert.equal(rest.missed, false);
  });

  test("a loss (nobody watched) marks earlier cursors, and another process's cursor is foreign", () => {
    const ring = new ChangeRing(10);
    const before = ring.cursor();
    ring.markLoss();
    assert.equal(ring.since(before, () => true, 10).missed, true);
    assert.equal(ring.since(ring.cursor(), () => true, 10).missed, false);
    assert.equal(new ChangeRing(10).since(ring.cursor(), () => true, 10).missed, true);
    assert.throws(() => ring.since("x", () => true, 10), /not a `next`/);
  });
});
