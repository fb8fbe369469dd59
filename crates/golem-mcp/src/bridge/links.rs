//! What the bridge shows a model for a `resource_link`, when the
//! application asked for linked resources to be read inline
//! ([`BridgeConfig::read_resource_links`](crate::BridgeConfig::read_resource_links)):
//! text contents inline, binary ones as placeholders.

use crate::features::resources::ResourceContents;
use crate::session::handle::Client;

/// How many links of one result are read; the rest show as placeholders,
/// so that a result cannot make the bridge read without end.
pub(crate) const MAX_LINKS_READ: usize = 10;
/// How much of one linked resource's text is shown (the model's context
/// is the limit that matters; the message limit bounds the read itself).
const MAX_TEXT_SHOWN: usize = 256 * 1024;

/// Appends a linked resource as the model sees it: a header line naming it,
/// then the text of each of its text contents (at most
/// [`MAX_TEXT_SHOWN`] bytes of each, after a line naming the item when its
/// URI is not the link's); binary contents and a
/// failed read are one placeholder line each (a read that fails is not the
/// call's failure).
pub(crate) async fn render_read(client: &Client, uri: &str, out: &mut String) {
    use std::fmt::Write as _;
    // Writing to a String cannot fail.
    let _ = match client.read_resource(uri).await {
        Err(error) => write!(out, "[resource link: {uri} (could not be read: {error})]"),
        Ok(read) if read.contents.is_empty() => write!(out, "[resource link: {uri} (empty)]"),
        Ok(read) => {
            let _ = write!(out, "[resource link: {uri}]");
            for contents in &read.contents {
                // A read may answer with several items (a directory's
                // entries): each text under its own name, when it has one.
                if contents.uri() != uri && matches!(contents, ResourceContents::Text { .. }) {
                    let _ = write!(out, "\n[resource: {}]", contents.uri());
                }
                let mime_type = contents.mime_type().unwrap_or("unknown type");
                let _ = match contents {
                    ResourceContents::Text { text, .. } if text.len() > MAX_TEXT_SHOWN => {
                        let mut end = MAX_TEXT_SHOWN;
                        while !text.is_char_boundary(end) {
                            end -= 1;
                        }
                        write!(out, "\n{}… ({} bytes in all)", &text[..end], text.len())
                    }
                    ResourceContents::Text { text, .. } => write!(out, "\n{text}"),
                    ResourceContents::Blob { blob, .. } => write!(
                        out,
                        "\n[binary resource: {} ({mime_type}), {} base64 characters not shown]",
                        contents.uri(),
                        blob.len()
                    ),
                };
            }
            Ok(())
        }
    };
}
