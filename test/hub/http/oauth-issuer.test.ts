// The issuer's keys as the hub keeps them (hub/http/oauth/issuer.ts), with the hub's clock driven by
// the test: an unknown key id makes the hub fetch the key set again at most once per period, and an
// issuer that cannot be asked fails closed, asked again only once the period has passed. The issuer
// is a remote service, so it is a fetch answered here.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { errors, exportJWK, generateKeyPair, type JWTHeaderParameters } from "jose";
import { Issuer, IssuerUnavailable } from "../../../hub/http/oauth/issuer.js";
import type { Clock } from "../../../hub/protocol/clock.js";

const ISSUER = "https://id.example.com/realms/agents";

function fakeClock(): Clock & { advance(ms: number): void } {
  let now = 1_000_000;
  return {
    now: () => now,
    after: () => ({ cancel() {} }),
    every: () => ({ cancel() {} }),
    advance(ms) {
      now += ms;
    },
  };
}

async function issuerServer(metadataIssuer = ISSUER) {
  const { publicKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256" };
  const fetched: string[] = [];
  let down = false;
  const fetchFn = (async (input: string | URL) => {
    const url = String(input);
    fetched.push(new URL(url).pathname);
    if (down) throw new TypeError("fetch failed: connect ECONNREFUSED");
    if (url.endsWith("/.well-known/oauth-authorization-server/realms/agents")) return Response.json({ issuer: metadataIssuer, jwks_uri: `${ISSUER}/keys` });
    if (url === `${ISSUER}/keys`) return Response.json({ keys: [jwk] });
    return new Response("not found", { status: 404 });
  }) as typeof fetch;
  return { fetchFn, fetched, setDown: (value: boolean) => (down = value), keysFetched: () => fetched.filter((p) => p.endsWith("/keys")).length };
}

const header = (kid: string): JWTHeaderParameters => ({ alg: "ES256", kid });
const token = { payload: "", signature: "", protected: "" };

describe("the issuer's keys", () => {
  test("an unknown key id refetches the key set at most once per period", async () => {
    const clock = fakeClock();
    const server = await issuerServer();
    const issuer = new Issuer(ISSUER, clock, { refreshMs: 30_000, fetch: server.fetchFn });
    assert.ok(await issuer.keyFor(header("k1"), token));
    assert.equal(server.keysFetched(), 1);
    for (let i = 0; i < 50; i++) await assert.rejects(issuer.keyFor(header(`unknown-${i}`), token), errors.JWKSNoMatchingKey);
    assert.equal(server.keysFetched(), 1, "within the period no unknown key id fetches anything");
    clock.advance(30_000);
    await assert.rejects(issuer.keyFor(header("unknown-again"), token), errors.JWKSNoMatchingKey);
    assert.equal(server.keysFetched(), 2, "once the period has passed, one fetch");
    assert.ok(await issuer.keyFor(header("k1"), token), "known keys still serve");
    assert.equal(server.keysFetched(), 2);
  });

  test("an issuer that cannot be asked fails closed, and is asked again only after the period", async () => {
    const clock = fakeClock();
    const server = await issuerServer();
    server.setDown(true);
    const issuer = new Issuer(ISSUER, clock, { refreshMs: 30_000, fetch: server.fetchFn });
    await assert.rejects(issuer.keyFor(header("k1"), token), (err: Error) => err instanceof IssuerUnavailable && /could not be asked/.test(err.message));
    const asked = server.fetched.length;
    await assert.rejects(issuer.keyFor(header("k1"), token), IssuerUnavailable);
    assert.equal(server.fetched.length, asked, "not asked again within the period");
    server.setDown(false);
    clock.advance(30_000);
    assert.ok(await issuer.keyFor(header("k1"), token));
  });

  test("metadata naming another issuer is not taken", async () => {
    const server = await issuerServer("https://evil.example.com");
    const issuer = new Issuer(ISSUER, fakeClock(), { fetch: server.fetchFn });
    await assert.rejects(issuer.keyFor(header("k1"), token), (err: Error) => err instanceof IssuerUnavailable && /names the issuer/.test(err.message));
    assert.equal(server.keysFetched(), 0);
  });
});
