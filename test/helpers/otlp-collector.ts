// A real OTLP/HTTP trace receiver on loopback for tests: POST /v1/traces in application/x-protobuf
// (decoded with the OTLP .proto definitions below, as opentelemetry-proto writes them) or
// application/json. It keeps the raw bodies too, so a test can search everything that was exported.
import http from "node:http";
import type { AddressInfo } from "node:net";
import protobuf from "protobufjs";

// opentelemetry-proto v1: common/v1/common.proto, resource/v1/resource.proto, trace/v1/trace.proto and
// collector/trace/v1/trace_service.proto, field numbers and types as published (comments left out)
const OTLP_PROTO = `
syntax = "proto3";
package opentelemetry.proto;

message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope {
  string name = 1;
  string version = 2;
  repeated KeyValue attributes = 3;
  uint32 dropped_attributes_count = 4;
}
message Resource {
  repeated KeyValue attributes = 1;
  uint32 dropped_attributes_count = 2;
}
message ResourceSpans {
  Resource resource = 1;
  repeated ScopeSpans scope_spans = 2;
  string schema_url = 3;
}
message ScopeSpans {
  InstrumentationScope scope = 1;
  repeated Span spans = 2;
  string schema_url = 3;
}
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  fixed32 flags = 16;
  string name = 5;
  enum SpanKind {
    SPAN_KIND_UNSPECIFIED = 0;
    SPAN_KIND_INTERNAL = 1;
    SPAN_KIND_SERVER = 2;
    SPAN_KIND_CLIENT = 3;
    SPAN_KIND_PRODUCER = 4;
    SPAN_KIND_CONSUMER = 5;
  }
  SpanKind kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10;
  message Event {
    fixed64 time_unix_nano = 1;
    string name = 2;
    repeated KeyValue attributes = 3;
    uint32 dropped_attributes_count = 4;
  }
  repeated Event events = 11;
  uint32 dropped_events_count = 12;
  message Link {
    bytes trace_id = 1;
    bytes span_id = 2;
    string trace_state = 3;
    repeated KeyValue attributes = 4;
    uint32 dropped_attributes_count = 5;
    fixed32 flags = 6;
  }
  repeated Link links = 13;
  uint32 dropped_links_count = 14;
  Status status = 15;
}
message Status {
  reserved 1;
  string message = 2;
  enum StatusCode {
    STATUS_CODE_UNSET = 0;
    STATUS_CODE_OK = 1;
    STATUS_CODE_ERROR = 2;
  }
  StatusCode code = 3;
}
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ExportTraceServiceResponse { ExportTracePartialSuccess partial_success = 1; }
message ExportTracePartialSuccess {
  int64 rejected_spans = 1;
  string error_message = 2;
}
`;

const root = protobuf.parse(OTLP_PROTO, { keepCase: true }).root;
const ExportRequest = root.lookupType("opentelemetry.proto.ExportTraceServiceRequest");
const ExportResponse = root.lookupType("opentelemetry.proto.ExportTraceServiceResponse");

const KINDS = ["UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"] as const;

/** A span as received, ids in lowercase hex, attributes as plain values. */
export interface ReceivedSpan {
  service: string;
  name: string;
  kind: (typeof KINDS)[number];
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
  statusCode: number;
  /** When it started and ended, in nanoseconds since the epoch. */
  startNs: bigint;
  endNs: bigint;
  /** How it came: the content type of its export. */
  encoding: "protobuf" | "json";
}

export interface OtlpCollector {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Every request body as received (protobuf bodies as latin1 text), to search for what must never be exported. */
  rawBodies: string[];
  requests: number;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

function valueOf(any: Json | undefined): unknown {
  if (!any) return undefined;
  for (const key of ["string_value", "stringValue", "bool_value", "boolValue", "double_value", "doubleValue"]) if (key in any) return any[key];
  for (const key of ["int_value", "intValue"]) if (key in any) return Number(any[key]);
  const array = (any.array_value ?? any.arrayValue) as { values?: Json[] } | undefined;
  if (array) return (array.values ?? []).map(valueOf);
  return undefined;
}

const attributesOf = (list: Json[] | undefined) => Object.fromEntries((list ?? []).map((kv) => [kv.key as string, valueOf(kv.value as Json)]));

/** Ids: bytes in protobuf (here base64 after toObject), lowercase hex strings in OTLP/JSON. */
const hexOf = (id: unknown, encoding: ReceivedSpan["encoding"]) =>
  typeof id !== "string" || id === "" ? "" : encoding === "json" ? id.toLowerCase() : Buffer.from(id, "base64").toString("hex");

function spansOf(request: Json, encoding: ReceivedSpan["encoding"]): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of (request.resource_spans ?? request.resourceSpans ?? []) as Json[]) {
    const service = String(attributesOf((rs.resource as Json | undefined)?.attributes as Json[])["service.name"] ?? "");
    for (const ss of (rs.scope_spans ?? rs.scopeSpans ?? []) as Json[]) {
      for (const s of (ss.spans ?? []) as Json[]) {
        out.push({
          service,
          name: String(s.name),
          kind: KINDS[Number(s.kind ?? 0)] ?? "UNSPECIFIED",
          traceId: hexOf(s.trace_id ?? s.traceId, encoding),
          spanId: hexOf(s.span_id ?? s.spanId, encoding),
          parentSpanId: hexOf(s.parent_span_id ?? s.parentSpanId, encoding),
          attributes: attributesOf(s.attributes as Json[]),
          statusCode: Number((s.status as Json | undefined)?.code ?? 0),
          startNs: BigInt(String(s.start_time_unix_nano ?? s.startTimeUnixNano ?? 0)),
          endNs: BigInt(String(s.end_time_unix_nano ?? s.endTimeUnixNano ?? 0)),
          encoding,
        });
      }
    }
  }
  return out;
}

/** `port` 0 takes a free one; 4318 is where an SDK left to its defaults exports (http://localhost:4318). */
export async function startCollector(port = 0, host = "127.0.0.1"): Promise<OtlpCollector> {
  const collector: OtlpCollector = { endpoint: "", spans: [], rawBodies: [], requests: 0, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      collector.requests++;
      const body = Buffer.concat(chunks);
      const type = req.headers["content-type"] ?? "";
      if (req.method !== "POST" || req.url !== "/v1/traces") return void res.writeHead(404).end();
      try {
        if (type.startsWith("application/x-protobuf")) {
          collector.rawBodies.push(body.toString("latin1"));
          const decoded = ExportRequest.toObject(ExportRequest.decode(body), { bytes: String, longs: String, enums: Number, defaults: false }) as Json;
          collector.spans.push(...spansOf(decoded, "protobuf"));
          res.writeHead(200, { "Content-Type": "application/x-protobuf" }).end(Buffer.from(ExportResponse.encode(ExportResponse.create({})).finish()));
        } else if (type.startsWith("application/json")) {
          collector.rawBodies.push(body.toString("utf8"));
          collector.spans.push(...spansOf(JSON.parse(body.toString("utf8")) as Json, "json"));
          res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
        } else {
          res.writeHead(415).end();
        }
      } catch (err) {
        res.writeHead(400).end(String(err));
      }
    });
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, host, resolve));
  collector.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  collector.close = () => new Promise((resolve) => (server.close(() => resolve()), server.closeAllConnections()));
  return collector;
}
