"""A tiny OTLP/HTTP receiver (traces and metrics, protobuf encoding) for golem's tracing tests.

The Rust integration tests start it, point golem (and the Python MCP server
peers/python/otel_mcp_server.py, which exports its own spans) at it with
OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:PORT, run the CLI, and then ask it over plain
HTTP/JSON what arrived: that golem's client span and the server's span share one trace, that
the server span's parent is golem's span, which attributes each carries, and which metric data
points golem recorded.

Usage (with peers/.venv/bin/python):
  otlp_receiver.py              # binds 127.0.0.1 on a free port
  otlp_receiver.py --port 4318  # binds 127.0.0.1:4318
It prints exactly one line, ``listening PORT``, to stdout (flushed) once it accepts
connections, then serves until SIGTERM or SIGINT (exit status 0).

OTLP side (what exporters send; the body may be gzip-compressed, Content-Encoding: gzip):
  POST /v1/traces   ExportTraceServiceRequest   -> 200, empty ExportTraceServiceResponse
  POST /v1/metrics  ExportMetricsServiceRequest -> 200, empty ExportMetricsServiceResponse
  POST /v1/logs     anything                    -> 200, empty body (nothing stored)
A body that does not decode is answered 400 (and reported on stderr).

Test side (JSON answers):
  GET /spans?min=N&timeout=S    waits until at least N spans arrived or S seconds passed
                                (defaults N=0, S=5; S is capped at 30), then answers the list
                                of every span so far, in arrival order. Each span is
                                {"trace_id", "span_id", "parent_span_id" (lowercase hex, ""
                                without parent), "name", "kind" ("internal", "server", "client",
                                "producer", "consumer", "unspecified"), "attributes" {name:
                                value}, "status" {"code": "unset"|"ok"|"error", "message"},
                                "service" (resource service.name), "resource" {name: value},
                                "scope" (instrumentation scope name), "start_ns", "end_ns",
                                "events" [{"name", "time_ns", "attributes"}]}.
  GET /metrics?min=N&timeout=S  likewise for metric data points: {"name", "unit",
                                "description", "type" ("histogram", "sum", "gauge",
                                "exponential_histogram", "summary"), "attributes", "service",
                                "scope", and "count", "sum" (null when absent), "bounds",
                                "bucket_counts" for histograms; "value" for sums and gauges;
                                "count", "sum" for exponential histograms and summaries}.
  GET /headers                  the headers of every POST received, in order, each a dict
                                with lowercased names (repeated headers joined with ", ").
Anything else is 404. Attribute values are plain JSON values: strings, integers, floats,
booleans, lists (array values), objects (kvlist values); bytes values become lowercase hex.
"""

import argparse
import gzip
import json
import signal
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

DEFAULT_TIMEOUT = 5.0
MAX_TIMEOUT = 30.0

SPAN_KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
STATUS_CODES = {0: "unset", 1: "ok", 2: "error"}


class Store:
    """What arrived so far; one Condition guards it and wakes the long-polling GETs."""

    def __init__(self):
        self.cond = threading.Condition()
        self.spans = []
        self.metrics = []
        self.headers = []

    def add(self, kind, items):
        with self.cond:
            getattr(self, kind).extend(items)
            self.cond.notify_all()

    def wait_for(self, kind, minimum, timeout):
        with self.cond:
            self.cond.wait_for(lambda: len(getattr(self, kind)) >= minimum, timeout)
            return list(getattr(self, kind))


STORE = Store()


# ---- protobuf -> plain Python ---------------------------------------------------------------


