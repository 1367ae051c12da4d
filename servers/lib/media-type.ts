// Media types in HTTP headers, read one way by the hub and the servers alike. A Content-Type names
// one, an Accept header a list; each is a type/subtype compared case-insensitively (RFC 9110,
// 8.3.1), with whitespace around it and parameters after a ";" (charset, boundary) that change
// nothing here, but for an Accept entry's q=0, which refuses the type it names.

const TOKEN = "[!#$%&'*+.^_`|~0-9a-z-]+";
const ESSENCE = new RegExp(`^${TOKEN}/${TOKEN}$`);

/** The lower-cased type/subtype of one media type and its parameters; undefined when it is not one. */
function essenceOf(value: string): string | undefined {
  const essence = value.split(";", 1)[0].trim().toLowerCase();
  return ESSENCE.test(essence) ? essence : undefined;
}

/**
 * The media type a Content-Type header names, lower-cased and without its parameters
 * ("application/json" for "Application/JSON ; charset=utf-8"); undefined for none. A comma makes a
 * list, which a Content-Type cannot be: it names none, so a check never picks one of its members.
 */
export function mediaTypeOf(contentType: string | null | undefined): string | undefined {
  if (!contentType || contentType.includes(",")) return undefined;
  return remembered(contentTypes, contentType, essenceOf);
}

// A client sends the same Content-Type and Accept on every request, and the hub reads them on every
// call: each distinct value is parsed once. The values are the client's, so only short ones are kept,
// and a full cache starts over.
const MAX_REMEMBERED = 64;
const MAX_REMEMBERED_CHARS = 256;
const contentTypes = new Map<string, string | undefined>();
const acceptances = new Map<string, Map<string, boolean>>();

function remembered<V>(cache: Map<string, V>, value: string, parse: (value: string) => V): V {
  const known = cache.get(value);
  if (known !== undefined || cache.has(value)) return known as V;
  const parsed = parse(value);
  if (value.length > MAX_REMEMBERED_CHARS) return parsed;
  if (cache.size >= MAX_REMEMBERED) cache.clear();
  cache.set(value, parsed);
  return parsed;
}

// weight = OWS ";" OWS "q=" qvalue, and a qvalue of 0 (0, 0.0 ... 0.000) means "not acceptable"
const REFUSED = /^q\s*=\s*0(?:\.0{0,3})?$/i;

/**
 * Whether an Accept header lists the media type `type` (lower-case, e.g. "text/event-stream") by
 * name, whatever the case, spacing and parameters, and not with q=0. A wildcard range (all
 * types, or text/*) is listed when `type` is that range: it stands for no other type.
 */
export function acceptsMediaType(accept: string | null | undefined, type: string): boolean {
  let byAccept = acceptances.get(type);
  if (!byAccept) acceptances.set(type, (byAccept = new Map()));
  return remembered(byAccept, accept ?? "", (value) => lists(value, type));
}

function lists(accept: string, type: string): boolean {
  return accept.split(",").some((entry) => {
    const [range, ...params] = entry.split(";");
    return essenceOf(range) === type && !params.some((param) => REFUSED.test(param.trim()));
  });
}
