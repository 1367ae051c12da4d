// A preview's (or a live view's, hub/live/) token: 26 characters of base32 (130 random bits) that are the only credential a
// browser shows, prefixed with the replica's name when the hub is one of several, so a router reads
// where the preview lives from the URL alone (deploy/nginx/agentbox.conf.template).
import { randomBytes } from "node:crypto";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
export const SECRET_CHARS = 26;
// the replica's name is a DNS label (hub/config/env.ts parseReplica)
const REPLICA = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
/** A token as a regular expression's source: the replica's name and a dash, if any, then the secret. */
export const TOKEN = `(?:${REPLICA}-)?[a-z2-7]{${SECRET_CHARS}}`;
const HOST_LABEL = new RegExp(`^([0-9]{1,5})-(${TOKEN})$`);

/** One base32 character per byte, of its low five bits (uniform for uniform bytes: 256 is a multiple of 32). */
export const base32 = (bytes: Uint8Array) => [...bytes].map((b) => ALPHABET[b & 31]).join("");

/** A new token: `<replica>-<secret>`, or the secret alone on a hub without a replica name. */
export function newToken(replica?: string): string {
  const secret = base32(randomBytes(SECRET_CHARS));
  return replica ? `${replica}-${secret}` : secret;
}

/** The random part of a token, without the replica's name before it. */
export const secretOf = (token: string) => token.slice(-SECRET_CHARS);

function pathPattern(room: string): RegExp {
  return new RegExp(`^/${room}/(${TOKEN})(/.*)?$`);
}

type PathToken = { token: string; rest: string | undefined } | undefined;

/** Reads `/<room>/<token>/…` paths: the token and the rest (undefined for `/<room>/<token>`). */
export function pathTokens(room: string): (pathname: string) => PathToken {
  const pattern = pathPattern(room);
  return (pathname) => {
    const match = pattern.exec(pathname);
    return match ? { token: match[1], rest: match[2] } : undefined;
  };
}

/** The token and the rest of a path of the form `/preview/<token>/…` (rest undefined for `/preview/<token>`). */
export const tokenOfPath = pathTokens("preview");

/** The port and token of a host `<port>-<token>.<domain>` (any port suffix of the Host ignored). */
export function tokenOfHost(host: string | undefined, domain: string | undefined): { port: number; token: string } | undefined {
  if (!host || !domain) return undefined;
  const name = host.toLowerCase().replace(/:\d+$/, "");
  if (!name.endsWith(`.${domain}`)) return undefined;
  const match = HOST_LABEL.exec(name.slice(0, -domain.length - 1));
  return match ? { port: Number(match[1]), token: match[2] } : undefined;
}

/** Whether a host is a preview host of the domain (a name under it), token valid or not. */
export function isUnderDomain(host: string | undefined, domain: string | undefined): boolean {
  return Boolean(host && domain && host.toLowerCase().replace(/:\d+$/, "").endsWith(`.${domain}`));
}
