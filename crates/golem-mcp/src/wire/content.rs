//! The content items of tool results and prompt messages, and how they are
//! decoded and shown to a model.

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// One content item of a tool result.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// The base64 data.
        data: String,
        /// Its MIME type, e.g. `image/png`.
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// The base64 data.
        data: String,
        /// Its MIME type, e.g. `audio/wav`.
        mime_type: String,
    },
    /// A link to a resource the client may read.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name, when given.
        name: Option<String>,
        /// Its MIME type, when given.
        mime_type: Option<String>,
        /// Its size in bytes, when given.
        size: Option<u64>,
    },
    /// A resource embedded in the result.
    Resource {
        /// The resource's URI.
        uri: String,
        /// Its MIME type, when given.
        mime_type: Option<String>,
        /// Its text, for a text resource.
        text: Option<String>,
        /// Its base64 data, for a binary resource.
        blob: Option<String>,
    },
    /// A content type this client does not know (from a newer protocol
    /// revision, or an extension).
    Other {
        /// The item's `type`.
        kind: String,
    },
}

impl Content {
    /// Appends this item as the model sees it: text as is, anything else as
    /// a one-line placeholder.
    pub(crate) fn render(&self, out: &mut String) {
        use std::fmt::Write as _;
        // Writing to a String cannot fail.
        let _ = match self {
            Content::Text { text } => {
                out.push_str(text);
                Ok(())
            }
            Content::Image { data, mime_type } => {
                write!(
                    out,
                    "[image: {mime_type}, {} bytes not shown]",
                    base64_decoded_len(data)
                )
            }
            Content::Audio { data, mime_type } => {
                write!(
                    out,
                    "[audio: {mime_type}, {} bytes not shown]",
                    base64_decoded_len(data)
                )
            }
            Content::ResourceLink { uri, mime_type, .. } => match mime_type {
                Some(mime_type) => write!(out, "[resource link: {uri} ({mime_type})]"),
                None => write!(out, "[resource link: {uri}]"),
            },
            Content::Resource {
                uri,
                mime_type,
                text,
                blob,
            } => {
                let mime_type = mime_type.as_deref().unwrap_or("unknown type");
                match (text, blob) {
                    (Some(text), _) => write!(
                        out,
                        "[embedded resource: {uri} ({mime_type}), {} bytes of text not shown]",
                        text.len()
                    ),
                    (None, Some(blob)) => write!(
                        out,
                        "[embedded resource: {uri} ({mime_type}), {} bytes not shown]",
                        base64_decoded_len(blob)
                    ),
                    (None, None) => write!(out, "[embedded resource: {uri} ({mime_type})]"),
                }
            }
            Content::Other { kind } => {
                write!(out, "[content of unsupported type {kind:?} not shown]")
            }
        };
    }
}

/// The size of the data that base64 text encodes, without decoding it.
pub(crate) fn base64_decoded_len(data: &str) -> usize {
    let significant = data
        .bytes()
        .filter(|byte| !byte.is_ascii_whitespace())
        .count();
    let padding = data
        .bytes()
        .rev()
        .take_while(|byte| *byte == b'=' || byte.is_ascii_whitespace())
        .filter(|byte| *byte == b'=')
        .count();
    (significant / 4 * 3 + (significant % 4).saturating_sub(1)).saturating_sub(padding)
}

/// Content items are decoded by hand, in one pass over the item's members:
/// the `type` is matched without allocating, a text item costs one `String`
/// (its text), and no intermediate struct is built. Every call result goes
/// through here, so it is on every tool call's path.
///
/// The payload fields (`text`, `data`) must be strings (or `null`) in any
/// item. The small fields are read leniently: a content type this client
/// does not know may use those names for other things, and must not fail
/// the whole result. Unknown members are skipped; a member given twice
/// keeps its last value.
impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ContentVisitor)
    }
}

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Content;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a content item (a JSON object with a \"type\")")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Content, M::Error> {
        let mut fields = ContentFields::default();
        while let Some(member) = map.next_key::<Member>()? {
            match member {
                Member::Type => fields.kind = Some(map.next_value()?),
                Member::Text => fields.text = map.next_value()?,
                Member::Data => fields.data = map.next_value()?,
                Member::MimeType => fields.mime_type = map.next_value::<Lenient<_>>()?.0,
                Member::Uri => fields.uri = map.next_value::<Lenient<_>>()?.0,
                Member::Name => fields.name = map.next_value::<Lenient<_>>()?.0,
                Member::Size => fields.size = map.next_value::<Lenient<_>>()?.0,
                Member::Resource => fields.resource = map.next_value::<Lenient<_>>()?.0,
                Member::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        fields.into_content()
    }
}

/// Every member any content type has, as read from one item.
#[derive(Default)]
struct ContentFields {
    kind: Option<ContentType>,
    text: Option<String>,
    data: Option<String>,
    mime_type: Option<String>,
    uri: Option<String>,
    name: Option<String>,
    size: Option<u64>,
    resource: Option<ResourceFields>,
}

impl ContentFields {
    fn into_content<E: de::Error>(self) -> Result<Content, E> {
        let kind = self.kind.ok_or_else(|| E::missing_field("type"))?;
        let missing = |field: &str| {
            E::custom(format_args!(
                "a {:?} content item without its {field:?} field",
                kind.name()
            ))
        };
        Ok(match kind {
            ContentType::Text => Content::Text {
                text: self.text.ok_or_else(|| missing("text"))?,
            },
            ContentType::Image => Content::Image {
                data: self.data.ok_or_else(|| missing("data"))?,
                mime_type: self.mime_type.ok_or_else(|| missing("mimeType"))?,
            },
            ContentType::Audio => Content::Audio {
                data: self.data.ok_or_else(|| missing("data"))?,
                mime_type: self.mime_type.ok_or_else(|| missing("mimeType"))?,
            },
            ContentType::ResourceLink => Content::ResourceLink {
                uri: self.uri.ok_or_else(|| missing("uri"))?,
                name: self.name,
                mime_type: self.mime_type,
                size: self.size,
            },
            ContentType::Resource => {
                let resource = self.resource.ok_or_else(|| missing("resource"))?;
                Content::Resource {
                    uri: resource.uri,
                    mime_type: resource.mime_type,
                    text: resource.text,
                    blob: resource.blob,
                }
            }
            ContentType::Other(kind) => Content::Other { kind },
        })
    }
}

/// The members of a content item this client reads.
enum Member {
    Type,
    Text,
    Data,
    MimeType,
    Uri,
    Name,
    Size,
    Resource,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(MemberVisitor)
    }
}

