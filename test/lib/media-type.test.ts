// mediaTypeOf and acceptsMediaType (servers/lib/media-type.ts): the one reading of Content-Type and
// Accept that the hub's endpoints, its tracing and the markitdown server share.
import assert from "node:assert/strict";
import { test } from "node:test";
import { acceptsMediaType, mediaTypeOf } from "../../servers/lib/media-type.js";

test("a Content-Type names its type whatever its parameters, case and whitespace", () => {
  for (const header of [
    "application/json",
    "application/json; charset=utf-8",
    "application/json;charset=UTF-8",
    "Application/JSON",
    "  application/json  ",
    "application/json ; charset=utf-8",
    "application/json;\tcharset=utf-8; profile=x",
    // a sloppy parameter section leaves the type itself unambiguous, as browsers read it
    "application/json;",
    "application/json; charset",
  ]) {
    assert.equal(mediaTypeOf(header), "application/json", header);
  }
  assert.equal(mediaTypeOf("TEXT/Event-Stream"), "text/event-stream");
});

test("a Content-Type that is not one media type names none", () => {
  for (const header of [undefined, null, "", " ", ";charset=utf-8", "json", "application/", "/json", "application/ json", "application/json x"]) {
    assert.equal(mediaTypeOf(header), undefined, String(header));
  }
  // a list is no Content-Type: none of its members is picked, in either order
  assert.equal(mediaTypeOf("application/json, text/html"), undefined);
  assert.equal(mediaTypeOf("text/html, application/json"), undefined);
  // nor is a type whose name merely starts with another's
  assert.equal(mediaTypeOf("application/jsonx"), "application/jsonx");
});

test("an Accept header lists a type by name, whatever its parameters, case and whitespace", () => {
  const sse = "text/event-stream";
  for (const accept of [
    "text/event-stream",
    "application/json, text/event-stream",
    "application/json,text/event-stream",
    "Text/Event-Stream",
    " text/event-stream ;q=0.5",
    "text/html;level=1, text/event-stream; charset=utf-8, */*;q=0.1",
  ]) {
    assert.equal(acceptsMediaType(accept, sse), true, accept);
  }
  for (const accept of [undefined, null, "", "application/json", "*/*", "text/*", "text/event-streams", "text/event-stream-x", "xtext/event-stream"]) {
    assert.equal(acceptsMediaType(accept, sse), false, String(accept));
  }
  assert.equal(acceptsMediaType("application/json, */*", "*/*"), true);
  assert.equal(acceptsMediaType("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html"), true);
});

test("an Accept entry with q=0 refuses its type rather than listing it", () => {
  for (const accept of [
    "text/event-stream;q=0",
    "text/event-stream; q=0.0",
    "text/event-stream ; Q=0.000",
    "application/json, text/event-stream;charset=utf-8;q=0",
  ]) {
    assert.equal(acceptsMediaType(accept, "text/event-stream"), false, accept);
  }
  for (const accept of ["text/event-stream;q=0.001", "text/event-stream;q=1", "text/event-stream;q=0.5"]) {
    assert.equal(acceptsMediaType(accept, "text/event-stream"), true, accept);
  }
  assert.equal(acceptsMediaType("text/event-stream;q=0, application/json", "application/json"), true);
});
