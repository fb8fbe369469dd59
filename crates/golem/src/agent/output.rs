//! Capped tool output (ADR 0029): a tool message longer than the agent's
//! limit reaches the model as its head and tail around one line saying how
//! many bytes were left out and how to read them: the whole text is kept
//! in an [`OutputStore`], and [`READ_OUTPUT_TOOL`] reads it back a slice at
//! a time. [`RunOutputs`] is one run's side of it: the limit, the store,
//! the read tool, and whether a cut was made yet (the read tool is offered
//! from the first cut on, in this run or in the history it continues). It
//! knows nothing of turns, budgets or events.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use golem_model::{Message, Role};

use super::gather::Offered;
use golem_tool::{Tool, ToolContext, ToolError, ToolHints};
use serde_json::Value;
use serde_json::value::RawValue;

/// The name of the tool that reads a cut tool output back
/// ([`READ_OUTPUT_TOOL_FALLBACK`] when a source offers a tool of this name).
pub const READ_OUTPUT_TOOL: &str = "read_tool_output";

/// The read tool's name when a source offers one named [`READ_OUTPUT_TOOL`].
pub const READ_OUTPUT_TOOL_FALLBACK: &str = "golem_read_tool_output";

/// Where the read tool comes from, in `Offered` and in a duplicate-name
/// error.
pub(super) const OUTPUT_SOURCE: &str = "tool output";

/// [`AgentConfig::max_tool_output`](crate::AgentConfig::max_tool_output)'s
/// default: 32 KiB.
pub const DEFAULT_MAX_TOOL_OUTPUT: usize = 32 * 1024;

/// The read tool's input schema.
const READ_SCHEMA: &str = r#"{"type":"object","properties":{"id":{"type":"string","description":"The id the cut result names"},"offset":{"type":"integer","minimum":0,"description":"The first byte to read"},"length":{"type":"integer","minimum":1,"description":"How many bytes to read"}},"required":["id","offset","length"],"additionalProperties":false}"#;

/// The read tool's description.
const READ_DESCRIPTION: &str = "Reads part of a tool result that was too long to show whole: \
     give the id, offset and length its note names.";

/// Where the whole text of cut tool outputs is kept, for
/// [`READ_OUTPUT_TOOL`] to read back. [`MemoryOutputStore`] is the
/// default; `golem` keeps each in a file.
pub trait OutputStore: Send + Sync {
    /// Keeps `text`, the whole output of tool call `call_id`. Returns the
    /// id to read it by (unique in this store: the call id, or one made
    /// from it) and, when there is one worth telling the model, where it
    /// is kept (a file's path).
    ///
    /// # Errors
    ///
    /// When it cannot be kept: the model is then told so, and offered no
    /// way to read it.
    fn keep(&self, call_id: &str, text: &str) -> std::io::Result<Kept>;

    /// The whole text kept as `id`, or `None` when there is none.
    ///
    /// # Errors
    ///
    /// When it was kept but cannot be read.
    fn read(&self, id: &str) -> std::io::Result<Option<Arc<str>>>;
}

/// Where an [`OutputStore`] kept an output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The id [`READ_OUTPUT_TOOL`] reads it by.
    pub id: String,
    /// Where it is, for the model's note (a file's path), if anywhere.
    pub location: Option<String>,
}

/// The default [`OutputStore`]: in memory, at most 64 MiB in all, the
/// oldest outputs forgotten first.
#[derive(Default)]
pub struct MemoryOutputStore {
    kept: Mutex<Memory>,
}

/// What a [`MemoryOutputStore`] holds.
#[derive(Default)]
struct Memory {
    texts: HashMap<String, Arc<str>>,
    order: VecDeque<String>,
    bytes: usize,
}

/// The most bytes a [`MemoryOutputStore`] holds.
const MEMORY_MAX: usize = 64 * 1024 * 1024;

impl fmt::Debug for MemoryOutputStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("MemoryOutputStore")
            .field("outputs", &kept.order.len())
            .field("bytes", &kept.bytes)
            .finish()
    }
}

