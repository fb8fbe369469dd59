//! `CallResult`: what `tools/call` answers, every content item kept, and
//! the text a model reads of it.

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::wire::content::Content;

/// The result of `tools/call`.
///
/// Every content item is kept; [`text`](CallResult::text) renders them the
/// way a model sees them.
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct CallResult {
    /// The content items, in order.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Whether the tool reported failure. The content then explains what
    /// went wrong, in words meant for the model.
    #[serde(rename = "isError", default, deserialize_with = "null_as_false")]
    pub is_error: bool,
    /// Structured output, verbatim, when the server sent it.
    #[serde(rename = "structuredContent", default)]
    pub structured_content: Option<Box<RawValue>>,
    /// The result's `_meta`, verbatim, when present.
    #[serde(rename = "_meta", default)]
    pub meta: Option<Box<RawValue>>,
}

fn null_as_false<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(deserializer)?.unwrap_or(false))
}

impl CallResult {
    /// A successful result with these content items and nothing else (set
    /// the public fields after it for more): for tests and for programs
    /// that stand in for a server.
    pub fn new(content: Vec<Content>) -> Self {
        CallResult {
            content,
            is_error: false,
            structured_content: None,
            meta: None,
        }
    }

    /// The result as a model reads it: text items joined by newlines, and
    /// one placeholder line per non-text item saying what was left out.
    ///
    /// ```
    /// # use golem_mcp::{CallResult, Content};
    /// let result = CallResult::new(vec![
    ///     Content::Text { text: "hello".into() },
    ///     Content::Image { data: "aGk=".into(), mime_type: "image/png".into() },
    /// ]);
    /// assert_eq!(result.text(), "hello\n[image: image/png, 2 bytes not shown]");
    /// ```
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(match self.content.as_slice() {
            [Content::Text { text }] => text.len(),
            _ => 0,
        });
        for (index, item) in self.content.iter().enumerate() {
            if index > 0 {
                out.push('\n');
            }
            item.render(&mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> CallResult {
        serde_json::from_str(json).expect("a valid result")
    }

    #[test]
    fn keeps_every_content_kind_and_renders_placeholders() {
        let result = parse(
            r#"{"content":[
                {"type":"text","text":"one"},
                {"type":"image","data":"AAECAw==","mimeType":"image/png"},
                {"type":"audio","data":"AAEC","mimeType":"audio/wav"},
                {"type":"resource_link","uri":"file:///a.txt","name":"a","mimeType":"text/plain"},
                {"type":"resource","resource":{"uri":"file:///b","mimeType":"text/plain","text":"hello"}},
                {"type":"resource","resource":{"uri":"file:///c","blob":"AA=="}},
                {"type":"hologram"},
                {"type":"text","text":"two"}
            ],"isError":false,"structuredContent":{"z":1, "a":2}}"#,
        );
        assert_eq!(result.content.len(), 8);
        assert_eq!(
            result.text(),
            "one\n\
             [image: image/png, 4 bytes not shown]\n\
             [audio: audio/wav, 3 bytes not shown]\n\
             [resource link: file:///a.txt (text/plain)]\n\
             [embedded resource: file:///b (text/plain), 5 bytes of text not shown]\n\
             [embedded resource: file:///c (unknown type), 1 bytes not shown]\n\
             [content of unsupported type \"hologram\" not shown]\n\
             two"
        );
        assert_eq!(
            result.structured_content.as_deref().map(RawValue::get),
            Some(r#"{"z":1, "a":2}"#)
        );
    }

    #[test]
    fn an_unknown_content_type_with_unusual_fields_does_not_fail_the_result() {
        let result = parse(
            r#"{"content":[{"type":"text","text":"kept"},
                {"type":"future_kind","name":{"a":1},"size":"big","uri":7,"resource":[1]}]}"#,
        );
        assert_eq!(
            result.text(),
            "kept\n[content of unsupported type \"future_kind\" not shown]"
        );
    }

    #[test]
    fn is_error_defaults_to_false_and_accepts_null() {
        assert!(!parse(r#"{"content":[]}"#).is_error);
        assert!(!parse(r#"{"content":[],"isError":null}"#).is_error);
        assert!(parse(r#"{"content":[],"isError":true}"#).is_error);
    }

    #[test]
    fn an_item_missing_its_payload_is_an_error_naming_it() {
        let error = serde_json::from_str::<CallResult>(
            r#"{"content":[{"type":"image","mimeType":"image/png"}]}"#,
        )
        .expect_err("image without data");
        assert!(error.to_string().contains("\"data\""), "{error}");
    }
}
