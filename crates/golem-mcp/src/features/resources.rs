//! Resources: listing them and their templates, reading them, and
//! subscribing to their changes (`resources/*`).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::sync::broadcast;

use crate::error::Error;
use crate::session::handle::{Client, WeakClient};
use crate::session::notifications::ServerNotification;
use crate::session::paging::Page;
use crate::session::protocol::Era;
use crate::wire::uri_template::{UriTemplate, UriTemplateError};

/// One resource a server offers, from `resources/list`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Resource {
    /// Its URI: what [`Client::read_resource`] takes.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Its human-friendly title, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it holds, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type, when known.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes (before base64), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Hints for the client (`audience`, `priority`, `lastModified`),
    /// verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Box<RawValue>>,
    /// Icons to show for it, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Box<RawValue>>,
    /// Its `_meta`, verbatim.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RawValue>>,
}

/// A family of resources a server offers, from `resources/templates/list`:
/// a URI template (RFC 6570) whose expansions can be read.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceTemplate {
    /// The URI template, e.g. `demo://resource/dynamic/text/{resourceId}`;
    /// [`template`](ResourceTemplate::template) parses it.
    #[serde(rename = "uriTemplate")]
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// Its human-friendly title, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What its resources hold, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of all its resources, when they share one.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Hints for the client, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Box<RawValue>>,
    /// Icons to show for it, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Box<RawValue>>,
    /// Its `_meta`, verbatim.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RawValue>>,
}

impl ResourceTemplate {
    /// The URI template, parsed: expand it into a URI to read, or list its
    /// variables to complete ([`Client::complete`]).
    pub fn template(&self) -> Result<UriTemplate, UriTemplateError> {
        UriTemplate::parse(&self.uri_template)
    }
}

/// What `resources/read` answered: the resource's contents (one item for
/// most resources; some servers answer with several parts).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReadResourceResult {
    /// The contents, in order.
    pub contents: Vec<ResourceContents>,
    /// The result's `_meta`, verbatim.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RawValue>>,
}

impl ReadResourceResult {
    /// The text of every text item, in order, joined by newlines; `None`
    /// when there is no text item.
    pub fn text(&self) -> Option<String> {
        let mut texts = self.contents.iter().filter_map(ResourceContents::text);
        let first = texts.next()?;
        Some(texts.fold(first.to_owned(), |mut all, text| {
            all.push('\n');
            all.push_str(text);
            all
        }))
    }
}

/// One item of a resource's contents: text, or binary data sent as base64.
///
/// The base64 is kept as sent (it is what the server said, and what a
/// program forwarding it needs); [`decode`](ResourceContents::decode)
/// turns it into bytes when they are wanted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text.
    Text {
        /// The URI this item is the contents of.
        uri: String,
        /// Its MIME type, when known.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// Binary data.
    Blob {
        /// The URI this item is the contents of.
        uri: String,
        /// Its MIME type, when known.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The data, base64-encoded (RFC 4648, with padding).
        blob: String,
    },
}

impl ResourceContents {
    /// The URI this item is the contents of.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }

    /// Its MIME type, when known.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text { mime_type, .. } | ResourceContents::Blob { mime_type, .. } => {
                mime_type.as_deref()
            }
        }
    }

    /// The text, for a text item.
    pub fn text(&self) -> Option<&str> {
        match self {
            ResourceContents::Text { text, .. } => Some(text),
            ResourceContents::Blob { .. } => None,
        }
    }

    /// The item's bytes: a blob's base64 decoded, or a text's UTF-8.
    ///
    /// A blob that is not valid base64 (standard alphabet, with or without
    /// padding) is [`Error::InvalidResponse`] naming the URI and where the
    /// data goes wrong.
    ///
    /// ```
    /// # use golem_mcp::ResourceContents;
    /// let item: ResourceContents =
    ///     serde_json::from_str(r#"{"uri":"demo://a","blob":"aGk="}"#).expect("an item");
    /// assert_eq!(item.decode().expect("base64"), b"hi");
    /// ```
    pub fn decode(&self) -> Result<Vec<u8>, Error> {
        use base64::Engine as _;
        match self {
            ResourceContents::Text { text, .. } => Ok(text.as_bytes().to_vec()),
            ResourceContents::Blob { uri, blob, .. } => {
                BASE64.decode(blob.trim_end()).map_err(|problem| {
                    Error::invalid_response(
                        &format!("resources/read {uri}"),
                        format!("the blob is not valid base64: {problem}"),
                    )
                })
            }
        }
    }
}

/// Standard base64, padding optional (servers differ), trailing bits
/// tolerated as most decoders do.
const BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// One page of `resources/list`.
#[derive(Deserialize)]
pub(crate) struct ResourcesPage {
    #[serde(default)]
    resources: Vec<Resource>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<String>,
}

impl Page for ResourcesPage {
    type Item = Resource;

    fn into_parts(self) -> (Vec<Resource>, Option<String>) {
        (self.resources, self.next_cursor)
    }
}

/// One page of `resources/templates/list`.
#[derive(Deserialize)]
pub(crate) struct TemplatesPage {
    #[serde(rename = "resourceTemplates", default)]
    templates: Vec<ResourceTemplate>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<String>,
}

