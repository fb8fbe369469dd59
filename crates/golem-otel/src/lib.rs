//! OpenTelemetry export for golem's commands (ADR 0035): the spans and
//! metrics that `golem-mcp` and `golem-agent` emit through `tracing`, sent
//! over OTLP/HTTP with protobuf when the standard variables ask for it, and
//! flushed, within a bound, before the command exits.
//!
//! The variables are OpenTelemetry's own: `OTEL_EXPORTER_OTLP_ENDPOINT`
//! (or the per-signal `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` and
//! `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`) turns a signal on;
//! `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT` and their
//! per-signal forms, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` and
//! `OTEL_TRACES_SAMPLER` are read by the OpenTelemetry SDK as it reads them
//! everywhere; `OTEL_TRACES_EXPORTER=none` / `OTEL_METRICS_EXPORTER=none`
//! turn one signal off and `OTEL_SDK_DISABLED=true` both. Without an
//! endpoint nothing is made: no exporter, no thread, no connection.
//!
//! A collector that is down never fails or slows a command: exports run on
//! the SDK's own threads, each signal's first failure is reported once on
//! stderr (the rest are not), and the flush at exit waits at most
//! [`EXIT_FLUSH_BOUND`].

mod exporters;
mod setup;
mod views;

pub use setup::{EXIT_FLUSH_BOUND, LocalLayer, Telemetry};
