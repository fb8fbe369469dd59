//! `elicitation/create`: a server asks the user for input, through a form
//! (a restricted JSON Schema of flat fields) or by sending them to a URL.
//!
//! The form's schema is checked against the spec's restricted subset before
//! the application sees it, and the fields come in the server's order.
//! Defaults the server gave are applied to fields an accepted answer leaves
//! out (SEP-1034); an answer that does not fit the form is not sent.

use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a server asks the user for.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitationRequest {
    /// Fill in a form.
    Form {
        /// What the server says to the user.
        message: String,
        /// The fields, checked.
        form: Form,
    },
    /// Open a URL (an `http` or `https` one: any other is refused before
    /// the application sees it) and come back when done; the server then
    /// sends `notifications/elicitation/complete` with the same id.
    Url {
        /// What the server says to the user.
        message: String,
        /// The elicitation's id.
        elicitation_id: String,
        /// The URL to open.
        url: String,
    },
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitationResponse {
    /// The user submitted the form (for URL mode: agreed to go); the values
    /// by field name (for URL mode: empty).
    Accept(Map<String, Value>),
    /// The user said no.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

/// A form: flat fields of primitive types, in the server's order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Form {
    /// The fields.
    pub fields: Vec<Field>,
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Field {
    /// The property name the answer uses.
    pub name: String,
    /// A short label, when given.
    pub title: Option<String>,
    /// A longer explanation, when given.
    pub description: Option<String>,
    /// Whether the answer must contain it.
    pub required: bool,
    /// What it holds.
    pub kind: FieldKind,
    /// The value to use when the user leaves it out, when given.
    pub default: Option<Value>,
}

/// What a field holds.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FieldKind {
    /// Text, optionally of a format (`email`, `uri`, `date`, `date-time`).
    String {
        /// The shortest length allowed.
        min_length: Option<u64>,
        /// The longest length allowed.
        max_length: Option<u64>,
        /// The format, when given.
        format: Option<String>,
    },
    /// A number; `integer` when only whole numbers are allowed.
    Number {
        /// Whether only whole numbers are allowed.
        integer: bool,
        /// The smallest value allowed.
        minimum: Option<f64>,
        /// The largest value allowed.
        maximum: Option<f64>,
    },
    /// Yes or no.
    Boolean,
    /// One of a list of choices.
    Choice {
        /// The choices.
        choices: Vec<Choice>,
    },
    /// Several of a list of choices.
    MultiChoice {
        /// The choices.
        choices: Vec<Choice>,
        /// The fewest to pick.
        min_items: Option<u64>,
        /// The most to pick.
        max_items: Option<u64>,
    },
}

/// One choice of an enumeration.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Choice {
    /// The value the answer carries.
    pub value: String,
    /// What the user sees, when it differs from the value.
    pub title: Option<String>,
}

impl Form {
    /// Fills in the defaults of fields `content` leaves out, then checks
    /// that it fits the form: required fields present, values of the right
    /// type and within bounds, no unknown field. The problem, naming the
    /// field, if not.
    pub fn complete(&self, content: &mut Map<String, Value>) -> Result<(), String> {
        for field in &self.fields {
            if !content.contains_key(&field.name)
                && let Some(default) = &field.default
            {
                content.insert(field.name.clone(), default.clone());
            }
        }
        for name in content.keys() {
            if !self.fields.iter().any(|field| &field.name == name) {
                return Err(format!("{name:?} is not a field of the form"));
            }
        }
        for field in &self.fields {
            match content.get(&field.name) {
                None if field.required => {
                    return Err(format!("{:?} is required", field.name));
                }
                None => {}
                Some(value) => field
                    .check(value)
                    .map_err(|problem| format!("{:?}: {problem}", field.name))?,
            }
        }
        Ok(())
    }
}

