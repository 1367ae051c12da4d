// The hub's record of its own credentials on its own (hub/observability/minted-secrets.ts): what is
// redacted around a credential found in text, a credential cut by the audit trail's bound, and how
// long an ended one is still redacted. The end-to-end proof is ./audit-credentials.test.ts.
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { describe, mock, test } from "node:test";
import { auditedArguments } from "../../../hub/observability/audit-arguments.js";
import { MintedSecrets } from "../../../hub/observability/minted-secrets.js";
import { newToken, secretOf } from "../../../hub/previews/token.js";

describe("the hub's minted credentials", () => {
  test("found in any text and case, with what joins it to a token-like string, and nothing else", () => {
    const secrets = new MintedSecrets();
    const token = newToken("east-2");
    secrets.remember("preview", secretOf(token));
    const id = `east-2.${randomUUID()}`;
    secrets.remember("session", id.slice(id.lastIndexOf(".") + 1), "[session x]");
    const handle = `${id}.m3k2z1.${randomBytes(32).toString("base64url")}`;
    assert.equal(secrets.redact(`open http://h:8080/preview/${token}/app?x=1 now`), "open http://h:8080/preview/[redacted]/app?x=1 now");
    assert.equal(secrets.redact(`http://5173-${token}.previews.example:8443/`), "http://[redacted]/");
    assert.equal(secrets.redact(`"${token.toUpperCase()}"`), '"[redacted]"');
    assert.equal(secrets.redact(`handle=${handle};`), "handle=[session x];");
    assert.equal(secrets.redact(`${id}${id}`), "[session x]", "one run, one mark");
    const plain = `nothing here but ${randomBytes(64).toString("base64url")} and words`;
    assert.equal(secrets.redact(plain), plain);
  });

  test("an API key is known by its first run of credential characters", () => {
    const secrets = new MintedSecrets();
    const key = `sk.${randomBytes(24).toString("hex")}`;
    secrets.remember("config", key);
    assert.equal(secrets.redact(`Authorization: Bearer ${key}`), "Authorization: Bearer [redacted]");
    secrets.remember("config", "short-key");
    assert.equal(secrets.redact("a short-key is no credential the hub can tell"), "a short-key is no credential the hub can tell");
  });

  test("a credential the audit bound cuts leaves none of its characters, and the copy stays bounded", () => {
    const secrets = new MintedSecrets();
    const token = newToken();
    secrets.remember("preview", token);
    const redact = (text: string) => secrets.redact(text);
    for (let before = 4080; before <= 4100; before++) {
      const copied = JSON.stringify(auditedArguments({ text: `${"x".repeat(before)}${token}${"y".repeat(100_000)}` }, redact));
      // (a shorter prefix could be the JSON's own letters by chance)
      for (let n = 6; n <= token.length; n++) assert.ok(!copied.includes(token.slice(0, n)), `${n} characters of the token at ${before}`);
      assert.ok(copied.length < 4200, `a copy of ${copied.length} characters`);
    }
    const named = auditedArguments({ [token]: 1, nested: { [`see ${token}`]: token } }, redact);
    assert.equal(JSON.stringify(named), JSON.stringify({ "[redacted]": 1, nested: { "see [redacted]": "[redacted]" } }));
  });

  test("an ended credential is still redacted for a while (the call that ended it is recorded after), then forgotten", () => {
    mock.timers.enable({ apis: ["Date"], now: 1_000_000 });
    try {
      const secrets = new MintedSecrets();
      const [one, two] = [newToken(), newToken()];
      secrets.remember(one, one);
      secrets.remember(two, two);
      secrets.forget(one);
      mock.timers.tick(4 * 60_000);
      assert.equal(secrets.redact(one), "[redacted]");
      mock.timers.tick(2 * 60_000);
      secrets.remember("later", newToken()); // what drops the ended ones
      assert.equal(secrets.redact(one), one);
      assert.equal(secrets.redact(two), "[redacted]", "a live one stays");
      assert.equal(secrets.size, 2);
    } finally {
      mock.timers.reset();
    }
  });
});
