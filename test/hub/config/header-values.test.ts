// A server entry's headers are checked when the config is loaded: a value an HTTP header cannot
// carry (a character past Latin-1 such as the "…" of a placeholder left in, a line break or another
// control character) or a name that is no header name stops the hub at start with a message naming
// the server and the header, instead of failing every call later with fetch's "Cannot convert
// argument to a ByteString", which names neither.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { promisify } from "node:util";
import { ConfigError, bundled, loadConfig } from "../../../hub/config/config.js";
import { tempDir } from "../../helpers/hub.js";

function configWith(headers: Record<string, string>): string {
  const file = path.join(tempDir("agentbox-headers-"), "agentbox.json");
  fs.writeFileSync(file, JSON.stringify({ mcpServers: { remote: { url: "http://127.0.0.1:9/mcp", headers } } }));
  return file;
}

const load = (headers: Record<string, string>) => loadConfig({ config: configWith(headers) }, {});

describe("config: a server's headers", () => {
  test("a value with a character past Latin-1 is refused, naming the server, the header and the character", () => {
    assert.throws(
      () => load({ Authorization: "Bearer …" }),
      (err: Error) =>
        err instanceof ConfigError &&
        /mcpServers\.remote\.headers\.Authorization: server "remote", header "Authorization": its value holds "…" \(U\+2026\) at character 8/.test(err.message),
    );
  });

  test("line breaks and other control characters are refused", () => {
    for (const value of ["Bearer a\nX-Injected: 1", "Bearer a\rb", "a\u0000b", "a\u0001b", "a\u007fb"]) {
      assert.throws(
        () => load({ "X-Token": value }),
        (err: Error) => err instanceof ConfigError && /header "X-Token": its value holds a control character/.test(err.message),
        JSON.stringify(value),
      );
    }
  });

  test("a name that is no header name is refused", () => {
    assert.throws(
      () => load({ "Bad Name": "x" }),
      (err: Error) => err instanceof ConfigError && /server "remote", header "Bad Name": not a header name/.test(err.message),
    );
  });

  test("what HTTP carries is accepted as written: ASCII, tabs, Latin-1", () => {
    const headers = { Authorization: "Bearer abc.DEF-123_~+/=", "X-Note": "a\tb", "X-Name": "Zoë" };
    assert.deepEqual(load(headers).mcpServers.remote.headers, headers);
    // and every header fetch would send as it is
    assert.doesNotThrow(() => new Headers(headers));
  });

  test("the hub refuses to start with such a config, saying why", async () => {
    const args = [bundled("hub"), "--port", "0", "--config", configWith({ Authorization: "Bearer …" })];
    // a hub that took the config would serve until stopped: it is ended after a minute, so the test fails rather than waits
    const failed = await promisify(execFile)(process.execPath, args, { timeout: 60_000 }).then(
      () => assert.fail("the hub started"),
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(failed.code, 2);
    assert.match(failed.stderr, /server "remote", header "Authorization": its value holds "…"/);
  });
});