impl Field {
    /// Checks one value against the field.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        match (&self.kind, value) {
            (
                FieldKind::String {
                    min_length,
                    max_length,
                    format,
                },
                Value::String(text),
            ) => {
                let length = text.chars().count() as u64;
                if min_length.is_some_and(|min| length < min) {
                    return Err(format!("at least {} characters", min_length.unwrap_or(0)));
                }
                if max_length.is_some_and(|max| length > max) {
                    return Err(format!("at most {} characters", max_length.unwrap_or(0)));
                }
                match format.as_deref() {
                    Some(format) if !fits_format(format, text) => {
                        Err(format!("a value of format {format}"))
                    }
                    _ => Ok(()),
                }
            }
            (
                FieldKind::Number {
                    integer,
                    minimum,
                    maximum,
                },
                Value::Number(number),
            ) => {
                let Some(number) = number.as_f64() else {
                    return Err("not a number".into());
                };
                if *integer && number.fract() != 0.0 {
                    return Err("a whole number".into());
                }
                if minimum.is_some_and(|min| number < min)
                    || maximum.is_some_and(|max| number > max)
                {
                    return Err(format!(
                        "between {} and {}",
                        minimum.map_or("-∞".into(), |m| m.to_string()),
                        maximum.map_or("∞".into(), |m| m.to_string())
                    ));
                }
                Ok(())
            }
            (FieldKind::Boolean, Value::Bool(_)) => Ok(()),
            (FieldKind::Choice { choices }, Value::String(text)) => {
                match choices.iter().any(|choice| &choice.value == text) {
                    true => Ok(()),
                    false => Err(format!("one of {}", list(choices))),
                }
            }
            (
                FieldKind::MultiChoice {
                    choices,
                    min_items,
                    max_items,
                },
                Value::Array(items),
            ) => {
                for (index, item) in items.iter().enumerate() {
                    if items[..index].contains(item) {
                        return Err("each choice once".into());
                    }
                    let known = item
                        .as_str()
                        .is_some_and(|text| choices.iter().any(|choice| choice.value == text));
                    if !known {
                        return Err(format!("each item one of {}", list(choices)));
                    }
                }
                let count = items.len() as u64;
                if min_items.is_some_and(|min| count < min)
                    || max_items.is_some_and(|max| count > max)
                {
                    return Err("a different number of choices".into());
                }
                Ok(())
            }
            (kind, _) => Err(format!("expected {}", kind.describe())),
        }
    }
}

impl FieldKind {
    fn describe(&self) -> &'static str {
        match self {
            FieldKind::String { .. } => "a string",
            FieldKind::Number { integer: true, .. } => "an integer",
            FieldKind::Number { .. } => "a number",
            FieldKind::Boolean => "true or false",
            FieldKind::Choice { .. } => "one of the choices",
            FieldKind::MultiChoice { .. } => "a list of the choices",
        }
    }
}

/// Whether `text` has the shape of `format` (the four the spec allows).
/// A plausibility check for answers, not a full parser: the server
/// validates too.
fn fits_format(format: &str, text: &str) -> bool {
    let digits =
        |part: &str, count: usize| part.len() == count && part.bytes().all(|b| b.is_ascii_digit());
    let date = |text: &str| {
        let mut parts = text.splitn(3, '-');
        matches!(
            (parts.next(), parts.next(), parts.next()),
            (Some(year), Some(month), Some(day)) if digits(year, 4) && digits(month, 2) && digits(day, 2)
        )
    };
    match format {
        "email" => text.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && domain.contains('.') && !text.contains(char::is_whitespace)
        }),
        "uri" => text.split_once(':').is_some_and(|(scheme, rest)| {
            !rest.is_empty()
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        }),
        "date" => date(text),
        "date-time" => text
            .split_once(['T', 't', ' '])
            .is_some_and(|(day, time)| date(day) && time.len() >= 8 && time.as_bytes()[2] == b':'),
        _ => true,
    }
}

fn list(choices: &[Choice]) -> String {
    let values: Vec<&str> = choices.iter().map(|choice| choice.value.as_str()).collect();
    values.join(", ")
}

/// Why a request could not be read: the JSON-RPC `-32602` message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unreadable(pub(crate) String);

/// The request's parameters as sent.
#[derive(Deserialize)]
struct Wire {
    #[serde(default)]
    mode: Option<String>,
    message: String,
    #[serde(rename = "requestedSchema", default)]
    requested_schema: Option<SchemaWire>,
    #[serde(rename = "elicitationId", default)]
    elicitation_id: Option<String>,
    #[serde(default)]
    url: Option<String>,
}

