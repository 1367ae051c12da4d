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
  return essenceOf(contentType);
}

// weight = OWS ";" OWS "q=" qvalue, and a qvalue of 0 (0, 0.0 ... 0.000) means "not acceptable"
const REFUSED = /^q\s*=\s*0(?:\.0{0,3})?$/i;

/**
 * Whether an Accept header lists the media type `type` (lower-case, e.g. "text/event-stream") by
 * name, whatever the case, spacing and parameters, and not with q=0. A wildcard range (all
 * types, or text/*) is listed when `type` is that range: it stands for no other type.
 */
export function acceptsMediaType(accept: string | null | undefined, type: string): boolean {
  return (accept ?? "").split(",").some((entry) => {
    const [range, ...params] = entry.split(";");
    return essenceOf(range) === type && !params.some((param) => REFUSED.test(param.trim()));
  });
}