impl OutputStore for MemoryOutputStore {
    fn keep(&self, call_id: &str, text: &str) -> std::io::Result<Kept> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let mut id = call_id.to_owned();
        let mut next = 2;
        while kept.texts.contains_key(&id) {
            id = format!("{call_id}-{next}");
            next += 1;
        }
        while kept.bytes + text.len() > MEMORY_MAX {
            let Some(oldest) = kept.order.pop_front() else {
                break;
            };
            if let Some(text) = kept.texts.remove(&oldest) {
                kept.bytes -= text.len();
            }
        }
        kept.bytes += text.len();
        kept.texts.insert(id.clone(), Arc::from(text));
        kept.order.push_back(id.clone());
        Ok(Kept { id, location: None })
    }

    fn read(&self, id: &str) -> std::io::Result<Option<Arc<str>>> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(kept.texts.get(id).cloned())
    }
}

/// One run's output cap.
pub(super) struct RunOutputs<Deps> {
    /// The most bytes of one tool message; `None`: no limit.
    max: Option<usize>,
    store: Arc<dyn OutputStore>,
    /// Whether a cut was made, in this run or its history.
    cut: AtomicBool,
    /// The read tool, named [`READ_OUTPUT_TOOL`] and
    /// [`READ_OUTPUT_TOOL_FALLBACK`].
    tools: [Tool<Deps>; 2],
}

impl<Deps: Send + Sync + 'static> RunOutputs<Deps> {
    /// The cap of a run continuing `history`: when a result in it was cut,
    /// the read tool is offered from the start.
    pub(super) fn new(
        max: Option<usize>,
        store: Arc<dyn OutputStore>,
        history: &[Message],
    ) -> Self {
        let longest = max.unwrap_or(usize::MAX);
        let tools = [READ_OUTPUT_TOOL, READ_OUTPUT_TOOL_FALLBACK].map(|name| {
            let reader = Arc::clone(&store);
            Tool::new(
                name,
                READ_DESCRIPTION,
                READ_SCHEMA,
                move |_: ToolContext<Deps>, arguments: Box<RawValue>| {
                    let read = read(reader.as_ref(), &arguments, longest, name);
                    async move { read }
                },
            )
            .expect("the read tool's definition is valid")
            .always_loaded(true)
            // It changes nothing: an approver need not ask about it.
            .with_hints(ToolHints::READ_ONLY)
        });
        let cut = history.iter().any(|message| {
            message.role == Role::Tool
                && [READ_OUTPUT_TOOL, READ_OUTPUT_TOOL_FALLBACK]
                    .iter()
                    .any(|name| message.content.contains(&format!("{name} {{")))
        });
        RunOutputs {
            max,
            store,
            cut: AtomicBool::new(cut),
            tools,
        }
    }
}

impl<Deps> RunOutputs<Deps> {
    /// The read tool's name among `offered` (a source's own
    /// `read_tool_output` keeps its name; ours takes another).
    pub(super) fn name_among(&self, offered: &Offered<Deps>) -> &'static str {
        match offered.source_of(READ_OUTPUT_TOOL) {
            Some(source) if source != OUTPUT_SOURCE => READ_OUTPUT_TOOL_FALLBACK,
            _ => READ_OUTPUT_TOOL,
        }
    }

    /// The read tool to offer with `offered`, once a cut was made.
    pub(super) fn read_tool(&self, offered: &Offered<Deps>) -> Option<&Tool<Deps>> {
        if !self.cut.load(Ordering::Relaxed) {
            return None;
        }
        match self.name_among(offered) {
            READ_OUTPUT_TOOL => Some(&self.tools[0]),
            _ => Some(&self.tools[1]),
        }
    }

    /// `content`, the message of call `call_id` of a tool from `source`, as
    /// the model gets it: whole when within the limit (or from the read
    /// tool itself), else cut, the whole kept, the note naming the read
    /// tool `reader`.
    pub(super) fn cap(&self, call_id: &str, source: &str, content: String, reader: &str) -> String {
        let Some(max) = self.max else {
            return content;
        };
        if content.len() <= max || source == OUTPUT_SOURCE {
            return content;
        }
        let kept = self.store.keep(call_id, &content);
        if kept.is_ok() {
            self.cut.store(true, Ordering::Relaxed);
        }
        cut(&content, max, kept, reader)
    }
}

/// The most images of tool results one model request carries: a
/// conversation's screenshots add up, and providers bound a request.
pub(super) const MAX_TOOL_IMAGES_SENT: usize = 20;

