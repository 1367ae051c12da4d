// Recordings through a real hub run as root (each tenant its own uid): a terminal recorded on request
// or by the operator's AGENTBOX_RECORD, listed by hub_recordings and downloaded by its URL with no
// key; and what a tenant, or another tenant, tries against those links: an altered or ended token,
// the recording's file (or its folder) swapped by the agent for a link to /etc/shadow or to the other
// tenant's files.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { openTerminal, parseCast, recordingsOf, run, untilRecorded, type ListedRecording } from "./recording-helpers.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const skip = process.getuid?.() === 0 ? false : "needs root: tenants run under their own uids";

describe("recordings of terminals", { skip }, () => {
  let hub: TestHub;
  let alice: Client;
  let bob: Client;
  let recording: ListedRecording;

  before(async () => {
    hub = await startHub({ servers: ["terminal"], config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } } });
    alice = await hub.connect({ headers: auth(KEY_A) });
    bob = await hub.connect({ headers: auth(KEY_B) });
  });
  after(() => hub?.stop());

  test("a terminal started with record: true is listed, and its URL downloads an asciicast v2 with its output", async () => {
    const { id, recording: recordingId } = await openTerminal(alice, { record: true, cols: 100, rows: 30 });
    assert.match(recordingId ?? "", /^terminal-/);
    await run(alice, id, "mkdir -p listed && touch listed/alpha-file && ls listed", /alpha-file/);
    await run(alice, id, "echo recorded-$((6*7))", /recorded-42/);
    const [listed, ...more] = await recordingsOf(alice);
    assert.equal(more.length, 0);
    assert.equal(listed.id, recordingId);
    assert.equal(listed.kind, "terminal");
    assert.equal(listed.format, "asciicast");
    assert.equal(listed.endedAt, null, "still recording");
    assert.match(listed.url, new RegExp(`^${hub.origin}/recordings/[a-z2-7]{26}/${recordingId}\\.cast$`));
    // a plain browser download: no key
    const text = await untilRecorded(listed.url, /recorded-42/);
    const { header, events } = parseCast(text);
    assert.equal(header.version, 2);
    assert.equal(header.width, 100);
    assert.equal(header.height, 30);
    assert.equal(typeof header.timestamp, "number");
    const output = events
      .filter((e) => e[1] === "o")
      .map((e) => e[2])
      .join("");
    assert.match(output, /alpha-file/);
    assert.ok(
      events.every((e, i) => typeof e[0] === "number" && (i === 0 || e[0] >= events[i - 1]![0])),
      "times only grow",
    );
    assert.ok(!events.some((e) => e[1] === "i"), "input is not recorded");
    recording = listed;

    const resized = await call(alice, "terminal_session_resize", { id, cols: 80, rows: 24 });
    assert.ok(!resized.isError, textOf(resized));
    await run(alice, id, "echo after-resize", /after-resize\s/);
    const again = await untilRecorded(listed.url, /after-resize/);
    assert.ok(
      parseCast(again).events.some((e) => e[1] === "r" && e[2] === "80x24"),
      "the resize is an r event",
    );

    const killed = await call(alice, "terminal_session_kill", { id });
    assert.ok(!killed.isError, textOf(killed));
    const ended = await until("the recording to end", async () => (await recordingsOf(alice)).find((r) => r.id === recordingId && r.endedAt));
    assert.equal(ended.url, listed.url, "the same link for the same recording");
  });

  test("a terminal without record is not recorded", async () => {
    const before = (await recordingsOf(alice)).length;
    const { id, recording: none } = await openTerminal(alice);
    assert.equal(none, undefined);
    await run(alice, id, "echo plain", /plain\s/);
    assert.equal((await recordingsOf(alice)).length, before);
  });

  test("another tenant's session lists none of it, and its key opens nothing more", async () => {
    assert.deepEqual(await recordingsOf(bob), []);
    const withBobsKey = await fetch(recording.url.replace(/\/[^/]+\.cast$/, "/other.cast"), { headers: auth(KEY_B) });
    assert.equal(withBobsKey.status, 404);
  });

  test("an altered token, or a path that is not the recording's, gets 404 and nothing of it", async () => {
    const tampered = recording.url.replace(
      /\/recordings\/([a-z2-7]+)([a-z2-7])\//,
      (_m, head: string, c: string) => `/recordings/${head}${c === "a" ? "b" : "a"}/`,
    );
    assert.notEqual(tampered, recording.url);
    for (const url of [tampered, recording.url.replace(/\.cast$/, ".zip"), recording.url.replace(/terminal-[^/]+\.cast$/, "..%2F..%2Fetc%2Fshadow")]) {
      const res = await fetch(url);
      assert.equal(res.status, 404, url);
      assert.doesNotMatch(await res.text(), /recorded-42|root:/);
    }
  });

  test("a recording file swapped for a symlink (to /etc/shadow, to the other tenant's file) is not served", async () => {
    const bobsSecret = `bob-secret-${randomBytes(6).toString("hex")}`;
    const { id: bobs } = await openTerminal(bob);
    await run(bob, bobs, `echo ${bobsSecret} > secret.txt && pwd`, /\/bob\s/);
    const { id } = await openTerminal(alice, { record: true });
    await run(alice, id, "echo swap-me", /swap-me\s/);
    const listed = (await recordingsOf(alice)).at(-1)!;
    await untilRecorded(listed.url, /swap-me/);
    const folder = `.agentbox/recordings/*/${listed.id}.cast`;
    const bobsFile = `${hub.workspace}/bob/secret.txt`;
    for (const target of ["/etc/shadow", bobsFile]) {
      await run(alice, id, `f=$(echo ${folder}) && rm -f "$f" && ln -s ${target} "$f" && echo linked-$?`, /linked-0/);
      const res = await fetch(listed.url);
      const body = await res.text();
      assert.equal(res.status, 404, body);
      assert.doesNotMatch(body, /root:|bob-secret/);
    }
    // the session's whole folder swapped for a link to the other tenant's workspace
    await run(alice, id, `d=$(dirname $(echo ${folder})) && mv "$d" moved && ln -s ${hub.workspace}/bob "$d" && echo swapped-$?`, /swapped-0/);
    const res = await fetch(listed.url);
    assert.equal(res.status, 404);
    assert.doesNotMatch(await res.text(), /bob-secret/);
    const ended = await call(alice, "terminal_session_kill", { id });
    assert.ok(!ended.isError, textOf(ended));
  });

  test("the session's end ends its links: 410", async () => {
    const ended = await call(alice, "hub_end_session", {});
    assert.ok(!ended.isError, textOf(ended));
    const res = await until("the link to end", async () => {
      const r = await fetch(recording.url);
      return r.status === 410 ? r : undefined;
    });
    assert.match(await res.text(), /ended \(session ended\)/);
  });
});

describe("recordings the operator asks for", { skip }, () => {
  let hub: TestHub;
  let client: Client;

  before(async () => {
    hub = await startHub({ servers: ["terminal"], env: { AGENTBOX_RECORD: "terminal" } });
    client = await hub.connect();
  });
  after(() => hub?.stop());

  test("AGENTBOX_RECORD=terminal records every terminal without the argument", async () => {
    const { id, recording } = await openTerminal(client);
    assert.match(recording ?? "", /^terminal-/);
    await run(client, id, "echo by-the-operator", /by-the-operator\s/);
    const [listed] = await recordingsOf(client);
    assert.equal(listed?.id, recording);
    await untilRecorded(listed!.url, /by-the-operator/);
  });
});