#[derive(Deserialize)]
struct SchemaWire {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default, deserialize_with = "ordered")]
    properties: Vec<(String, Value)>,
    #[serde(default)]
    required: Vec<String>,
}

/// A JSON object's members in document order (serde_json's `Map` sorts
/// them, and a form's fields are meant to be shown in order).
fn ordered<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<(String, Value)>, D::Error> {
    struct Members;
    impl<'de> Visitor<'de> for Members {
        type Value = Vec<(String, Value)>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object of property schemas")
        }
        fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
            let mut members = Vec::new();
            while let Some((name, schema)) = map.next_entry::<String, Value>()? {
                members.push((name, schema));
            }
            Ok(members)
        }
    }
    deserializer.deserialize_map(Members)
}

impl ElicitationRequest {
    /// Reads and checks the parameters of an `elicitation/create` request,
    /// as JSON text (the form's fields keep the text's order): what the
    /// client does before a handler sees the request, for programs and
    /// tests that build one themselves. The problem, worded for the server,
    /// if the request cannot be answered (a schema outside the restricted
    /// subset, a URL that is not http or https).
    pub fn from_params(params: &str) -> Result<Self, String> {
        Self::parse(params).map_err(|problem| problem.0)
    }

    /// Reads and checks a request's parameters.
    pub(crate) fn parse(params: &str) -> Result<Self, Unreadable> {
        let wire: Wire = serde_json::from_str(params)
            .map_err(|error| Unreadable(format!("invalid elicitation request: {error}")))?;
        match wire.mode.as_deref() {
            None | Some("form") => {
                let schema = wire.requested_schema.ok_or_else(|| {
                    Unreadable("a form elicitation needs a requestedSchema".into())
                })?;
                Ok(ElicitationRequest::Form {
                    message: wire.message,
                    form: Form::from_wire(schema)?,
                })
            }
            Some("url") => {
                let (Some(elicitation_id), Some(url)) = (wire.elicitation_id, wire.url) else {
                    return Err(Unreadable(
                        "a URL elicitation needs an elicitationId and a url".into(),
                    ));
                };
                let scheme = url
                    .split_once(':')
                    .map(|(scheme, _)| scheme.to_ascii_lowercase());
                if !matches!(scheme.as_deref(), Some("http" | "https")) {
                    return Err(Unreadable(
                        "refused: a URL elicitation may only send the user to an http or https URL"
                            .into(),
                    ));
                }
                Ok(ElicitationRequest::Url {
                    message: wire.message,
                    elicitation_id,
                    url,
                })
            }
            Some(other) => Err(Unreadable(format!("unknown elicitation mode {other:?}"))),
        }
    }
}

impl Form {
    fn from_wire(schema: SchemaWire) -> Result<Self, Unreadable> {
        if schema.kind.as_deref() != Some("object") {
            return Err(Unreadable(
                "the requested schema must be of type \"object\"".into(),
            ));
        }
        let mut fields = Vec::with_capacity(schema.properties.len());
        for (name, property) in schema.properties {
            let required = schema.required.contains(&name);
            let field = Field::from_wire(&name, &property, required).map_err(|problem| {
                Unreadable(format!(
                    "the requested schema is outside the restricted subset elicitation allows: property {name:?} {problem}"
                ))
            })?;
            fields.push(field);
        }
        Ok(Form { fields })
    }
}