impl Page for TemplatesPage {
    type Item = ResourceTemplate;

    fn into_parts(self) -> (Vec<ResourceTemplate>, Option<String>) {
        (self.templates, self.next_cursor)
    }
}

/// How long a modern resource subscription waits for the server to
/// acknowledge its listen.
const LISTEN_ACKNOWLEDGMENT_TIME: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Serialize)]
struct UriParams<'a> {
    uri: &'a str,
}

/// Updates of one subscribed resource, from
/// [`Client::subscribe_resource`].
///
/// # Why a handle per URI
///
/// `notifications/resources/updated` only says "this URI changed: read it
/// again". A handle per URI gives the code that subscribed exactly its
/// updates, without matching URIs in a loop over every notification; the
/// [`Client::notifications`] stream still carries them all
/// ([`ServerNotification::ResourceUpdated`]) for code that watches many.
/// The handle reads that same stream and keeps what names its URI, so the
/// inbound side has no table of subscriptions to keep in step.
///
/// An update is a signal, not data, so missing one must not go unnoticed:
/// when the handle falls so far behind that notifications were skipped
/// (see [`Client::notifications`]), [`updated`](ResourceSubscription::updated)
/// reports an update, since one may have been among them. Several updates
/// waiting are reported one by one (read again once and skip the rest if
/// you like).
///
/// Dropping the handle stops delivery here, but the server goes on
/// sending until told: call [`unsubscribe`](ResourceSubscription::unsubscribe)
/// (or [`Client::unsubscribe_resource`]). The server keeps one subscription
/// per URI per session, so unsubscribing ends the updates of every handle
/// on that URI.
///
/// The handle does not keep the client alive: like the
/// [`notifications`](Client::notifications) stream it reads, it ends when
/// the client is closed or its last clone dropped (a forgotten subscription
/// never keeps a server running).
#[derive(Debug)]
pub struct ResourceSubscription {
    client: WeakClient,
    uri: String,
    receiver: broadcast::Receiver<ServerNotification>,
}

impl ResourceSubscription {
    /// The subscribed URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Waits until the resource is updated. Returns `false` once the client
    /// is closed or the connection lost (no update will come).
    ///
    /// Cancel safe: an update not yet reported stays queued.
    pub async fn updated(&mut self) -> bool {
        loop {
            match self.receiver.recv().await {
                Ok(ServerNotification::ResourceUpdated { uri }) if uri == self.uri => return true,
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(skipped)) => {
                    tracing::debug!(
                        skipped,
                        uri = %self.uri,
                        "mcp: a resource subscription fell behind; reporting a possible update"
                    );
                    return true;
                }
                Err(broadcast::error::RecvError::Closed) => return false,
            }
        }
    }

    /// Tells the server to stop sending updates for this URI
    /// (`resources/unsubscribe`) and ends the handle.
    ///
    /// Cancel safe (see [`Client`]): if dropped, the request is abandoned
    /// and the server may go on sending updates.
    ///
    /// Fails with [`Error::Closed`] when the client is already gone.
    pub async fn unsubscribe(self) -> Result<(), Error> {
        match self.client.upgrade() {
            Some(client) => client.unsubscribe_resource(&self.uri).await,
            None => Err(Error::Closed {
                operation: format!("resources/unsubscribe {}", self.uri),
            }),
        }
    }
}

