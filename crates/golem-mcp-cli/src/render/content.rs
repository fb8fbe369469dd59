//! How content items read: `call`'s text (an embedded text resource under
//! a header naming its URI, anything else as the placeholder line a model
//! sees) and a content item as the protocol writes it, for `prompt
//! --json`. It knows nothing of the client or of where the text goes.

use std::fmt::Write as _;

use golem_mcp::{CallResult, Content};
use serde_json::{Value, json};

/// Content items as `call` and `prompt` print them: text as is, an
/// embedded text resource under a one-line header naming its URI, anything
/// else as the placeholder line a model sees.
pub fn content_text(content: &[Content]) -> String {
    let mut out = String::new();
    for (index, item) in content.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        match item {
            Content::Resource {
                uri,
                mime_type,
                text: Some(text),
                ..
            } => {
                let _ = write!(
                    out,
                    "[embedded resource: {uri} ({})]\n{text}",
                    mime_type.as_deref().unwrap_or("unknown type")
                );
            }
            other => out.push_str(&CallResult::new(vec![other.clone()]).text()),
        }
    }
    out
}

/// `call`'s text output.
pub fn call_text(result: &CallResult) -> String {
    content_text(&result.content)
}

/// A content item as the protocol writes it.
pub fn content_json(content: &Content) -> Value {
    match content {
        Content::Text { text } => json!({"type": "text", "text": text}),
        Content::Image { data, mime_type } => {
            json!({"type": "image", "data": data, "mimeType": mime_type})
        }
        Content::Audio { data, mime_type } => {
            json!({"type": "audio", "data": data, "mimeType": mime_type})
        }
        Content::ResourceLink {
            uri,
            name,
            mime_type,
            size,
        } => {
            let mut link = json!({"type": "resource_link", "uri": uri});
            if let Some(name) = name {
                link["name"] = json!(name);
            }
            if let Some(mime_type) = mime_type {
                link["mimeType"] = json!(mime_type);
            }
            if let Some(size) = size {
                link["size"] = json!(size);
            }
            link
        }
        Content::Resource {
            uri,
            mime_type,
            text,
            blob,
        } => {
            let mut resource = json!({"uri": uri});
            if let Some(mime_type) = mime_type {
                resource["mimeType"] = json!(mime_type);
            }
            if let Some(text) = text {
                resource["text"] = json!(text);
            }
            if let Some(blob) = blob {
                resource["blob"] = json!(blob);
            }
            json!({"type": "resource", "resource": resource})
        }
        Content::Other { kind } => json!({"type": kind}),
        _ => json!({"type": "unknown"}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_embedded_text_resource_is_shown_under_its_uri() {
        let shown = content_text(&[
            Content::Text {
                text: "before".into(),
            },
            Content::Resource {
                uri: "demo://a".into(),
                mime_type: Some("text/plain".into()),
                text: Some("the text\nof a".into()),
                blob: None,
            },
            Content::Resource {
                uri: "demo://b".into(),
                mime_type: None,
                text: None,
                blob: Some("AAEC".into()),
            },
        ]);
        assert_eq!(
            shown,
            "before\n[embedded resource: demo://a (text/plain)]\nthe text\nof a\n\
             [embedded resource: demo://b (unknown type), 3 bytes not shown]"
        );
    }
}
