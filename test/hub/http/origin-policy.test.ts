// OriginPolicy (hub/http/security.ts) on its own: the Host and Origin checks that keep a web page off
// a keyless hub, attacked with the names a DNS-rebinding or cross-site page would use.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { OriginPolicy } from "../../../hub/http/security.js";

const policy = (allowedHosts: string[] = [], corsOrigins: string[] = []) => new OriginPolicy({ allowedHosts, corsOrigins }, false);

describe("Host", () => {
  test("loopback names and IP literals, with or without a port, are allowed", () => {
    const p = policy();
    for (const host of [
      "localhost",
      "localhost:8080",
      "LOCALHOST:8080",
      "127.0.0.1",
      "127.0.0.1:3000",
      "127.5.6.7:1",
      "[::1]",
      "[::1]:3000",
      "[2001:db8::1]:8080",
      "0.0.0.0:3000",
      "localhost:80",
      "10.0.0.5:80",
    ]) {
      assert.ok(p.allowsHost(host), host);
    }
  });

  test("names a rebinding page would send are refused", () => {
    const p = policy();
    for (const host of [
      undefined,
      "",
      "evil.example",
      "127.0.0.1.evil.example",
      "127.0.0.1.nip.io:3000",
      "localhost.evil.example",
      "localhost@evil.example",
      "evil.example@localhost",
      "user:pass@127.0.0.1",
      "localhost/evil",
      "localhost:80/x",
      "localhost:notaport",
      "127.evil",
      "[::1].evil.example",
    ]) {
      assert.equal(p.allowsHost(host), false, String(host));
    }
  });

  test("configured names are allowed exactly, with any port or the one given", () => {
    const p = policy(["Agentbox.internal", "box.example:8443"]);
    assert.ok(p.allowsHost("agentbox.internal"));
    assert.ok(p.allowsHost("agentbox.internal:3000"));
    assert.ok(p.allowsHost("box.example:8443"));
    for (const host of [
      "agentbox.internal.evil.example",
      "evil-agentbox.internal",
      "sub.agentbox.internal",
      "box.example",
      "box.example:8444",
      "user@agentbox.internal",
    ]) {
      assert.equal(p.allowsHost(host), false, host);
    }
  });
});

describe("Origin", () => {
  test("loopback pages are allowed; any other site, and non-web schemes, are not", () => {
    const p = policy();
    for (const origin of ["http://localhost:5173", "https://127.0.0.1", "http://[::1]:8080", "http://127.9.9.9"])
      assert.ok(p.allowsOrigin(origin, "localhost:3000"), origin);
    for (const origin of [
      "http://evil.example",
      "http://127.0.0.1.evil.example",
      "http://localhost.evil.example",
      "http://localhost@evil.example",
      "file://localhost",
      "null",
      "not a url",
      "chrome-extension://abc",
    ]) {
      assert.equal(p.allowsOrigin(origin, "localhost:3000"), false, origin);
    }
  });

  test("the hub's own page is allowed only when the Host it names passes", () => {
    assert.ok(policy(["box.example"]).allowsOrigin("https://box.example", "box.example"));
    assert.ok(policy().allowsOrigin("http://10.0.0.5:3000", "10.0.0.5:3000"));
    // a rebinding page is same-origin with its own Host, which is not allowed
    assert.equal(policy().allowsOrigin("http://evil.example", "evil.example"), false);
    assert.equal(policy(["box.example"]).allowsOrigin("https://box.example", "other.example"), false);
    assert.equal(policy(["box.example"]).allowsOrigin("https://box.example:444", "box.example"), false);
  });

  test("configured origins match exactly (a trailing slash aside); * allows any", () => {
    const p = policy([], ["https://app.example/"]);
    assert.ok(p.allowsOrigin("https://app.example", undefined));
    for (const origin of ["https://app.example.evil.example", "http://app.example", "https://app.example:8443"])
      assert.equal(p.allowsOrigin(origin, undefined), false, origin);
    assert.ok(policy([], ["*"]).allowsOrigin("https://anything.example", undefined));
  });
});