/// Keeps the images of the newest tool results, at most
/// [`MAX_TOOL_IMAGES_SENT`] in all; an older result's images are dropped,
/// and its text says so (once).
pub(super) fn bound_images(messages: &mut [Message]) {
    let mut kept = 0usize;
    for message in messages.iter_mut().rev() {
        if message.role != Role::Tool || message.images.is_empty() {
            continue;
        }
        if kept + message.images.len() <= MAX_TOOL_IMAGES_SENT {
            kept += message.images.len();
            continue;
        }
        let dropped = message.images.len();
        message.images.clear();
        message.content.push_str(&format!(
            "\n[{dropped} image(s) of this result no longer shown: newer results' images are]"
        ));
    }
}

/// `text` cut to about `max` bytes: three quarters head, one quarter tail,
/// each ending (or starting) at a line break near the cut when there is
/// one, around the line that says what was left out and how to read it.
fn cut(text: &str, max: usize, kept: std::io::Result<Kept>, reader: &str) -> String {
    let head_end = line_end_before(text, max / 4 * 3);
    let tail_start = line_start_after(text, text.len() - max / 4).max(head_end);
    let left_out = tail_start - head_end;
    let mut note = format!(
        "[… {left_out} bytes left out here (bytes {head_end} to {tail_start} of {}) …",
        text.len()
    );
    match kept {
        Ok(Kept { id, location }) => {
            let arguments = read_call(reader, &id, head_end, left_out.min((max / 4).max(1)));
            match location {
                Some(location) => {
                    note.push_str(&format!(" The whole result is kept in {location}."))
                }
                None => note.push_str(" The whole result is kept."),
            }
            note.push_str(&format!(" Read more with {arguments}]"));
        }
        Err(error) => note.push_str(&format!(" The whole result could not be kept: {error}]")),
    }
    format!("{}\n{note}\n{}", &text[..head_end], &text[tail_start..]).replace("\n\n[…", "\n[…")
}

/// A cut point at or before `at`: just after the last line break in the
/// last eighth before it, else the nearest character boundary.
fn line_end_before(text: &str, at: usize) -> usize {
    let at = floor_boundary(text, at);
    let window = floor_boundary(text, at - at / 8);
    match text[window..at].rfind('\n') {
        Some(found) => window + found + 1,
        None => at,
    }
}

/// A cut point at or after `at`: just after the first line break in the
/// eighth after it, else the nearest character boundary.
fn line_start_after(text: &str, at: usize) -> usize {
    let at = ceil_boundary(text, at);
    let window = ceil_boundary(text, at + (text.len() - at) / 8);
    match text[at..window].find('\n') {
        Some(found) => at + found + 1,
        None => at,
    }
}

