//! How content items read: `call`'s text (an embedded text resource under
//! a header naming its URI, a binary item `call --output` saved as a line
//! naming its file, anything else as the placeholder line a model sees)
//! and a content item as the protocol writes it, for `prompt --json`. It
//! knows nothing of the client or of where the text goes.

use std::fmt::Write as _;
use std::path::PathBuf;

use golem_mcp::{CallResult, Content};
use serde_json::{Value, json};

/// Where `call --output` wrote the bytes of one content item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    /// The item's index in the result's content list.
    pub index: usize,
    /// The file written.
    pub path: PathBuf,
    /// How many bytes it holds (the item's data, decoded).
    pub bytes: usize,
}

/// Content items as `call` and `prompt` print them: text as is, an
/// embedded text resource under a one-line header naming its URI, anything
/// else as the placeholder line a model sees.
pub fn content_text(content: &[Content]) -> String {
    content_text_saved(content, &[])
}

/// [`content_text`], with the line of each item in `saved` naming the file
/// its bytes were written to instead of the placeholder.
fn content_text_saved(content: &[Content], saved: &[Saved]) -> String {
    let mut out = String::new();
    for (index, item) in content.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        match (item, saved.iter().find(|saved| saved.index == index)) {
            (item, Some(saved)) => out.push_str(&saved_line(item, saved)),
            (
                Content::Resource {
                    uri,
                    mime_type,
                    text: Some(text),
                    ..
                },
                None,
            ) => {
                let _ = write!(
                    out,
                    "[embedded resource: {uri} ({})]\n{text}",
                    mime_type.as_deref().unwrap_or("unknown type")
                );
            }
            (other, None) => out.push_str(&CallResult::new(vec![other.clone()]).text()),
        }
    }
    out
}

/// The line of a binary item saved to a file: what it is, its size and the
/// file, e.g. `[image: image/png, 4033 bytes saved to out/tiny-1.png]`.
fn saved_line(item: &Content, saved: &Saved) -> String {
    let what = match item {
        Content::Image { mime_type, .. } => format!("image: {mime_type}"),
        Content::Audio { mime_type, .. } => format!("audio: {mime_type}"),
        Content::Resource { uri, mime_type, .. } => format!(
            "embedded resource: {uri} ({})",
            mime_type.as_deref().unwrap_or("unknown type")
        ),
        _ => "content".to_owned(),
    };
    format!(
        "[{what}, {} bytes saved to {}]",
        saved.bytes,
        saved.path.display()
    )
}

/// `call`'s text output; the items in `saved` (`call --output`) name
/// their files.
pub fn call_text(result: &CallResult, saved: &[Saved]) -> String {
    content_text_saved(&result.content, saved)
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

    #[test]
    fn a_saved_item_names_its_file_instead_of_the_placeholder() {
        let content = [
            Content::Image {
                data: "AAEC".into(),
                mime_type: "image/png".into(),
            },
            Content::Audio {
                data: "AAEC".into(),
                mime_type: "audio/wav".into(),
            },
            Content::Resource {
                uri: "demo://b".into(),
                mime_type: None,
                text: None,
                blob: Some("AAEC".into()),
            },
        ];
        let saved = |index: usize, name: &str| Saved {
            index,
            path: PathBuf::from("out").join(name),
            bytes: 3,
        };
        let result = CallResult::new(content.to_vec());
        assert_eq!(
            call_text(&result, &[saved(1, "t-1.wav"), saved(2, "t-2.bin")]),
            "[image: image/png, 3 bytes not shown]\n\
             [audio: audio/wav, 3 bytes saved to out/t-1.wav]\n\
             [embedded resource: demo://b (unknown type), 3 bytes saved to out/t-2.bin]"
        );
    }
}