impl Field {
    fn from_wire(name: &str, schema: &Value, required: bool) -> Result<Self, String> {
        let Some(object) = schema.as_object() else {
            return Err("is not a schema object".into());
        };
        let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
        let number = |key: &str| object.get(key).and_then(Value::as_f64);
        // A count written as a float (`1.0`) is still a count.
        let count = |key: &str| {
            let value = object.get(key)?;
            value.as_u64().or_else(|| {
                value
                    .as_f64()
                    .filter(|number| number.fract() == 0.0 && *number >= 0.0)
                    .map(|number| number as u64)
            })
        };
        let kind = match object.get("type").and_then(Value::as_str) {
            Some("string") => match (object.get("enum"), object.get("oneOf")) {
                (Some(values), _) => FieldKind::Choice {
                    choices: plain_choices(values, object.get("enumNames"))?,
                },
                (None, Some(options)) => FieldKind::Choice {
                    choices: titled_choices(options)?,
                },
                (None, None) => {
                    let format = text("format");
                    if let Some(format) = &format
                        && !matches!(format.as_str(), "email" | "uri" | "date" | "date-time")
                    {
                        return Err(format!("has an unsupported format {format:?}"));
                    }
                    FieldKind::String {
                        min_length: count("minLength"),
                        max_length: count("maxLength"),
                        format,
                    }
                }
            },
            Some(kind @ ("number" | "integer")) => FieldKind::Number {
                integer: kind == "integer",
                minimum: number("minimum"),
                maximum: number("maximum"),
            },
            Some("boolean") => FieldKind::Boolean,
            Some("array") => {
                let items = object.get("items").and_then(Value::as_object);
                let choices = match items {
                    Some(items) => match (items.get("enum"), items.get("anyOf")) {
                        (Some(values), _) => plain_choices(values, None)?,
                        (None, Some(options)) => titled_choices(options)?,
                        (None, None) => return Err("is an array without enumerated items".into()),
                    },
                    None => return Err("is an array without items".into()),
                };
                FieldKind::MultiChoice {
                    choices,
                    min_items: count("minItems"),
                    max_items: count("maxItems"),
                }
            }
            Some(other) => return Err(format!("has the unsupported type {other:?}")),
            None => return Err("has no type".into()),
        };
        let field = Field {
            name: name.to_owned(),
            title: text("title"),
            description: text("description"),
            required,
            kind,
            default: object.get("default").cloned(),
        };
        if let Some(default) = &field.default {
            field
                .check(default)
                .map_err(|problem| format!("has a default that does not fit it: {problem}"))?;
        }
        Ok(field)
    }
}

fn plain_choices(values: &Value, names: Option<&Value>) -> Result<Vec<Choice>, String> {
    let Some(values) = values.as_array() else {
        return Err("has an enum that is not a list".into());
    };
    let names = names.and_then(Value::as_array);
    values
        .iter()
        .enumerate()
        .map(|(index, value)| {
            let value = value.as_str().ok_or("has a non-string enum value")?;
            let title = names
                .and_then(|names| names.get(index))
                .and_then(Value::as_str)
                .map(str::to_owned);
            Ok(Choice {
                value: value.to_owned(),
                title,
            })
        })
        .collect()
}

fn titled_choices(options: &Value) -> Result<Vec<Choice>, String> {
    let Some(options) = options.as_array() else {
        return Err("has choices that are not a list".into());
    };
    options
        .iter()
        .map(|option| {
            let value = option
                .get("const")
                .and_then(Value::as_str)
                .ok_or("has a choice without a string const")?;
            Ok(Choice {
                value: value.to_owned(),
                title: option
                    .get("title")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            })
        })
        .collect()
}

/// The result as sent.
#[derive(Serialize)]
pub(crate) struct ElicitResultWire<'a> {
    action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a Map<String, Value>>,
}

