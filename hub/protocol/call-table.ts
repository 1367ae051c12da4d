// The tables every call passes through on its way (a child's requests awaiting their answers, a
// server's running calls, a session's calls in flight): an entry added when a call starts and
// removed when it ends, thousands of times a second. They are not Maps or Sets on purpose. V8
// links each backing table a Map or Set retires (when it grows, shrinks or drops deleted entries)
// to the table that replaced it; once a retired table sits in the old generation, every later
// table, and every call those tables held, stays alive through young-generation collections
// until the next full one. With calls coming and going, most of each call's garbage was promoted
// that way (bench/README.md: a quarter of the bytes of a 2026-07-28 call; a loop churning a Map
// ran 5x slower on Node 20 than the same loop over an object). A null-prototype object's
// dictionary makes no such links: its retired tables are garbage at once.
// Keys are best small non-negative integers (a counter's): those are the object's elements, found
// by number. A string key becomes a property name, interned on the way in, which cost three times
// as much per entry (5.8 µs of a call's 150 µs when every table was keyed by strings).

/**
 * Entries by key, with Map's names for what the hub uses. Integer keys come first, in ascending
 * order (a counter's are in insertion order), then string keys in insertion order. A string key must
 * never be an integer's decimal form: "5" and 5 are the same key (requestIdKey sees to that).
 */
export class CallTable<V, K extends number | string = number> {
  private entries: Record<K, V> = Object.create(null) as Record<K, V>;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(key: K): V | undefined {
    return this.entries[key];
  }

  has(key: K): boolean {
    return key in this.entries;
  }

  set(key: K, value: V): this {
    if (!(key in this.entries)) this.count++;
    this.entries[key] = value;
    return this;
  }

  delete(key: K): boolean {
    if (!(key in this.entries)) return false;
    delete this.entries[key];
    this.count--;
    return true;
  }

  values(): V[] {
    return Object.values(this.entries);
  }

  [Symbol.iterator](): Iterator<V> {
    return this.values()[Symbol.iterator]();
  }
}

/** A JSON-RPC id as a table key: a counter's id is its own number; 1 and "1" are different requests, so they are different keys. */
export function requestIdKey(id: string | number): string | number {
  if (typeof id === "number") return Number.isSafeInteger(id) && id >= 0 ? id : `#${id}`;
  return `'${id}`;
}
