// Code run by a session calls the hub's tools as that session (servers/code's tool bridge), so it
// gets that session's selection: agent code trying to reach a tool its session left out, directly
// or by adding a wider selection to the hub URL, is refused.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { startCodeHub, run, type CodeHub } from "../../code/harness.js";

describe("selection seen from code", () => {
  let hub: CodeHub;
  let client: Client;
  before(async () => {
    hub = await startCodeHub(["code", "file"]);
    client = await hub.connect({ path: "/mcp?servers=code" });
  });
  after(() => hub?.stop());

  test("the Python bridge sees only the session's selection", async () => {
    const listed = await run(client, "python", "from agentbox import tools\nsorted(n for n in dir(tools) if n.startswith('file_'))");
    assert.equal(listed.text, "[]");
  });

  test("calling a left-out tool through the bridge, or with a wider URL, is refused", async () => {
    const code = [
      "import json, os, urllib.request",
      "from agentbox import call_tool, ToolCallError",
      "outcomes = []",
      "try:",
      "    call_tool('file_write', {'path': 'escaped.txt', 'content': 'x'})",
      "    outcomes.append('direct: written')",
      "except ToolCallError as e:",
      "    outcomes.append('direct: ' + str(e))",
      "for query in ['?servers=file,code', '?tools=file_*']:",
      "    body = json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call', 'params': {'name': 'file_write', 'arguments': {'path': 'escaped.txt', 'content': 'x'}}}).encode()",
      "    req = urllib.request.Request(os.environ['AGENTBOX_HUB_URL'] + query, data=body, method='POST', headers={",
      "        'Content-Type': 'application/json', 'Accept': 'application/json',",
      "        'X-Agentbox-Session-Token': os.environ.get('AGENTBOX_SESSION_TOKEN', '')})",
      "    try:",
      "        with urllib.request.urlopen(req) as res:",
      "            reply = json.loads(res.read())",
      "        outcomes.append(query + ': ' + json.dumps(reply.get('result', reply.get('error'))))",
      "    except urllib.error.HTTPError as e:",
      "        outcomes.append(query + ': HTTP %d %s' % (e.code, e.read().decode()))",
      "print('\\n'.join(outcomes))",
    ].join("\n");
    const result = await run(client, "python", code);
    const lines = result.data.stdout.trim().split("\n");
    assert.equal(lines.length, 3, result.data.stdout + (result.data.error ?? ""));
    assert.match(lines[0], /^direct: file_write: Tool 'file_write' exists but is not in this session's selection/);
    for (const line of lines.slice(1)) assert.match(line, /HTTP 400|not in this session's selection|outside/, line);
    assert.ok(!lines.some((l) => /written|"isError": false/.test(l)));
    const { existsSync } = await import("node:fs");
    assert.equal(existsSync(`${hub.workspace}/escaped.txt`), false, "nothing was written");
  });
});
