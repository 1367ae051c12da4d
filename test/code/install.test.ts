// code_install through the hub, offline: a local Python package folder and a local npm package.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, run, openCodeHub, textOf, type CodeHub } from "./harness.js";

/** Fixtures written as if the agent had made them (the tenant builds in them). */
function writeFiles(hub: CodeHub, files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(hub.workspace, name)), { recursive: true });
    fs.writeFileSync(path.join(hub.workspace, name), content);
  }
  hub.handToTenant();
}

describe("code_install", () => {
  let hub: CodeHub;
  let client: Client;

  before(async () => ({ hub, client } = await openCodeHub()));
  after(() => hub?.stop());

  test("pip installs a local package folder; a running session imports it without a restart", async () => {
    // the session exists before the install, to show new packages appear in it
    assert.equal((await run(client, "python", "import numpy\nnumpy.__name__")).text, "'numpy'");
    writeFiles(hub, {
      "pkgs/agentbox_demo_pkg/pyproject.toml":
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n' + '[project]\nname = "agentbox-demo-pkg"\nversion = "1.2.3"\n',
      "pkgs/agentbox_demo_pkg/agentbox_demo_pkg/__init__.py": "def greet(name):\n    return f'hello {name}'\n",
    });
    const installed = await call(client, "code_install", { language: "python", packages: ["./pkgs/agentbox_demo_pkg"] });
    assert.equal(installed.isError, undefined, textOf(installed));
    assert.match(textOf(installed), /Successfully installed agentbox-demo-pkg-1\.2\.3/);
    const used = await run(client, "python", "import agentbox_demo_pkg\nagentbox_demo_pkg.greet('pip')");
    assert.equal(used.text, "'hello pip'");
    // the venv still sees the system packages
    assert.equal((await run(client, "python", "import matplotlib\nmatplotlib.__name__")).text, "'matplotlib'");
    assert.ok(fs.existsSync(path.join(hub.dataDir, "python-venv")), "installed into the server's venv, not the system");
  });

  test("npm installs a local package; JavaScript sessions require and import it", async () => {
    writeFiles(hub, {
      "pkgs/agentbox-demo-js/package.json": JSON.stringify({ name: "agentbox-demo-js", version: "0.4.0", main: "index.js" }),
      "pkgs/agentbox-demo-js/index.js": "exports.shout = (s) => s.toUpperCase() + '!';\n",
    });
    const installed = await call(client, "code_install", { language: "javascript", packages: ["./pkgs/agentbox-demo-js"] });
    assert.equal(installed.isError, undefined, textOf(installed));
    const required = await run(client, "javascript", "const demo = require('agentbox-demo-js')\ndemo.shout('npm')");
    assert.equal(required.text, "'NPM!'");
    const imported = await run(client, "javascript", "import { shout } from 'agentbox-demo-js'\nshout('esm')");
    assert.equal(imported.text, "'ESM!'");
    // copied, not linked: removing the source folder keeps the package
    fs.rmSync(path.join(hub.workspace, "pkgs/agentbox-demo-js"), { recursive: true });
    await call(client, "code_reset", { language: "javascript" });
    assert.equal((await run(client, "javascript", "require('agentbox-demo-js').shout('again')")).text, "'AGAIN!'");
  });

  test("bad requests are refused with a reason", async () => {
    const option = await call(client, "code_install", { language: "python", packages: ["--index-url=http://evil.invalid"] });
    assert.equal(option.isError, true);
    assert.match(textOf(option), /command-line option/);
    const outside = await call(client, "code_install", { language: "python", packages: ["../../etc"] });
    assert.equal(outside.isError, true);
    assert.match(textOf(outside), /outside the workspace/);
    const missing = await call(client, "code_install", { language: "javascript", packages: ["./no/such/folder"] });
    assert.equal(missing.isError, true);
    assert.match(textOf(missing), /No such file/);
  });
});
