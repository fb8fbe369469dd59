//! The OTLP exporters, each wrapped so that its first failure is said once
//! on stderr and every later one is not: a collector that is down costs a
//! command one line, not one line per batch.

use std::fmt::Display;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::Temporality;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

/// Says a signal's first export failure, once.
#[derive(Debug)]
pub(crate) struct FirstFailure {
    /// The command's name, the prefix of its stderr lines.
    command: &'static str,
    /// `"traces"` or `"metrics"`.
    signal: &'static str,
    said: AtomicBool,
}

impl FirstFailure {
    pub(crate) fn new(command: &'static str, signal: &'static str) -> Self {
        FirstFailure {
            command,
            signal,
            said: AtomicBool::new(false),
        }
    }

    fn failed(&self, error: &impl Display) {
        if !self.said.swap(true, Ordering::Relaxed) {
            eprintln!(
                "{}: warning: could not export {} over OTLP: {error} (later failures are not reported)",
                self.command, self.signal
            );
        }
    }
}

/// A span exporter whose first failure is said once.
#[derive(Debug)]
pub(crate) struct Spans<E> {
    pub(crate) inner: E,
    pub(crate) failure: FirstFailure,
}

impl<E: SpanExporter> SpanExporter for Spans<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let result = self.inner.export(batch).await;
        if let Err(error) = &result {
            self.failure.failed(error);
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// A metric exporter whose first failure is said once.
#[derive(Debug)]
pub(crate) struct Metrics<E> {
    pub(crate) inner: E,
    pub(crate) failure: FirstFailure,
}

impl<E: PushMetricExporter> PushMetricExporter for Metrics<E> {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let result = self.inner.export(metrics).await;
        if let Err(error) = &result {
            self.failure.failed(error);
        }
        result
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> Temporality {
        self.inner.temporality()
    }
}