def any_value(value):
    """An opentelemetry.proto.common.v1.AnyValue as a plain Python value (None when unset)."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return attributes(value.kvlist_value.values)
    if which == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, which)


def attributes(key_values):
    return {kv.key: any_value(kv.value) for kv in key_values}


def decode_traces(body):
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        service = resource.get("service.name", "")
        for scope_spans in resource_spans.scope_spans:
            scope = scope_spans.scope.name
            for span in scope_spans.spans:
                spans.append(
                    {
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "name": span.name,
                        "kind": SPAN_KINDS.get(span.kind, "unspecified"),
                        "attributes": attributes(span.attributes),
                        "status": {
                            "code": STATUS_CODES.get(span.status.code, "unset"),
                            "message": span.status.message,
                        },
                        "service": service,
                        "resource": resource,
                        "scope": scope,
                        "start_ns": span.start_time_unix_nano,
                        "end_ns": span.end_time_unix_nano,
                        "events": [
                            {"name": e.name, "time_ns": e.time_unix_nano, "attributes": attributes(e.attributes)}
                            for e in span.events
                        ],
                    }
                )
    return spans


def number_value(point):
    which = point.WhichOneof("value")
    return getattr(point, which) if which else None


def optional(message, field):
    return getattr(message, field) if message.HasField(field) else None


def decode_metrics(body):
    request = ExportMetricsServiceRequest()
    request.ParseFromString(body)
    points = []
    for resource_metrics in request.resource_metrics:
        service = attributes(resource_metrics.resource.attributes).get("service.name", "")
        for scope_metrics in resource_metrics.scope_metrics:
            scope = scope_metrics.scope.name
            for metric in scope_metrics.metrics:
                kind = metric.WhichOneof("data")
                if kind is None:
                    continue
                base = {"name": metric.name, "unit": metric.unit, "description": metric.description, "type": kind}
                for point in getattr(metric, kind).data_points:
                    entry = dict(base, attributes=attributes(point.attributes), service=service, scope=scope)
                    if kind == "histogram":
                        entry.update(
                            count=point.count,
                            sum=optional(point, "sum"),
                            bounds=list(point.explicit_bounds),
                            bucket_counts=list(point.bucket_counts),
                        )
                    elif kind in ("sum", "gauge"):
                        entry["value"] = number_value(point)
                    elif kind == "exponential_histogram":
                        entry.update(count=point.count, sum=optional(point, "sum"))
                    elif kind == "summary":
                        entry.update(count=point.count, sum=point.sum)
                    points.append(entry)
    return points


# ---- HTTP -----------------------------------------------------------------------------------


class BadRequest(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "golem-otlp-receiver"

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass

    def send(self, status, body=b"", content_type=None):
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def send_json(self, value):
        self.send(200, json.dumps(value).encode(), "application/json")

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                line = self.rfile.readline()
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            body = b"".join(chunks)
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        encoding = self.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding == "gzip":
            return gzip.decompress(body)
        if encoding == "deflate":
            return zlib.decompress(body)
        if encoding in ("", "identity"):
            return body
        raise BadRequest(f"unsupported Content-Encoding {encoding!r}")

    def do_POST(self):
        headers = {}
        for name, value in self.headers.items():
            name = name.lower()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        path = urlsplit(self.path).path
        try:
            body = self.read_body()
        except Exception as e:  # noqa: BLE001 - anything unreadable is the client's fault
            STORE.add("headers", [headers])
            print(f"otlp_receiver: POST {path}: unreadable body: {e}", file=sys.stderr, flush=True)
            self.close_connection = True
            self.send(400, str(e).encode(), "text/plain")
            return
        STORE.add("headers", [headers])
        try:
            if path == "/v1/traces":
                STORE.add("spans", decode_traces(body))
                self.send(200, ExportTraceServiceResponse().SerializeToString(), "application/x-protobuf")
            elif path == "/v1/metrics":
                STORE.add("metrics", decode_metrics(body))
                self.send(200, ExportMetricsServiceResponse().SerializeToString(), "application/x-protobuf")
            elif path == "/v1/logs":
                self.send(200, b"", "application/x-protobuf")
            else:
                self.send(404, b"not found", "text/plain")
        except Exception as e:  # noqa: BLE001 - a body that does not decode
            print(f"otlp_receiver: POST {path}: cannot decode body: {e!r}", file=sys.stderr, flush=True)
            self.send(400, f"cannot decode body: {e}".encode(), "text/plain")

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/headers":
            with STORE.cond:
                self.send_json(list(STORE.headers))
            return
        kind = {"/spans": "spans", "/metrics": "metrics"}.get(url.path)
        if kind is None:
            self.send(404, b"not found", "text/plain")
            return
        query = parse_qs(url.query)
        try:
            minimum = int(query.get("min", ["0"])[-1])
            timeout = float(query.get("timeout", [str(DEFAULT_TIMEOUT)])[-1])
        except ValueError as e:
            self.send(400, f"bad query: {e}".encode(), "text/plain")
            return
        timeout = min(max(timeout, 0.0), MAX_TIMEOUT)
        self.send_json(STORE.wait_for(kind, minimum, timeout))

    def do_PUT(self):
        self.send(404, b"not found", "text/plain")

    do_DELETE = do_PATCH = do_HEAD = do_PUT


class Server(ThreadingHTTPServer):
    daemon_threads = True  # a long-polling GET must not hold up the exit
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser(description="OTLP/HTTP receiver for golem's tracing tests")
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    args = ap.parse_args()

    server = Server(("127.0.0.1", args.port), Handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"listening {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