/// The call of read tool `reader` for `length` bytes of `id` from
/// `offset`, as the model writes it: `read_tool_output {"id": "…",
/// "offset": 0, "length": 8}`.
fn read_call(reader: &str, id: &str, offset: usize, length: usize) -> String {
    let id = Value::String(id.to_owned());
    format!("{reader} {{\"id\": {id}, \"offset\": {offset}, \"length\": {length}}}")
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// One call of the read tool: at most `longest` bytes of a kept output
/// from `offset`, and, when more follows, a line with the call that reads
/// on.
fn read(
    store: &dyn OutputStore,
    arguments: &RawValue,
    longest: usize,
    reader: &str,
) -> Result<String, ToolError> {
    let shape = || {
        ToolError::retry(format!(
            "{reader} takes {{\"id\": string, \"offset\": integer, \"length\": integer}} \
             as a cut result's note gives them; got {}",
            arguments.get()
        ))
    };
    let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(arguments.get()) else {
        return Err(shape());
    };
    let (Some(id), Some(offset), Some(length)) = (
        fields.get("id").and_then(Value::as_str),
        fields.get("offset").and_then(Value::as_u64),
        fields.get("length").and_then(Value::as_u64),
    ) else {
        return Err(shape());
    };
    let text = match store.read(id) {
        Ok(Some(text)) => text,
        Ok(None) => {
            return Err(ToolError::retry(format!(
                "no tool result is kept as {id:?}: use the id a cut result's note names"
            )));
        }
        Err(error) => return Err(ToolError::fatal(error)),
    };
    let offset = usize::try_from(offset).unwrap_or(usize::MAX);
    if offset >= text.len() {
        return Err(ToolError::retry(format!(
            "offset {offset} is past the end of {id:?}, which has {} bytes",
            text.len()
        )));
    }
    let length = usize::try_from(length)
        .unwrap_or(usize::MAX)
        .clamp(1, longest.max(1));
    let start = floor_boundary(&text, offset);
    let end = ceil_boundary(&text, start.saturating_add(length));
    let mut slice = text[start..end].to_owned();
    if end < text.len() {
        slice.push_str(&format!(
            "\n[… {} more bytes: {}]",
            text.len() - end,
            read_call(reader, id, end, length)
        ));
    }
    Ok(slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).expect("valid JSON")
    }

    #[test]
    fn a_long_text_keeps_its_head_and_tail_and_says_how_to_read_the_rest() {
        let text: String = (0..2000).map(|n| format!("line {n:04}\n")).collect();
        let store = MemoryOutputStore::default();
        let kept = store.keep("call_1", &text);
        let shown = cut(&text, 4096, kept, READ_OUTPUT_TOOL);
        assert!(shown.len() < 4096 + 300, "{}", shown.len());
        assert!(shown.starts_with("line 0000\n"));
        assert!(shown.ends_with("line 1999\n"));
        let note = shown
            .lines()
            .find(|line| line.starts_with("[…"))
            .expect("a note line");
        assert!(
            note.contains("bytes left out here (bytes 3070 to 18980 of 20000)"),
            "{note}"
        );
        assert!(
            note.ends_with(r#"Read more with read_tool_output {"id": "call_1", "offset": 3070, "length": 1024}]"#),
            "{note}"
        );
        // The note's call reads exactly the bytes after the head.
        let read = read(
            &store,
            &raw(r#"{"id":"call_1","offset":3070,"length":1024}"#),
            4096,
            READ_OUTPUT_TOOL,
        )
        .expect("read");
        assert!(read.starts_with(&text[3070..4094]), "{read}");
        assert!(
            read.ends_with(r#"read_tool_output {"id": "call_1", "offset": 4094, "length": 1024}]"#),
            "{read}"
        );
    }

    #[test]
    fn only_the_newest_tool_images_are_sent() {
        let image = golem_model::Image::base64("image/png", "iVBORw0KGgo=");
        let result = |n: usize| {
            Message::tool_result_with_images(
                format!("c{n}"),
                "shot",
                "a shot",
                vec![image.clone(); 8],
            )
        };
        let mut messages = vec![Message::user("hi"), result(1), result(2), result(3)];
        bound_images(&mut messages);
        let counts: Vec<usize> = messages.iter().map(|m| m.images.len()).collect();
        assert_eq!(counts, [0, 0, 8, 8]);
        assert!(
            messages[1].content.ends_with(
                "[8 image(s) of this result no longer shown: newer results' images are]"
            )
        );
        bound_images(&mut messages);
        assert_eq!(
            messages[1].content.matches("no longer shown").count(),
            1,
            "said once"
        );
    }

    #[test]
    fn reads_are_bounded_and_bad_ones_are_corrections() {
        let store = MemoryOutputStore::default();
        let text = "é".repeat(100);
        let kept = store.keep("c", &text).expect("kept");
        assert_eq!(kept.id, "c");
        assert_eq!(store.keep("c", "x").expect("kept").id, "c-2");
        // An offset inside a character starts at its beginning.
        let slice = read(
            &store,
            &raw(r#"{"id":"c","offset":1,"length":500}"#),
            10,
            READ_OUTPUT_TOOL,
        )
        .expect("read");
        assert!(slice.starts_with("ééééé\n[… 190 more bytes"), "{slice}");
        for (arguments, says) in [
            (
                r#"{"id":"nope","offset":0,"length":5}"#,
                "no tool result is kept as \"nope\"",
            ),
            (
                r#"{"id":"c","offset":200,"length":5}"#,
                "offset 200 is past the end",
            ),
            (r#"{"id":"c"}"#, "read_tool_output takes"),
        ] {
            let error = read(&store, &raw(arguments), 10, READ_OUTPUT_TOOL).expect_err("refused");
            let reason = error.as_retry().expect("a correction").reason();
            assert!(reason.contains(says), "{reason}");
        }
    }
}
