// The recordings' parts of the previews room on their own: what a hostile server's listing is cut
// down to, and the download links' tokens (one per recording, bound to it, ending with their
// session, on expiry and with the hub).
import assert from "node:assert/strict";
import { afterEach, describe, mock, test } from "node:test";
import { MAX_PER_SERVER, sanitizeListing } from "../../../hub/previews/recording-listing.js";
import { RecordingLinks, tokenOfRecordingPath, type RecordingRequest } from "../../../hub/previews/recordings.js";
import { MintedSecrets } from "../../../hub/observability/minted-secrets.js";
import { systemClock } from "../../../hub/protocol/clock.js";

const good = { id: "terminal-abc-123456", kind: "terminal", format: "asciicast", startedAt: "2026-01-02T03:04:05.000Z", endedAt: null, bytes: 10 };

describe("a server's listing, taken as untrusted", () => {
  test("entries that would name a path, mix a kind with another's format or lie about their shape are dropped", () => {
    const hostile = [
      good,
      { ...good, id: "../../etc/shadow" },
      { ...good, id: "..%2F..%2Fetc" },
      { ...good, id: "/etc/shadow" },
      { ...good, id: "a/b" },
      { ...good, id: "x".repeat(65) },
      { ...good, id: "Upper" },
      { ...good, id: "terminal-ok-1", kind: "terminal", format: "playwright-trace" },
      { ...good, id: "terminal-ok-2", format: "exe" },
      { ...good, id: "terminal-ok-3", bytes: -1 },
      { ...good, id: "terminal-ok-4", bytes: "10" },
      { ...good, id: "terminal-ok-5", startedAt: "yesterday" },
      { ...good, id: "terminal-ok-6", startedAt: "2026-01-02T03:04:05.000Z".padEnd(100, "0") },
      { ...good, id: "terminal-ok-7", endedAt: 5 },
      "not an object",
      null,
    ];
    assert.deepEqual(
      sanitizeListing({ recordings: hostile }).map((e) => e.id),
      [good.id],
    );
  });

  test("a huge listing is cut to its first entries, a note to a short line of plain text", () => {
    const many = Array.from({ length: 50_000 }, (_, i) => ({ ...good, id: `terminal-${i}`, note: `\u001b[31mred\u0007${"n".repeat(10_000)}` }));
    const kept = sanitizeListing({ recordings: many });
    assert.equal(kept.length, MAX_PER_SERVER);
    assert.ok(kept.every((e) => e.note!.length <= 300 && !/[\u0000-\u001f]/.test(e.note!)));
  });

  test("an answer that is not a listing is an empty one", () => {
    for (const answer of [undefined, null, "x", 5, { recordings: "all" }, { recordings: { length: 1e9 } }]) assert.deepEqual(sanitizeListing(answer), []);
  });
});

describe("download links", () => {
  afterEach(() => mock.timers.reset());
  const request = (session: string, id = "terminal-abc-123456"): RecordingRequest => ({
    tenant: "alice",
    session,
    workspace: "/nonexistent",
    uid: 20_001,
    id,
    kind: "terminal",
    format: "asciicast",
  });
  const links = (ttlSeconds = 60) => new RecordingLinks(ttlSeconds, undefined, () => new URL("http://127.0.0.1:8080/"), new MintedSecrets(), systemClock);
  const tokenOf = (url: string) => tokenOfRecordingPath(new URL(url).pathname)!;

  test("one link per recording, naming it; another recording or session gets its own", () => {
    const store = links();
    const a = store.link(request("s1"));
    assert.match(a.url, /^http:\/\/127\.0\.0\.1:8080\/recordings\/[a-z2-7]{26}\/terminal-abc-123456\.cast$/);
    assert.equal(store.link(request("s1")).url, a.url);
    assert.notEqual(store.link(request("s2")).url, a.url);
    assert.notEqual(store.link(request("s1", "terminal-other-000000")).url, a.url);
    const found = store.lookup(tokenOf(a.url));
    assert.ok(found && "preview" in found);
    assert.equal(found.preview.session, "s1");
    assert.equal(found.preview.tenant, "alice");
  });

  test("an altered token names nothing; the session's end and the hub's stop end links", () => {
    const store = links();
    const token = tokenOf(store.link(request("s1")).url);
    const other = tokenOf(store.link(request("s2")).url);
    assert.equal(store.lookup(token.slice(0, -1) + (token.endsWith("a") ? "b" : "a")), undefined);
    store.endSession("s1");
    assert.deepEqual(store.lookup(token), { ended: "session ended" });
    assert.ok("preview" in (store.lookup(other) ?? {}));
    const renewed = tokenOf(store.link(request("s1")).url);
    assert.notEqual(renewed, token, "a listing after the end makes a new link");
    store.stop();
    assert.deepEqual(store.lookup(other), { ended: "hub stopped" });
  });

  test("a link expires on the hub's clock, and the next listing makes a new one", () => {
    mock.timers.enable({ apis: ["Date", "setTimeout"], now: 1_000_000 });
    const store = links(60);
    const first = store.link(request("s1"));
    assert.equal(first.expiresAt.getTime(), 1_060_000);
    mock.timers.tick(59_999);
    assert.ok("preview" in (store.lookup(tokenOf(first.url)) ?? {}));
    mock.timers.tick(1);
    assert.deepEqual(store.lookup(tokenOf(first.url)), { ended: "expired" });
    assert.notEqual(store.link(request("s1")).url, first.url);
  });

  test("paths that are not a link's shape carry no token", () => {
    for (const path of [
      "/recordings/",
      "/recordings/x/terminal-a.cast",
      "/recordings/aaaaaaaaaaaaaaaaaaaaaaaaaa/../x.cast",
      "/recordings/aaaaaaaaaaaaaaaaaaaaaaaaaa/a.sh",
    ]) {
      assert.equal(tokenOfRecordingPath(path), undefined, path);
    }
  });
});
