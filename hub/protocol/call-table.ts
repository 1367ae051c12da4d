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

/** Entries by string key, in insertion order, with Map's names for what the hub uses. */
export class CallTable<V> {
  private entries: Record<string, V> = Object.create(null) as Record<string, V>;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(key: string): V | undefined {
    return this.entries[key];
  }

  has(key: string): boolean {
    return key in this.entries;
  }

  set(key: string, value: V): this {
    if (!(key in this.entries)) this.count++;
    this.entries[key] = value;
    return this;
  }

  delete(key: string): boolean {
    if (!(key in this.entries)) return false;
    delete this.entries[key];
    this.count--;
    return true;
  }

  keys(): string[] {
    return Object.keys(this.entries);
  }

  values(): V[] {
    return Object.values(this.entries);
  }

  [Symbol.iterator](): Iterator<V> {
    return this.values()[Symbol.iterator]();
  }
}

/** A JSON-RPC id as a table key: 1 and "1" are different requests, so they are different keys. */
export function requestIdKey(id: string | number): string {
  return typeof id === "number" ? `#${id}` : `'${id}`;
}
