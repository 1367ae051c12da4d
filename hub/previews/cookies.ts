// A preview's cookies are its own. One browser keeps the cookies of every preview it opened: in
// the path form all previews share the hub's origin, so a page script of one writes `sid=…; path=/`
// and every other preview is sent it; in the subdomain form a script writes one for the parent
// domain (`domain=preview.example.com`) with the same effect. The Cookie header says nothing of who wrote a
// cookie, so the hub names them: the app's `Set-Cookie: sid=…` reaches the browser as
// `pv_<jar>_sid`, the jar drawn from the preview's token (so no one without the token can name it),
// and only the cookies of the preview's own jar reach its app, under their own names again.
// Everything else the browser sends (what scripts wrote, other previews' cookies) is dropped: a
// script of the app's own page must write a cookie under the hub's name for the app to get it.
import { createHash } from "node:crypto";
import { base32 } from "./token.js";

// 80 bits of the token's digest: a jar no one guesses, in a name that stays short
const JAR_CHARS = 16;
// the browser holds these to rules of their own (RFC 6265bis 4.1.3): they stay in front
const BROWSER_PREFIX = /^(__Secure-|__Host-)/i;

/** The name prefix of one preview's cookies in the browser. */
export function cookieJar(token: string): string {
  const digest = createHash("sha256").update(`agentbox preview cookies\0${token}`).digest();
  return `pv_${base32(digest.subarray(0, JAR_CHARS))}_`;
}

const split = (name: string) => {
  const browserPrefix = BROWSER_PREFIX.exec(name)?.[0] ?? "";
  return { browserPrefix, rest: name.slice(browserPrefix.length) };
};

/** The app's Set-Cookie lines as the browser gets them: in the preview's jar, never for a `Domain`, and in the path form only under its prefix. */
export function cookiesFromApp(lines: string[], jar: string, pathPrefix?: string): string[] {
  const out: string[] = [];
  for (const line of lines) {
    const [pair, ...attributes] = line.split(";");
    const eq = pair.indexOf("=");
    const name = pair.slice(0, eq).trim();
    // a cookie without a name would reach every preview's app as it is: the hub sets none
    if (eq < 0 || !name) continue;
    const { browserPrefix, rest } = split(name);
    const kept = attributes.map((a) => a.trim()).filter((a) => a && !/^domain\s*(=|$)/i.test(a) && !(pathPrefix && /^path\s*(=|$)/i.test(a)));
    if (pathPrefix) kept.push(`Path=${pathPrefix}/`);
    out.push([`${browserPrefix}${jar}${rest}=${pair.slice(eq + 1).trim()}`, ...kept].join("; "));
  }
  return out;
}

/** The Cookie header the app gets: only the cookies of its jar, under their own names; undefined when none. */
export function cookiesToApp(header: string | string[] | undefined, jar: string): string | undefined {
  const pairs = (Array.isArray(header) ? header.join("; ") : (header ?? "")).split(";");
  const own: string[] = [];
  for (const pair of pairs.map((p) => p.trim())) {
    const eq = pair.indexOf("=");
    const { browserPrefix, rest } = split(eq < 0 ? "" : pair.slice(0, eq));
    if (rest.startsWith(jar) && rest.length > jar.length) own.push(`${browserPrefix}${rest.slice(jar.length)}${pair.slice(eq)}`);
  }
  return own.length ? own.join("; ") : undefined;
}