struct MemberVisitor;

impl Visitor<'_> for MemberVisitor {
    type Value = Member;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Member, E> {
        Ok(match name {
            "type" => Member::Type,
            "text" => Member::Text,
            "data" => Member::Data,
            "mimeType" => Member::MimeType,
            "uri" => Member::Uri,
            "name" => Member::Name,
            "size" => Member::Size,
            "resource" => Member::Resource,
            _ => Member::Other,
        })
    }
}

/// A content item's `type`: the known ones without an allocation.
enum ContentType {
    Text,
    Image,
    Audio,
    ResourceLink,
    Resource,
    Other(String),
}

impl ContentType {
    fn name(&self) -> &str {
        match self {
            ContentType::Text => "text",
            ContentType::Image => "image",
            ContentType::Audio => "audio",
            ContentType::ResourceLink => "resource_link",
            ContentType::Resource => "resource",
            ContentType::Other(kind) => kind,
        }
    }
}

impl<'de> Deserialize<'de> for ContentType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(KindVisitor)
    }
}

struct KindVisitor;

impl Visitor<'_> for KindVisitor {
    type Value = ContentType;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a content type name")
    }

    fn visit_str<E: de::Error>(self, kind: &str) -> Result<ContentType, E> {
        Ok(match kind {
            "text" => ContentType::Text,
            "image" => ContentType::Image,
            "audio" => ContentType::Audio,
            "resource_link" => ContentType::ResourceLink,
            "resource" => ContentType::Resource,
            other => ContentType::Other(other.to_owned()),
        })
    }
}

/// Any JSON value, kept only if it has the type `T` expects.
struct Lenient<T>(Option<T>);

impl<'de, T: de::DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        Ok(Lenient(serde_json::from_value(value).ok()))
    }
}

/// The `resource` member of an embedded resource.
#[derive(Deserialize)]
struct ResourceFields {
    uri: String,
    #[serde(rename = "mimeType", default)]
    mime_type: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    blob: Option<String>,
}

/// Who a message is from: the user or the model (sampling and prompt
/// messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (or the server speaking for it).
    User,
    /// The model.
    Assistant,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(json: &str) -> Result<Content, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn members_may_come_in_any_order_and_unknown_ones_are_skipped() {
        assert_eq!(
            item(r#"{"annotations":{"audience":["user"]},"text":"hi","_meta":{},"type":"text"}"#)
                .expect("a text item"),
            Content::Text { text: "hi".into() }
        );
        assert_eq!(
            item(r#"{"mimeType":"image/png","type":"image","data":"AA=="}"#).expect("an image"),
            Content::Image {
                data: "AA==".into(),
                mime_type: "image/png".into()
            }
        );
    }

    #[test]
    fn escaped_member_names_and_types_are_read() {
        assert_eq!(
            item(r#"{"\u0074ype":"t\u0065xt","text":"a\nb"}"#).expect("a text item"),
            Content::Text {
                text: "a\nb".into()
            }
        );
    }

    #[test]
    fn an_item_without_a_type_or_with_a_payload_of_the_wrong_type_is_an_error() {
        let error = item(r#"{"text":"hi"}"#).expect_err("no type");
        assert!(
            error.to_string().contains("missing field `type`"),
            "{error}"
        );
        let error = item(r#"{"type":"text","text":7}"#).expect_err("a number as text");
        assert!(error.to_string().contains("invalid type"), "{error}");
        let error = item(r#"{"type":"text"}"#).expect_err("no text");
        assert!(
            error
                .to_string()
                .contains(r#"a "text" content item without its "text" field"#),
            "{error}"
        );
        let error = item(r#"["text","hi"]"#).expect_err("not an object");
        assert!(error.to_string().contains("a content item"), "{error}");
    }

    #[test]
    fn a_null_payload_counts_as_missing_and_the_last_duplicate_wins() {
        let error = item(r#"{"type":"text","text":null}"#).expect_err("null text");
        assert!(
            error.to_string().contains(r#"without its "text" field"#),
            "{error}"
        );
        assert_eq!(
            item(r#"{"type":"hologram","type":"text","text":"a","text":"b"}"#).expect("a text"),
            Content::Text { text: "b".into() }
        );
    }

    #[test]
    fn an_unknown_type_keeps_its_name() {
        assert_eq!(
            item(r#"{"type":"hologram","size":"big"}"#).expect("an unknown item"),
            Content::Other {
                kind: "hologram".into()
            }
        );
    }

    #[test]
    fn base64_sizes_are_computed_without_decoding() {
        assert_eq!(base64_decoded_len(""), 0);
        assert_eq!(base64_decoded_len("AA=="), 1);
        assert_eq!(base64_decoded_len("AAA="), 2);
        assert_eq!(base64_decoded_len("AAAA"), 3);
        assert_eq!(base64_decoded_len("AAAAAA"), 4);
    }
}
