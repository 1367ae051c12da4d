// The audit log's writer (hub/observability/audit.ts) and its settings (hub/config/audit.ts): a
// destination that does not drain costs a bounded queue and a count of dropped lines, never memory
// without end; bad settings and a file that cannot be opened stop the hub with a clear message.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import { describe, test } from "node:test";
import { auditConfigFromEnv } from "../../../hub/config/audit.js";
import { ConfigError } from "../../../hub/config/schema.js";
import { AuditLog, type CallRecord } from "../../../hub/observability/audit.js";
import { tempDir } from "../../helpers/hub.js";

const record = (tool: string): CallRecord => ({
  tenant: "alice",
  session: "0123abcd",
  transport: "streamable",
  era: "legacy",
  protocolVersion: "2025-11-25",
  tool,
  outcome: "ok",
  durationMs: 1,
});

/** A destination that takes writes and finishes none until released: a disk that stopped. */
function stalledStream() {
  const written: string[] = [];
  const pending: Array<() => void> = [];
  const stream = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString());
      pending.push(done);
    },
  });
  const release = () => {
    while (pending.length) pending.shift()!();
  };
  return { stream, written, release };
}

describe("the audit log's writer", () => {
  test("a destination that does not drain holds at most the queue bound; the rest is dropped, counted, and said once it drains", async () => {
    const { stream, written, release } = stalledStream();
    const log = new AuditLog({ stream }, 4096);
    for (let i = 0; i < 10_000; i++) log.call(record(`tool_${i}`));
    assert.ok(stream.writableLength <= 4096, `${stream.writableLength} bytes queued`);
    assert.ok(log.droppedLines > 9_000, `${log.droppedLines} dropped`);
    const dropped = log.droppedLines;
    const drain = async () => {
      for (let i = 0; i < 10; i++) {
        release();
        await new Promise((r) => setImmediate(r));
      }
    };
    await drain();
    log.call(record("after"));
    await drain();
    const lines = written
      .join("")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const note = lines.find((l) => l.audit === "dropped");
    assert.deepEqual(note && { lines: note.lines }, { lines: dropped });
    assert.equal(lines.at(-1)?.tool, "after");
    assert.equal(log.droppedLines, 0);
  });

  test("a file is created 0600 and appended to; an existing one is made 0600", async () => {
    const dir = tempDir("agentbox-audit-");
    const file = path.join(dir, "trail.jsonl");
    fs.writeFileSync(file, "earlier\n", { mode: 0o644 });
    const log = new AuditLog({ file });
    log.call(record("one"));
    await log.close();
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const [first, second] = fs.readFileSync(file, "utf8").split("\n");
    assert.equal(first, "earlier");
    assert.equal(JSON.parse(second).tool, "one");
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("a file that cannot be opened is a clear error", () => {
    const dir = tempDir("agentbox-audit-");
    assert.throws(() => new AuditLog({ file: dir }), /Cannot open the audit log \(AGENTBOX_AUDIT_LOG\) .*EISDIR/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe("the audit settings", () => {
  test("stdout by default; stderr, off or an absolute file on request", () => {
    assert.equal(auditConfigFromEnv({}).log, "stdout");
    assert.equal(auditConfigFromEnv({ AGENTBOX_AUDIT_LOG: "off" }).log, "off");
    assert.equal(auditConfigFromEnv({ AGENTBOX_AUDIT_LOG: "stderr" }).log, "stderr");
    assert.deepEqual(auditConfigFromEnv({ AGENTBOX_AUDIT_LOG: "/var/log/audit.jsonl" }).log, { file: "/var/log/audit.jsonl" });
    assert.equal(auditConfigFromEnv({}).arguments, false);
    assert.equal(auditConfigFromEnv({ AGENTBOX_AUDIT_ARGUMENTS: "1" }).arguments, true);
  });

  test("a relative path or an unclear flag is refused, saying what is allowed", () => {
    assert.throws(
      () => auditConfigFromEnv({ AGENTBOX_AUDIT_LOG: "audit.log" }),
      (err: Error) => err instanceof ConfigError && /absolute file path/.test(err.message),
    );
    assert.throws(() => auditConfigFromEnv({ AGENTBOX_AUDIT_ARGUMENTS: "maybe" }), /AGENTBOX_AUDIT_ARGUMENTS must be 1/);
    assert.throws(() => auditConfigFromEnv({ AGENTBOX_METRICS_TENANTS: "0" }), /AGENTBOX_METRICS_TENANTS must be a positive whole number/);
  });
});
