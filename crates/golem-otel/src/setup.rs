//! Reading the variables, making the providers and the `tracing` layers,
//! and the bounded flush at exit.

use std::time::Duration;

use opentelemetry::InstrumentationScope;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{RetryPolicy, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{BatchSpanProcessor, SdkTracerProvider};
use tracing::level_filters::LevelFilter;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{Layer, Registry};

use crate::exporters::{FirstFailure, Metrics, Spans};
use crate::views;

/// The longest the flush at exit waits for the collector: past it, what
/// is left is dropped and the command exits.
pub const EXIT_FLUSH_BOUND: Duration = Duration::from_secs(1);

/// A command's own `tracing` layer (its log lines on stderr, with their
/// own filter), installed beside the export.
pub type LocalLayer = Box<dyn Layer<Registry> + Send + Sync>;

/// The command's telemetry: the process's `tracing` subscriber, and the
/// providers that export, when the variables ask for them. Call
/// [`shutdown`](Telemetry::shutdown) before exiting; dropped, it shuts down
/// the same way.
#[derive(Debug, Default)]
pub struct Telemetry {
    traces: Option<SdkTracerProvider>,
    metrics: Option<SdkMeterProvider>,
}

/// Which signals the variables turn on.
#[derive(Debug, Default, PartialEq, Eq)]
struct Wanted {
    traces: bool,
    metrics: bool,
}

impl Telemetry {
    /// Sets the process's `tracing` subscriber: `local` (the command's own
    /// log layer, if any) and, when the standard variables ask for it, the
    /// export of golem's spans and metrics. `command` names the command in
    /// the service name (unless `OTEL_SERVICE_NAME` or
    /// `OTEL_RESOURCE_ATTRIBUTES` names one) and in its warnings. Nothing is
    /// installed when there is neither a local layer nor an export.
    pub fn install(command: &'static str, local: Option<LocalLayer>) -> Telemetry {
        let wanted = wanted(command, |name| std::env::var(name).ok());
        let resource = (wanted.traces || wanted.metrics).then(|| resource(command));
        let telemetry = Telemetry {
            traces: resource
                .clone()
                .filter(|_| wanted.traces)
                .and_then(|resource| tracer_provider(command, resource)),
            metrics: resource
                .filter(|_| wanted.metrics)
                .and_then(|resource| meter_provider(command, resource)),
        };
        if local.is_none() && !telemetry.is_exporting() {
            return telemetry;
        }
        let spans = telemetry.traces.as_ref().map(|provider| {
            let scope = InstrumentationScope::builder("golem")
                .with_version(env!("CARGO_PKG_VERSION"))
                .build();
            // Only the conventions' attributes: no source locations,
            // threads, targets or busy/idle times of the `tracing` spans.
            tracing_opentelemetry::layer()
                .with_location(false)
                .with_threads(false)
                .with_target(false)
                .with_tracked_inactivity(false)
                .with_tracer(provider.tracer_with_scope(scope))
                .with_filter(span_targets())
        });
        let metrics = telemetry.metrics.as_ref().map(|provider| {
            tracing_opentelemetry::MetricsLayer::new(provider.clone()).with_filter(metric_targets())
        });
        let _ = tracing_subscriber::registry()
            .with(local)
            .with(spans)
            .with(metrics)
            .try_init();
        telemetry
    }

    /// Whether anything is exported.
    pub fn is_exporting(&self) -> bool {
        self.traces.is_some() || self.metrics.is_some()
    }

    /// Exports what is left and stops the exporters, waiting at most
    /// [`EXIT_FLUSH_BOUND`] (the export goes on in the background past it,
    /// until the process exits).
    pub fn shutdown(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        let traces = self.traces.take();
        let metrics = self.metrics.take();
        if traces.is_none() && metrics.is_none() {
            return;
        }
        let (done, finished) = std::sync::mpsc::channel::<()>();
        let flushes: [Option<Box<dyn FnOnce() + Send>>; 2] = [
            traces.map(|traces| Box::new(move || drop(traces.shutdown())) as _),
            metrics.map(|metrics| Box::new(move || drop(metrics.shutdown())) as _),
        ];
        // Both at once, on threads of their own: the bound is the caller's,
        // whatever the collector does. A thread that cannot be started
        // drops its sender, which counts as done.
        for flush in flushes.into_iter().flatten() {
            let done = done.clone();
            let _ = std::thread::Builder::new()
                .name("golem-otel-flush".into())
                .spawn(move || {
                    flush();
                    let _ = done.send(());
                });
        }
        drop(done);
        let deadline = std::time::Instant::now() + EXIT_FLUSH_BOUND;
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            // Ends when every flush is done (all senders gone) or the time
            // is up.
            if finished.recv_timeout(left).is_err() {
                break;
            }
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// The signals the variables `env` reads turn on; a protocol other than
/// OTLP/HTTP with protobuf turns its signal off, with a warning.
fn wanted(command: &str, env: impl Fn(&str) -> Option<String>) -> Wanted {
    let set = |name: &str| env(name).is_some_and(|value| !value.trim().is_empty());
    let says = |name: &str, word: &str| {
        env(name).is_some_and(|value| value.trim().eq_ignore_ascii_case(word))
    };
    if says("OTEL_SDK_DISABLED", "true") {
        return Wanted::default();
    }
    let signal = |name: &str, endpoint: &str, exporter: &str, protocol: &str| {
        if !(set("OTEL_EXPORTER_OTLP_ENDPOINT") || set(endpoint)) || says(exporter, "none") {
            return false;
        }
        let protocol = env(protocol)
            .filter(|value| !value.trim().is_empty())
            .or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .unwrap_or_default();
        match protocol.trim() {
            "" | "http/protobuf" => true,
            other => {
                eprintln!(
                    "{command}: warning: OTLP protocol {other:?} is not supported (only http/protobuf); {name} are not exported"
                );
                false
            }
        }
    };
    Wanted {
        traces: signal(
            "traces",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_TRACES_EXPORTER",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        ),
        metrics: signal(
            "metrics",
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
            "OTEL_METRICS_EXPORTER",
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
        ),
    }
}

/// The resource: the SDK's (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
/// the SDK's own attributes), with `command` as the service's name when
/// the variables name none. Never the command line: it holds the prompt.
fn resource(command: &'static str) -> Resource {
    let named = std::env::var("OTEL_SERVICE_NAME").is_ok_and(|name| !name.trim().is_empty())
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|attributes| {
            attributes
                .split(',')
                .any(|pair| pair.trim_start().starts_with("service.name="))
        });
    let builder = Resource::builder();
    let builder = match named {
        true => builder,
        false => builder.with_service_name(command),
    };
    builder
        .with_attribute(opentelemetry::KeyValue::new(
            "service.version",
            env!("CARGO_PKG_VERSION"),
        ))
        .build()
}

/// Two quick retries (50 then 100 ms): a command's exports are few, and
/// the SDK's recommended backoff (three retries up to 1.6 s) would spend
/// the whole flush bound at exit on a collector that refuses connections.
fn brief_retries() -> RetryPolicy {
    RetryPolicy::recommended()
        .with_max_retries(2)
        .with_initial_delay(Duration::from_millis(50))
        .with_max_delay(Duration::from_millis(100))
        .with_max_jitter(Duration::from_millis(10))
}

fn tracer_provider(command: &'static str, resource: Resource) -> Option<SdkTracerProvider> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_retry_policy(brief_retries())
        .build();
    let exporter = match exporter {
        Ok(exporter) => exporter,
        Err(error) => {
            eprintln!("{command}: warning: traces are not exported: {error}");
            return None;
        }
    };
    let exporter = Spans {
        inner: exporter,
        failure: FirstFailure::new(command, "traces"),
    };
    Some(
        SdkTracerProvider::builder()
            .with_span_processor(BatchSpanProcessor::builder(exporter).build())
            .with_resource(resource)
            .build(),
    )
}

fn meter_provider(command: &'static str, resource: Resource) -> Option<SdkMeterProvider> {
    let exporter = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_retry_policy(brief_retries())
        .build();
    let exporter = match exporter {
        Ok(exporter) => exporter,
        Err(error) => {
            eprintln!("{command}: warning: metrics are not exported: {error}");
            return None;
        }
    };
    let exporter = Metrics {
        inner: exporter,
        failure: FirstFailure::new(command, "metrics"),
    };
    Some(
        SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(exporter).build())
            .with_view(views::stream)
            .with_resource(resource)
            .build(),
    )
}

/// The targets whose spans (and the events in them) are exported: golem's
/// spans, and the warnings of its libraries; never the metric events.
fn span_targets() -> Targets {
    Targets::new()
        .with_target("golem_mcp", LevelFilter::WARN)
        .with_target("golem_mcp::client", LevelFilter::INFO)
        .with_target("golem_mcp::metrics", LevelFilter::OFF)
        .with_target("golem_agent", LevelFilter::INFO)
        .with_target("golem_agent::metrics", LevelFilter::OFF)
}

/// The targets of golem's metric events.
fn metric_targets() -> Targets {
    Targets::new()
        .with_target("golem_mcp::metrics", LevelFilter::INFO)
        .with_target("golem_agent::metrics", LevelFilter::INFO)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted_with(vars: &[(&str, &str)]) -> Wanted {
        wanted("test", |name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        })
    }

    #[test]
    fn nothing_is_exported_without_an_endpoint() {
        assert_eq!(wanted_with(&[]), Wanted::default());
        assert_eq!(
            wanted_with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")]),
            Wanted::default()
        );
        assert_eq!(
            wanted_with(&[("OTEL_SERVICE_NAME", "x")]),
            Wanted::default()
        );
    }

    #[test]
    fn the_endpoints_turn_the_signals_on() {
        let both = Wanted {
            traces: true,
            metrics: true,
        };
        assert_eq!(
            wanted_with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")]),
            both
        );
        assert_eq!(
            wanted_with(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c/v1/traces")]),
            Wanted {
                traces: true,
                metrics: false
            }
        );
        assert_eq!(
            wanted_with(&[("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://c/v1/metrics")]),
            Wanted {
                traces: false,
                metrics: true
            }
        );
    }

    #[test]
    fn the_sdk_and_each_signal_can_be_turned_off() {
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318");
        assert_eq!(
            wanted_with(&[endpoint, ("OTEL_SDK_DISABLED", "TRUE")]),
            Wanted::default()
        );
        assert_eq!(
            wanted_with(&[endpoint, ("OTEL_TRACES_EXPORTER", "none")]),
            Wanted {
                traces: false,
                metrics: true
            }
        );
        assert_eq!(
            wanted_with(&[endpoint, ("OTEL_METRICS_EXPORTER", "none")]),
            Wanted {
                traces: true,
                metrics: false
            }
        );
    }

    #[test]
    fn only_http_protobuf_is_spoken() {
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318");
        assert_eq!(
            wanted_with(&[endpoint, ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]),
            Wanted::default()
        );
        assert_eq!(
            wanted_with(&[
                endpoint,
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
            ]),
            Wanted {
                traces: true,
                metrics: false
            }
        );
    }
}