impl Client {
    /// Lists every resource the server offers (`resources/list`), following
    /// every cursor with the same guards as
    /// [`list_tools`](Client::list_tools).
    ///
    /// Cancel safe (see [`Client`]).
    ///
    /// ```no_run
    /// # async fn run(client: golem_mcp::Client) -> Result<(), golem_mcp::Error> {
    /// for resource in client.list_resources().await? {
    ///     println!("{} {}", resource.uri, resource.name);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        self.list_all::<ResourcesPage>("resources/list").await
    }

    /// Lists every resource template the server offers
    /// (`resources/templates/list`), following every cursor.
    ///
    /// Cancel safe (see [`Client`]).
    ///
    /// ```no_run
    /// # async fn run(client: golem_mcp::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// use std::collections::BTreeMap;
    /// let templates = client.list_resource_templates().await?;
    /// let text = templates.iter().find(|t| t.name == "Dynamic Text Resource").ok_or("none")?;
    /// let uri = text.template()?.expand(&BTreeMap::from([("resourceId", "3")]));
    /// println!("{}", client.read_resource(&uri).await?.text().unwrap_or_default());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        self.list_all::<TemplatesPage>("resources/templates/list")
            .await
    }

    /// Reads the resource at `uri` (`resources/read`).
    ///
    /// The answer is one message, so it is bounded by the transport's
    /// message limit (`StdioConfig::max_message_bytes`,
    /// `HttpConfig::max_message_bytes`). Blobs stay base64 until
    /// [`ResourceContents::decode`]. Each item names its own URI, which may
    /// differ from `uri`: the specification lets a read return several
    /// items (a directory's entries, say), and a server may normalize the
    /// URI asked for (one that answers with JavaScript's `new URL(uri).href`
    /// percent-encodes spaces), so the items are returned as the server gave
    /// them.
    ///
    /// Cancel safe (see [`Client`]).
    ///
    /// ```no_run
    /// # async fn run(client: golem_mcp::Client) -> Result<(), golem_mcp::Error> {
    /// let read = client.read_resource("demo://resource/static/document/architecture.md").await?;
    /// for item in &read.contents {
    ///     match item.text() {
    ///         Some(text) => println!("{text}"),
    ///         None => println!("{} bytes", item.decode()?.len()),
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        self.request("resources/read", Some(uri), UriParams { uri })
            .await
    }

    /// Subscribes to changes of the resource at `uri` and returns a handle
    /// that reports its `notifications/resources/updated` (see
    /// [`ResourceSubscription`] for why a handle). The handle listens before
    /// the request is sent, so no update after the server's answer is
    /// missed. It matches the updates' URI exactly: a server that names the
    /// resource differently in its notifications (normalized, say) is heard
    /// on [`Client::notifications`], which carries every update.
    ///
    /// The same in both eras (ADR 0023). A legacy server is sent
    /// `resources/subscribe` (it must declare `resources.subscribe`). A
    /// modern (2026-07-28) one has no such request: the URI is added to the
    /// client's `subscriptions/listen` (opened, or opened again with the
    /// URI, the old one ended once the new one is acknowledged), and this
    /// returns once the server has acknowledged it. A server whose
    /// acknowledgment leaves the URI out, or that does not serve
    /// `subscriptions/listen`, is [`Error::NotSupported`]; one that does not
    /// acknowledge within 10 s is [`Error::Timeout`].
    ///
    /// Cancel safe (see [`Client`]): if dropped, the request is abandoned;
    /// the server may or may not have subscribed.
    ///
    /// ```no_run
    /// # async fn run(client: golem_mcp::Client) -> Result<(), golem_mcp::Error> {
    /// let uri = "demo://resource/static/document/architecture.md";
    /// let mut subscription = client.subscribe_resource(uri).await?;
    /// while subscription.updated().await {
    ///     let fresh = client.read_resource(uri).await?;
    ///     # let _ = fresh;
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn subscribe_resource(&self, uri: &str) -> Result<ResourceSubscription, Error> {
        // Not `notifications()`: a resource subscription asks for its URI,
        // not for the list changes.
        let receiver = self.passive_notifications().into_receiver();
        match self.era("resources/subscribe")? {
            Era::Modern => self.listen_to_uri(uri, LISTEN_ACKNOWLEDGMENT_TIME).await?,
            Era::Legacy => {
                let _: serde::de::IgnoredAny = self
                    .request("resources/subscribe", Some(uri), UriParams { uri })
                    .await?;
                // A new generation is subscribed again (ADR 0026).
                self.remember_subscription(uri, true);
            }
        }
        Ok(ResourceSubscription {
            client: self.downgrade(),
            uri: uri.to_owned(),
            receiver,
        })
    }

    /// Tells the server to stop sending updates of the resource at `uri`:
    /// `resources/unsubscribe` in the legacy era; in the modern one the
    /// client's listen is opened again without the URI (or ended, when
    /// nothing else is wanted), and this returns at once.
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), Error> {
        if self.era("resources/unsubscribe")? == Era::Modern {
            return self.stop_listening_to_uri(uri);
        }
        self.remember_subscription(uri, false);
        let _: serde::de::IgnoredAny = self
            .request("resources/unsubscribe", Some(uri), UriParams { uri })
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contents_are_text_or_blob_and_blobs_decode_on_request() {
        let read: ReadResourceResult = serde_json::from_str(
            r#"{"contents":[
                {"uri":"x:a","mimeType":"text/plain","text":"hello"},
                {"uri":"x:a","blob":"AAEC/w=="},
                {"uri":"x:a","blob":"AAEC/w"}
            ]}"#,
        )
        .expect("valid");
        assert_eq!(read.contents[0].text(), Some("hello"));
        assert_eq!(read.contents[0].mime_type(), Some("text/plain"));
        assert_eq!(read.contents[1].text(), None);
        assert_eq!(read.contents[1].decode().expect("base64"), [0, 1, 2, 255]);
        assert_eq!(read.contents[2].decode().expect("unpadded"), [0, 1, 2, 255]);
        assert_eq!(read.text().as_deref(), Some("hello"));
    }

    #[test]
    fn a_blob_that_is_not_base64_is_an_error_naming_the_uri() {
        let item: ResourceContents =
            serde_json::from_str(r#"{"uri":"x:bad","blob":"not base64!"}"#).expect("an item");
        let error = item.decode().expect_err("not base64");
        assert!(matches!(error, Error::InvalidResponse { .. }), "{error:?}");
        let message = error.to_string();
        assert!(
            message.starts_with("mcp: resources/read x:bad: ") && message.contains("base64"),
            "{message}"
        );
    }

    #[test]
    fn an_item_with_neither_text_nor_blob_is_refused() {
        let error = serde_json::from_str::<ResourceContents>(r#"{"uri":"x:a"}"#);
        assert!(error.is_err());
    }
}
