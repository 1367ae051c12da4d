// The credentials this hub minted (preview tokens, client session ids, context handles, sealed
// requestStates, sessions' callback tokens), so that what the hub writes down (the audit trail,
// its log, a child's log it relays) shows a mark where one stands, whatever the field carrying it is
// called and however much text surrounds it (a preview URL, a sentence). Each is known while it is
// good and for GRACE_MS after it ends: the record of the call that ended it is written after.
//
// Cheap to search: each credential is known by its first KEY_CHARS characters (lower-cased: a
// preview token is taken in any case), and a text is searched by one map lookup per position of
// its runs of credential characters, however many credentials are held. What surrounds a found one
// in the same token-like string (a replica name, a handle's expiry, a requestState's body) goes with it.

/** What stands where a credential was. */
export const REDACTED = "[redacted]";
/** A credential is known by this many of its first characters (all of [A-Za-z0-9_-]): 80 bits and more of randomness for each the hub mints. */
export const KEY_CHARS = 16;
/** How long an ended credential is still redacted. */
const GRACE_MS = 5 * 60_000;

/** [A-Za-z0-9_-]: what the random part of every minted credential is made of (base64url, base32, a uuid). */
function isCredentialChar(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 45 || code === 95;
}

/** Also "." and ":": what joins a credential's parts (`<replica>.<uuid>`, `<id>.<expiry>.<mac>`, `<replica>:<process>:v1.<body>.<mac>`). */
function isJoinedChar(code: number): boolean {
  return isCredentialChar(code) || code === 46 || code === 58;
}

/** A character as keys hold it: letters lower-cased, as toLowerCase() does to [A-Za-z0-9_-]. */
const folded = (code: number) => (code >= 65 && code <= 90 ? code + 32 : code);
const BASE = 131;
/** Hashes are kept to 30 bits: small integers to V8, never a boxed number per character. */
const MASK = 0x3fffffff;
/** BASE ** (KEY_CHARS - 1), within MASK: what the character leaving a window weighs. */
const LEAVING = Array.from({ length: KEY_CHARS - 1 }).reduce<number>((power) => Math.imul(power, BASE) & MASK, 1);

/** A key's hash, the same the rolling window of redact() arrives at: a text is sliced only where one matches. */
function hashOf(key: string): number {
  let hash = 0;
  for (let i = 0; i < key.length; i++) hash = (Math.imul(hash, BASE) + folded(key.charCodeAt(i))) & MASK;
  return hash;
}

/** The first KEY_CHARS credential characters in a row in `text`, if it has so many. */
function firstRun(text: string): string | undefined {
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    run = isCredentialChar(text.charCodeAt(i)) ? run + 1 : 0;
    if (run === KEY_CHARS) return text.slice(i - KEY_CHARS + 1, i + 1);
  }
  return undefined;
}

interface Known {
  shownAs: string;
  /** How many credentials share this key (a collision is improbable, but then forgetting one must not forget the other). */
  count: number;
}

export class MintedSecrets {
  private readonly known = new Map<string, Known>();
  /** The known keys' hashes, each with how many keys have it. */
  private readonly hashes = new Map<number, number>();
  private readonly owned = new Map<unknown, string[]>();
  /** Keys of ended credentials, oldest first, each with when it is dropped. */
  private readonly ending: { keys: string[]; at: number }[] = [];

  /**
   * Knows `secret` as `owner`'s until forget(owner), by its first run of KEY_CHARS characters of
   * [A-Za-z0-9_-] (every credential the hub mints is one), and shows `shownAs` where it is found. A
   * secret without such a run is not kept.
   */
  remember(owner: unknown, secret: string, shownAs = REDACTED): void {
    this.sweep();
    const key = firstRun(secret)?.toLowerCase();
    if (key === undefined) return;
    const known = this.known.get(key);
    if (known) known.count++;
    else {
      this.known.set(key, { shownAs, count: 1 });
      this.hashes.set(hashOf(key), (this.hashes.get(hashOf(key)) ?? 0) + 1);
    }
    const keys = this.owned.get(owner);
    if (keys) keys.push(key);
    else this.owned.set(owner, [key]);
  }

  /** `owner`'s credentials ended: they are still redacted for GRACE_MS. */
  forget(owner: unknown): void {
    this.sweep();
    const keys = this.owned.get(owner);
    if (!keys) return;
    this.owned.delete(owner);
    this.ending.push({ keys, at: Date.now() + GRACE_MS });
  }

  /** How many credentials are known (ended ones in their grace included). */
  get size(): number {
    return this.known.size;
  }

  /** `text` with every known credential, and what is joined to it, replaced by its mark. */
  redact(text: string): string {
    if (this.known.size === 0 || text.length < KEY_CHARS) return text;
    let out = "";
    let copied = 0;
    let run = 0;
    // the hash of the last KEY_CHARS characters, rolled along: what a hostile server writes to its
    // stderr passes here, and a slice per character would cost the hub in proportion to it
    let hash = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (!isCredentialChar(code)) {
        run = 0;
        hash = 0;
        continue;
      }
      if (run >= KEY_CHARS) hash = (hash - Math.imul(folded(text.charCodeAt(i - KEY_CHARS)), LEAVING)) & MASK;
      hash = (Math.imul(hash, BASE) + folded(code)) & MASK;
      if (++run < KEY_CHARS || !this.hashes.has(hash)) continue;
      const start = i - KEY_CHARS + 1;
      const known = this.known.get(text.slice(start, i + 1).toLowerCase());
      if (!known) continue;
      let from = start;
      while (from > copied && isJoinedChar(text.charCodeAt(from - 1))) from--;
      let to = i + 1;
      while (to < text.length && isJoinedChar(text.charCodeAt(to))) to++;
      out += text.slice(copied, from) + known.shownAs;
      copied = to;
      i = to - 1;
      run = 0;
      hash = 0;
    }
    return copied === 0 ? text : out + text.slice(copied);
  }

  private sweep(): void {
    const now = Date.now();
    while (this.ending.length && this.ending[0].at <= now) {
      for (const key of this.ending.shift()!.keys) {
        const known = this.known.get(key);
        if (known && --known.count === 0) {
          this.known.delete(key);
          const left = (this.hashes.get(hashOf(key)) ?? 1) - 1;
          if (left > 0) this.hashes.set(hashOf(key), left);
          else this.hashes.delete(hashOf(key));
        }
      }
    }
  }
}
