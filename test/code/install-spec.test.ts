// What code_install hands to pip and npm: only allowlisted spec shapes, local sources only inside
// the workspace (through the same guard, as real paths), never an option.
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { resolveSpec } from "../../servers/code/install.js";
import { tempDir } from "../helpers/hub.js";

let ws: string;
let outside: string;
before(() => {
  ws = tempDir("agentbox-spec-ws-");
  outside = tempDir("agentbox-spec-out-");
  fs.mkdirSync(path.join(ws, "pkgs", "mine"), { recursive: true });
  fs.writeFileSync(path.join(ws, "pkgs", "mine-1.0.tgz"), "");
  fs.mkdirSync(path.join(outside, "pkg"));
  fs.writeFileSync(path.join(outside, "pkg-1.0-py3-none-any.whl"), "");
  fs.symlinkSync(path.join(outside, "pkg"), path.join(ws, "link-out"));
});
after(() => {
  fs.rmSync(ws, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

const py = (spec: string) => resolveSpec(spec, ws, "python");
const js = (spec: string) => resolveSpec(spec, ws, "javascript");

describe("code_install specs", () => {
  test("pip: local sources outside the workspace are refused, with what is allowed", () => {
    for (const spec of [
      `file://${outside}/pkg`,
      `pkg @ file://${outside}/pkg-1.0-py3-none-any.whl`,
      `${outside}/pkg`,
      "../../x",
      "file:../..",
      `git+file://${outside}/pkg`,
      "link-out",
      "./link-out",
    ]) {
      assert.throws(() => py(spec), /outside the workspace|other than https|not a package spec/, spec);
      assert.throws(() => py(spec), /Allowed: a package name/, spec);
    }
  });

  test("npm: file:, link: and paths outside the workspace are refused", () => {
    for (const spec of [
      `pkg@file:${outside}/pkg`,
      `file:${outside}/pkg`,
      "file:../..",
      `link:${outside}/pkg`,
      `x@link:../../pkg`,
      `git+file://${outside}/pkg`,
      "git+ssh://git@host/repo.git",
      "github:user/repo",
      "npm:other@1",
      "user/repo",
    ]) {
      assert.throws(() => js(spec), /outside the workspace|other than https|not a package spec|No such file/, spec);
    }
  });

  test("options that make pip or npm read local files are refused", () => {
    for (const spec of [
      "-r",
      "-r/etc/x",
      "--requirement=/etc/x",
      "-c/etc/x",
      "--find-links=/x",
      "-e/x",
      "--index-url=file:///x",
      "--prefix=/x",
      "--target=/x",
      "  --prefix=/x",
    ]) {
      assert.throws(() => py(spec), /command-line option/, spec);
      assert.throws(() => js(spec), /command-line option/, spec);
    }
    assert.throws(() => py("requests -r /etc/x"), /not a package spec|No such file/);
    assert.throws(() => py("requests\n-r /etc/x"), /control character/);
  });

  test("names with versions, extras and markers, https URLs, and workspace paths are kept", () => {
    for (const spec of [
      "requests",
      "requests==2.32.0",
      "requests[socks]>=2.31,<3",
      "numpy; python_version>'3.9'",
      "pkg @ https://example.test/pkg.whl",
      "git+https://example.test/repo.git",
    ]) {
      assert.deepEqual(py(spec), { spec, local: false }, spec);
    }
    for (const spec of ["lodash", "lodash@^4.17", "@scope/pkg@latest", "https://example.test/pkg.tgz"]) {
      assert.deepEqual(js(spec), { spec, local: false }, spec);
    }
    const mine = path.join(ws, "pkgs", "mine");
    assert.deepEqual(py("./pkgs/mine"), { spec: mine, local: true });
    assert.deepEqual(py(`file://${mine}`), { spec: mine, local: true });
    assert.deepEqual(py(`mine @ file://${mine}`), { spec: mine, local: true });
    assert.deepEqual(js("pkgs/mine"), { spec: mine, local: true });
    assert.deepEqual(js("file:./pkgs/mine"), { spec: mine, local: true });
    assert.deepEqual(js("mine@link:pkgs/mine"), { spec: mine, local: true });
    assert.deepEqual(js("pkgs/mine-1.0.tgz"), { spec: path.join(ws, "pkgs", "mine-1.0.tgz"), local: true });
  });
});
