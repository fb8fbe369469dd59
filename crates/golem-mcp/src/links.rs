//! What the bridge shows a model for a `resource_link`, when the
//! application asked for linked resources to be read inline
//! ([`BridgeConfig::read_resource_links`](crate::BridgeConfig::read_resource_links)).
//!
//! A minimal `resources/read` of its own, private to the bridge: text
//! contents inline, binary ones as placeholders.

use serde::{Deserialize, Serialize};

use crate::client::Client;

#[derive(Serialize)]
struct ReadParams<'a> {
    uri: &'a str,
}

#[derive(Deserialize)]
struct ReadResult {
    #[serde(default)]
    contents: Vec<Contents>,
}

#[derive(Deserialize)]
struct Contents {
    uri: String,
    #[serde(rename = "mimeType", default)]
    mime_type: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    blob: Option<String>,
}

/// Appends a linked resource as the model sees it: a header line naming it,
/// then the text of each of its text contents; binary contents and a
/// failed read are one placeholder line each (a read that fails is not the
/// call's failure).
pub(crate) async fn render_read(client: &Client, uri: &str, out: &mut String) {
    use std::fmt::Write as _;
    let read: Result<ReadResult, _> = client
        .request("resources/read", Some(uri), ReadParams { uri })
        .await;
    // Writing to a String cannot fail.
    let _ = match read {
        Err(error) => write!(out, "[resource link: {uri} (could not be read: {error})]"),
        Ok(read) if read.contents.is_empty() => write!(out, "[resource link: {uri} (empty)]"),
        Ok(read) => {
            let _ = write!(out, "[resource link: {uri}]");
            for contents in read.contents {
                let mime_type = contents.mime_type.as_deref().unwrap_or("unknown type");
                let _ = match (contents.text, contents.blob) {
                    (Some(text), _) => write!(out, "\n{text}"),
                    (None, Some(blob)) => write!(
                        out,
                        "\n[binary resource: {} ({mime_type}), {} base64 characters not shown]",
                        contents.uri,
                        blob.len()
                    ),
                    (None, None) => write!(
                        out,
                        "\n[resource: {} ({mime_type}), no contents]",
                        contents.uri
                    ),
                };
            }
            Ok(())
        }
    };
}