impl<'a> ElicitResultWire<'a> {
    pub(crate) fn from_response(response: &'a ElicitationResponse, url_mode: bool) -> Self {
        match response {
            // URL mode carries no content.
            ElicitationResponse::Accept(content) => ElicitResultWire {
                action: "accept",
                content: (!url_mode).then_some(content),
            },
            ElicitationResponse::Decline => ElicitResultWire {
                action: "decline",
                content: None,
            },
            ElicitationResponse::Cancel => ElicitResultWire {
                action: "cancel",
                content: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(schema: Value) -> Result<Form, Unreadable> {
        let params = json!({"message": "?", "requestedSchema": schema}).to_string();
        match ElicitationRequest::parse(&params)? {
            ElicitationRequest::Form { form, .. } => Ok(form),
            other => panic!("expected a form, got {other:?}"),
        }
    }

    #[test]
    fn fields_keep_the_servers_order_and_defaults_fill_gaps() {
        // Raw text: `json!` would sort the properties before the parser saw
        // them.
        let params = r#"{"message": "?", "requestedSchema": {"type": "object", "properties": {
            "zeta": {"type": "string", "default": "z"},
            "alpha": {"type": "integer", "minimum": 1, "maximum": 5, "default": 3},
            "mid": {"type": "boolean"},
            "color": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}]},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "default": ["a"]}
        }, "required": ["mid"]}}"#;
        let Ok(ElicitationRequest::Form { form, .. }) = ElicitationRequest::parse(params) else {
            panic!("a form in the subset");
        };
        let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha", "mid", "color", "tags"]);
        let mut content = Map::new();
        content.insert("mid".into(), json!(true));
        form.complete(&mut content).expect("fits");
        assert_eq!(
            Value::Object(content),
            json!({"zeta": "z", "alpha": 3, "mid": true, "tags": ["a"]})
        );
    }

    #[test]
    fn formats_duplicates_and_float_counts_are_checked() {
        let params = r#"{"message": "?", "requestedSchema": {"type": "object", "properties": {
            "mail": {"type": "string", "format": "email", "minLength": 3.0},
            "site": {"type": "string", "format": "uri"},
            "day": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "date-time"},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}}
        }}}"#;
        let Ok(ElicitationRequest::Form { form, .. }) = ElicitationRequest::parse(params) else {
            panic!("a form in the subset");
        };
        let check = |name: &str, value: Value| {
            form.fields
                .iter()
                .find(|field| field.name == name)
                .expect("a field")
                .check(&value)
        };
        assert!(check("mail", json!("ada@example.org")).is_ok());
        assert!(check("mail", json!("not an email")).is_err());
        assert!(
            check("mail", json!("a@")).is_err(),
            "minLength 3.0 and the shape"
        );
        assert!(check("site", json!("https://example.org/x")).is_ok());
        assert!(check("site", json!("example")).is_err());
        assert!(check("day", json!("2026-11-30")).is_ok());
        assert!(check("day", json!("30/11/2026")).is_err());
        assert!(check("at", json!("2026-11-30T12:00:00Z")).is_ok());
        assert!(check("at", json!("2026-11-30")).is_err());
        assert!(check("tags", json!(["a", "b"])).is_ok());
        assert!(check("tags", json!(["a", "a"])).is_err());
    }

    #[test]
    fn answers_that_do_not_fit_are_refused_naming_the_field() {
        let form = form(json!({"type": "object", "properties": {
            "n": {"type": "integer", "maximum": 5}, "need": {"type": "string"}
        }, "required": ["need"]}))
        .expect("in the subset");
        let mut missing = Map::new();
        assert!(
            form.complete(&mut missing)
                .expect_err("required")
                .contains("need")
        );
        let mut too_big = Map::new();
        too_big.insert("need".into(), json!("x"));
        too_big.insert("n".into(), json!(9));
        assert!(
            form.complete(&mut too_big)
                .expect_err("too big")
                .contains("\"n\"")
        );
    }

    #[test]
    fn schemas_outside_the_subset_and_non_http_urls_are_refused() {
        for schema in [
            json!({"type": "object", "properties": {"o": {"type": "object"}}}),
            json!({"type": "object", "properties": {"s": {"type": "string", "format": "ipv4"}}}),
            json!({"type": "array"}),
            json!({"type": "object", "properties": {"n": {"type": "number", "maximum": 1, "default": 2}}}),
        ] {
            assert!(form(schema.clone()).is_err(), "{schema}");
        }
        let url = json!({"mode": "url", "message": "m", "elicitationId": "e", "url": "file:///etc/passwd"});
        assert!(ElicitationRequest::parse(&url.to_string()).is_err());
        let url = json!({"mode": "url", "message": "m", "elicitationId": "e", "url": "https://example.com/x"});
        assert!(matches!(
            ElicitationRequest::parse(&url.to_string()),
            Ok(ElicitationRequest::Url { .. })
        ));
    }
}
