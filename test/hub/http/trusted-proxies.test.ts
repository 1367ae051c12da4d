// Which address a request comes from behind AGENTBOX_TRUSTED_PROXIES: each hub's own setting,
// never another's in the same process, and a forged X-Forwarded-For never names the client.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { TrustedProxies } from "../../../hub/http/trusted-proxies.js";

describe("trusted proxies", () => {
  test("two hubs in one process each keep their own setting", () => {
    const behindRouter = new TrustedProxies(["127.0.0.0/8"]);
    assert.equal(behindRouter.clientAddress("127.0.0.1", "203.0.113.7"), "203.0.113.7");
    // a second hub trusting nobody, built after the first: it must not change what the first trusts
    const direct = new TrustedProxies([]);
    assert.equal(direct.clientAddress("127.0.0.1", "203.0.113.7"), "127.0.0.1", "a hub that trusts no proxy ignores X-Forwarded-For");
    assert.equal(behindRouter.clientAddress("127.0.0.1", "203.0.113.7"), "203.0.113.7");
    const otherRange = new TrustedProxies(["10.0.0.1", "fd00::/8"]);
    assert.equal(otherRange.clientAddress("127.0.0.1", "203.0.113.7"), "127.0.0.1");
    assert.equal(otherRange.clientAddress("fd00::5", "203.0.113.8"), "203.0.113.8");
    assert.equal(behindRouter.clientAddress("::ffff:127.0.0.2", "203.0.113.7"), "203.0.113.7", "an IPv4-mapped proxy address is the proxy");
  });

  test("a client's forged hops do not hide it, and a client that is no proxy is itself", () => {
    const proxies = new TrustedProxies(["127.0.0.0/8"]);
    // the client prepends a made-up chain; the proxy appends the address it saw
    assert.equal(proxies.clientAddress("127.0.0.1", "198.51.100.9, 127.0.0.5, 203.0.113.7"), "203.0.113.7");
    assert.equal(proxies.clientAddress("127.0.0.1", "not-an-address, 203.0.113.7"), "203.0.113.7");
    // a client that is not a trusted proxy cannot name someone else
    assert.equal(proxies.clientAddress("198.51.100.1", "203.0.113.7"), "198.51.100.1");
    // a proxy that passes no header, or only proxies, leaves the proxy as the client
    assert.equal(proxies.clientAddress("127.0.0.1", undefined), "127.0.0.1");
    assert.equal(proxies.clientAddress("127.0.0.1", "127.0.0.9"), "127.0.0.1");
    assert.equal(proxies.clientAddress("unknown", "203.0.113.7"), "unknown");
  });
});
