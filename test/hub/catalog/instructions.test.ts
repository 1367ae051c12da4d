// A session's instructions: the hub's one sentence, then each selected server's own instructions
// under its prefix, read from the servers themselves (the hub names none of them).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { HUB_INSTRUCTIONS, mergeInstructions } from "../../../hub/catalog/instructions.js";
import { fixture, startHub, type TestHub } from "../../helpers/hub.js";

const ECHO = "A test server: echo text back";

describe("merging instructions", () => {
  test("labels each server by its prefix, an unprefixed one by its name, and skips servers with nothing to say", () => {
    const merged = mergeInstructions("Hub.", [
      { name: "one", prefix: "p1", instructions: " First. " },
      { name: "quiet", prefix: "q" },
      { name: "blank", prefix: "b", instructions: "  " },
      { name: "bare", prefix: "", instructions: "Second." },
    ]);
    assert.equal(merged, "Hub.\n\np1_*: First.\n\nbare (unprefixed tools): Second.");
  });
});

describe("session instructions", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ servers: ["file"], extraServers: { echo: fixture("echo-server"), bare: { ...fixture("echo-server"), prefix: "" } } });
  });
  after(() => hub.stop());

  const instructionsOf = async (path?: string) => (await hub.connect(path ? { path } : {})).getInstructions() ?? "";

  test("a full session hears the hub's sentence and every server's own instructions", async () => {
    const text = await instructionsOf();
    assert.ok(text.startsWith(HUB_INSTRUCTIONS), text);
    assert.match(text, /\n\nfile_\*: Files in the shared agentbox workspace/);
    assert.ok(text.includes(`\n\necho_*: ${ECHO}`), text);
    assert.ok(text.includes(`\n\nbare (unprefixed tools): ${ECHO}`), text);
    assert.doesNotMatch(text, /browser|terminal|arxiv|markitdown/i, "servers this hub does not run are not mentioned");
  });

  test("?servers= keeps only the selected servers' instructions", async () => {
    const text = await instructionsOf("/mcp?servers=file");
    assert.match(text, /file_\*: /);
    assert.doesNotMatch(text, /echo_\*|unprefixed/);
  });

  test("?tools= keeps only the servers whose tools it selects", async () => {
    const text = await instructionsOf("/mcp?tools=echo_echo");
    assert.ok(text.includes(`echo_*: ${ECHO}`), text);
    assert.doesNotMatch(text, /file_\*|unprefixed/);
  });

  test("search mode adds how to find tools to the hub's sentence, before the servers'", async () => {
    const text = await instructionsOf("/mcp?catalog=search");
    assert.match(text, /^[^\n]*call hub_find_tools with a task[^\n]*\n\n/);
    assert.match(text, /file_\*: /);
  });
});
