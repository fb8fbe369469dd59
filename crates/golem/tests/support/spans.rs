//! The `tracing` spans a run makes, captured: each span's name and its
//! fields as text (`Spans`, a layer), for the tests of the run's telemetry.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

/// A span's name and its fields as text.
pub type Seen = (String, BTreeMap<String, String>);

/// Every span seen, in creation order.
#[derive(Clone, Default)]
pub struct Spans(pub Arc<Mutex<Vec<Seen>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

/// The index of a span in `Spans`, kept in the span's extensions.
struct Slot(usize);

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let mut spans = self.0.lock().expect("lock");
        spans.push((attrs.metadata().name().to_owned(), fields));
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Slot(spans.len() - 1));
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let Some(slot) = span.extensions().get::<Slot>().map(|slot| slot.0) else {
            return;
        };
        values.record(&mut Fields(&mut self.0.lock().expect("lock")[slot].1));
    }
}
