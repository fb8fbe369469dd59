//! The request headers the 2026-07-28 streamable-HTTP transport mirrors from
//! the body: how a value is written into a header ([`header_value`], also
//! used for `Mcp-Name`), which tool arguments become `Mcp-Param-{Name}`
//! headers ([`HeaderParams::from_schema`], from a tool's `x-mcp-header`
//! annotations), and the headers one call sends ([`HeaderParams::headers`]).
//!
//! Decisions where the specification leaves room, with what they rest on:
//!
//! - A horizontal tab anywhere in a value is sent in Base64, not only at
//!   its edges. RFC 9110 allows HTAB inside a field value, but SEP-2243's
//!   encoding rules accept only 0x20-0x7E as plain, and the conformance
//!   suite's client check (`needsBase64Encoding` in
//!   `http-custom-headers.ts`) fails a tab sent raw. Encoding more than
//!   needed is always safe: servers MUST decode the sentinel form.
//! - `type: ["string", "null"]` (one of string, integer, boolean, with or
//!   without `"null"`) is accepted: the spec's table says a `null` value
//!   omits the header, so a nullable parameter has a well-defined mirror.
//!   `"null"` alone is refused (conformance: `invalid_null_header`), and so
//!   is any mix of two primitive types, where `"42"` and `42` could not be
//!   told apart in a header.
//! - An argument is mirrored by its own JSON type, not the declared one:
//!   the spec converts "the parameter value", its table says a provided
//!   value MUST have its header, and the conformance suite expects
//!   `String(bodyValue)`. The server validates the arguments itself.
//! - A number is mirrored only as an integer within ±(2^53−1) (`42.0`
//!   counts: JSON Schema's `integer` admits it, and the spec asks servers
//!   to compare numerically). Anything else is an error for the caller to
//!   refuse the call with: leaving the header out while the value is in the
//!   body is what the spec calls a non-conforming client.

use std::borrow::Cow;
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use serde_json::value::RawValue;

/// What starts a Base64-wrapped value (case-sensitive, lowercase).
const SENTINEL_PREFIX: &str = "=?base64?";
/// What ends a Base64-wrapped value.
const SENTINEL_SUFFIX: &str = "?=";
/// The prefix of every header built from an `x-mcp-header` annotation.
const PARAM_HEADER_PREFIX: &str = "Mcp-Param-";
/// The keyword that marks a property as mirrored into a header.
const ANNOTATION: &str = "x-mcp-header";
/// The largest integer an IEEE 754 double holds exactly (2^53 − 1): the
/// spec's bound on mirrored integers.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// `text` as it is sent in a header (`Mcp-Param-{Name}` or `Mcp-Name`).
///
/// Unchanged when it is plain: only printable ASCII and inner spaces, and
/// not itself shaped like the sentinel. Otherwise
/// `=?base64?{standard Base64 of the UTF-8, padded}?=`, which servers decode
/// before comparing the header with the body. Borrowed in the common case,
/// so names and routing keys cost no allocation.
pub(crate) fn header_value(text: &str) -> Cow<'_, str> {
    if is_plain(text) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!(
            "{SENTINEL_PREFIX}{}{SENTINEL_SUFFIX}",
            STANDARD.encode(text)
        ))
    }
}

/// Whether `text` can go into a header as it is.
fn is_plain(text: &str) -> bool {
    let bytes = text.as_bytes();
    // HTTP parsers trim a field value's edges, so a space there would be
    // lost; a tab is outside the range and so never plain (see the module
    // documentation).
    let edges_kept = bytes.first() != Some(&b' ') && bytes.last() != Some(&b' ');
    // A literal value shaped like the sentinel would be decoded by the
    // server; this test is looser than the servers' (it also catches
    // `=?base64?=`), which only means such a value is encoded needlessly.
    let sentinel_shaped = text.starts_with(SENTINEL_PREFIX) && text.ends_with(SENTINEL_SUFFIX);
    edges_kept && !sentinel_shaped && bytes.iter().all(|b| (0x20..=0x7E).contains(b))
}

/// Whether `name` is an HTTP field-name token (RFC 9110 section 5.1,
/// `1*tchar`): what an `x-mcp-header` value must be.
pub(crate) fn is_token(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(is_tchar)
}

/// RFC 9110's `tchar`: a letter, a digit, or one of ``!#$%&'*+-.^_`|~``.
fn is_tchar(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// The JSON type an annotated property declares: the only three the spec
/// allows to be mirrored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamType {
    /// `"type": "string"`.
    String,
    /// `"type": "integer"`.
    Integer,
    /// `"type": "boolean"`.
    Boolean,
}

impl ParamType {
    /// The type named `name`, when it is one that may be mirrored.
    fn from_name(name: &str) -> Option<ParamType> {
        match name {
            "string" => Some(ParamType::String),
            "integer" => Some(ParamType::Integer),
            "boolean" => Some(ParamType::Boolean),
            _ => None,
        }
    }
}

/// One annotated property of a tool's `inputSchema`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeaderParam {
    /// The `x-mcp-header` value as written, e.g. `Region`; the header is
    /// `Mcp-Param-Region`.
    pub(crate) name: String,
    /// The `properties` keys from the schema root to the property, which is
    /// also where its value sits in a call's arguments.
    pub(crate) path: Vec<String>,
    /// The type the property declares.
    pub(crate) kind: ParamType,
}

impl HeaderParam {
    /// The full header name, e.g. `Mcp-Param-Region`.
    pub(crate) fn header_name(&self) -> String {
        format!("{PARAM_HEADER_PREFIX}{}", self.name)
    }
}

/// The `x-mcp-header` annotations of one tool's `inputSchema`: which of
/// its arguments each `tools/call` mirrors into `Mcp-Param-*` headers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HeaderParams {
    /// The annotated properties, in the order the schema walk met them.
    pub(crate) params: Vec<HeaderParam>,
}

impl HeaderParams {
    /// Reads the annotations of `schema` (a tool's `inputSchema`).
    ///
    /// An error means the tool definition is invalid and must be left out
    /// of `tools/list`. A schema without annotations costs one walk and no
    /// allocation.
    pub(crate) fn from_schema(schema: &Value) -> Result<HeaderParams, InvalidHeaderAnnotation> {
        let mut params = Vec::new();
        walk(schema, None, true, &mut params)?;
        Ok(HeaderParams { params })
    }

    /// Whether no argument is mirrored.
    pub(crate) fn is_empty(&self) -> bool {
        self.params.is_empty()
    }

    /// The `Mcp-Param-*` headers of a call with these `arguments`, as
    /// (header name, value as sent) pairs.
    ///
    /// An argument that is absent or `null` sends no header. The arguments
    /// are parsed only when some argument is mirrored.
    pub(crate) fn headers(
        &self,
        arguments: &RawValue,
    ) -> Result<Vec<(String, String)>, ArgumentHeaderError> {
        if self.params.is_empty() {
            return Ok(Vec::new());
        }
        let arguments: Value =
            serde_json::from_str(arguments.get()).map_err(ArgumentHeaderError::Arguments)?;
        let mut headers = Vec::with_capacity(self.params.len());
        for param in &self.params {
            // `Value::get` on anything but an object is None: a path that
            // runs into a string or an array has no value, like a missing key.
            let value = param
                .path
                .iter()
                .try_fold(&arguments, |at, key| at.get(key));
            let Some(value) = value else { continue };
            if let Some(text) = mirrored(value).map_err(|problem| ArgumentHeaderError::Value {
                header: param.header_name(),
                path: argument_pointer(&param.path),
                problem,
            })? {
                headers.push((param.header_name(), text));
            }
        }
        Ok(headers)
    }
}

/// The header value for one argument, `None` for `null`.
fn mirrored(value: &Value) -> Result<Option<String>, ValueProblem> {
    match value {
        Value::Null => Ok(None),
        Value::Bool(flag) => Ok(Some(flag.to_string())),
        Value::String(text) => Ok(Some(header_value(text).into_owned())),
        Value::Number(number) => safe_integer(number)
            .map(|integer| Some(integer.to_string()))
            .ok_or_else(|| ValueProblem::NotSafeInteger(number.to_string())),
        Value::Array(_) => Err(ValueProblem::NotScalar("an array")),
        Value::Object(_) => Err(ValueProblem::NotScalar("an object")),
    }
}

/// `number` as an integer, when it is one within ±(2^53−1).
fn safe_integer(number: &serde_json::Number) -> Option<i64> {
    if let Some(integer) = number.as_i64() {
        return (integer.abs() <= MAX_SAFE_INTEGER).then_some(integer);
    }
    // A u64 past i64::MAX is far out of range; what is left is a float,
    // which may still be integral (`42.0`, `1e3`).
    let float = number.as_f64()?;
    let in_range =
        float.is_finite() && float.fract() == 0.0 && float.abs() <= MAX_SAFE_INTEGER as f64;
    // The cast is exact: the value is integral and below 2^53.
    in_range.then_some(float as i64)
}

/// The JSON Pointer (RFC 6901) of an argument inside the call's arguments.
fn argument_pointer(path: &[String]) -> String {
    let mut pointer = String::new();
    for key in path {
        pointer.push('/');
        push_escaped(&mut pointer, key);
    }
    pointer
}

/// Appends `key` as one JSON Pointer reference token.
fn push_escaped(pointer: &mut String, key: &str) {
    for c in key.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// One step from a schema to a subschema or a nested keyword value.
#[derive(Clone, Copy)]
enum Step<'a> {
    /// A key of an object: a keyword, or a property or definition name.
    Key(&'a str),
    /// An element of an array keyword (`allOf`, `prefixItems`, ...).
    Index(usize),
}

/// Where the walk is, as a list of steps linked through the call stack, so
/// that walking costs no allocation; only an error or a found annotation
/// turns it into a string or a path.
struct Trail<'a> {
    /// The last step.
    step: Step<'a>,
    /// The steps before it; `None` under the root.
    parent: Option<&'a Trail<'a>>,
}

impl Trail<'_> {
    /// The steps from the root, in order.
    fn steps<'a>(trail: Option<&Trail<'a>>) -> Vec<Step<'a>> {
        let mut steps = Vec::new();
        let mut at = trail;
        while let Some(here) = at {
            steps.push(here.step);
            at = here.parent;
        }
        steps.reverse();
        steps
    }

    /// The JSON Pointer of the place in the schema, as a `#` fragment.
    fn pointer(trail: Option<&Trail<'_>>) -> String {
        let mut pointer = String::from("#");
        for step in Trail::steps(trail) {
            pointer.push('/');
            match step {
                Step::Key(key) => push_escaped(&mut pointer, key),
                Step::Index(index) => pointer.push_str(&index.to_string()),
            }
        }
        pointer
    }

    /// The property names of a trail made only of `properties` steps (the
    /// keyword, then a name, again and again).
    fn property_path(trail: Option<&Trail<'_>>) -> Vec<String> {
        Trail::steps(trail)
            .chunks(2)
            .filter_map(|pair| match pair {
                [_, Step::Key(name)] => Some((*name).to_owned()),
                _ => None,
            })
            .collect()
    }
}

/// Keywords whose value is one subschema (or, for draft-07's tuple
/// `items` and `additionalItems`, possibly an array of them).
const SINGLE_SCHEMA_KEYWORDS: &[&str] = &[
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];

/// Keywords whose value is an array of subschemas.
const SCHEMA_ARRAY_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Keywords whose value maps names to subschemas, other than `properties`.
/// (draft-07's `dependencies` maps to a schema or to a list of names; a
/// list is no schema and is skipped as such.)
const SCHEMA_MAP_KEYWORDS: &[&str] = &[
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// Visits `schema` and every subschema under it, collecting annotations
/// into `found`. `on_chain` says whether `schema` is reached from the root
/// through `properties` alone.
///
/// Only the applicator keywords above lead to subschemas: `const`, `enum`,
/// `default`, `examples` and unknown keywords hold data, and an
/// `x-mcp-header` key inside them is no annotation.
fn walk(
    schema: &Value,
    at: Option<&Trail<'_>>,
    on_chain: bool,
    found: &mut Vec<HeaderParam>,
) -> Result<(), InvalidHeaderAnnotation> {
    let Value::Object(keywords) = schema else {
        // `true`, `false`, or something that is not a schema at all.
        return Ok(());
    };
    if let Some(annotation) = keywords.get(ANNOTATION) {
        // The root is no property: there is no argument to mirror.
        if !on_chain || at.is_none() {
            return Err(InvalidHeaderAnnotation::new(
                at,
                AnnotationProblem::Unreachable,
            ));
        }
        let param = annotated_property(keywords, annotation, at)?;
        if let Some(first) = found
            .iter()
            .find(|seen| seen.name.eq_ignore_ascii_case(&param.name))
        {
            return Err(InvalidHeaderAnnotation::new(
                at,
                AnnotationProblem::Duplicate {
                    name: param.name,
                    first: schema_pointer(&first.path),
                },
            ));
        }
        found.push(param);
    }
    for (keyword, value) in keywords {
        let here = Trail {
            step: Step::Key(keyword),
            parent: at,
        };
        let keyword = keyword.as_str();
        if keyword == "properties" {
            walk_map(value, &here, on_chain, found)?;
        } else if SCHEMA_MAP_KEYWORDS.contains(&keyword) {
            walk_map(value, &here, false, found)?;
        } else if SCHEMA_ARRAY_KEYWORDS.contains(&keyword) {
            walk_array(value, &here, found)?;
        } else if SINGLE_SCHEMA_KEYWORDS.contains(&keyword) {
            match value {
                Value::Array(_) => walk_array(value, &here, found)?,
                _ => walk(value, Some(&here), false, found)?,
            }
        }
    }
    Ok(())
}

/// Walks each value of a name-to-subschema map.
fn walk_map(
    map: &Value,
    at: &Trail<'_>,
    on_chain: bool,
    found: &mut Vec<HeaderParam>,
) -> Result<(), InvalidHeaderAnnotation> {
    let Value::Object(entries) = map else {
        return Ok(());
    };
    for (name, subschema) in entries {
        let here = Trail {
            step: Step::Key(name),
            parent: Some(at),
        };
        walk(subschema, Some(&here), on_chain, found)?;
    }
    Ok(())
}

/// Walks each element of an array of subschemas; none is on the chain.
fn walk_array(
    array: &Value,
    at: &Trail<'_>,
    found: &mut Vec<HeaderParam>,
) -> Result<(), InvalidHeaderAnnotation> {
    let Value::Array(elements) = array else {
        return Ok(());
    };
    for (index, subschema) in elements.iter().enumerate() {
        let here = Trail {
            step: Step::Index(index),
            parent: Some(at),
        };
        walk(subschema, Some(&here), false, found)?;
    }
    Ok(())
}

/// Checks the annotation of a statically reachable property: its value,
/// then the type the property declares.
fn annotated_property(
    keywords: &serde_json::Map<String, Value>,
    annotation: &Value,
    at: Option<&Trail<'_>>,
) -> Result<HeaderParam, InvalidHeaderAnnotation> {
    let invalid = |problem| InvalidHeaderAnnotation::new(at, problem);
    let Value::String(name) = annotation else {
        return Err(invalid(AnnotationProblem::NotAString));
    };
    if name.is_empty() {
        return Err(invalid(AnnotationProblem::Empty));
    }
    if !is_token(name) {
        return Err(invalid(AnnotationProblem::NotAToken(name.clone())));
    }
    let kind = declared_type(keywords.get("type")).map_err(invalid)?;
    Ok(HeaderParam {
        name: name.clone(),
        path: Trail::property_path(at),
        kind,
    })
}

/// The mirrorable type a property's `type` keyword declares.
fn declared_type(declared: Option<&Value>) -> Result<ParamType, AnnotationProblem> {
    let not_primitive = |declared: &Value| AnnotationProblem::NotPrimitive(declared.to_string());
    match declared {
        None => Err(AnnotationProblem::MissingType),
        Some(Value::String(name)) if name == "number" => Err(AnnotationProblem::NumberType),
        Some(whole @ Value::String(name)) => {
            ParamType::from_name(name).ok_or_else(|| not_primitive(whole))
        }
        // A nullable primitive (see the module documentation): exactly one
        // type besides "null".
        Some(whole @ Value::Array(names)) => {
            let mut others = names.iter().filter(|name| name.as_str() != Some("null"));
            match (others.next(), others.next()) {
                (Some(Value::String(name)), None) if name == "number" => {
                    Err(AnnotationProblem::NumberType)
                }
                (Some(Value::String(name)), None) => {
                    ParamType::from_name(name).ok_or_else(|| not_primitive(whole))
                }
                _ => Err(not_primitive(whole)),
            }
        }
        Some(other) => Err(not_primitive(other)),
    }
}

/// The schema pointer of a property given by its `properties` keys.
fn schema_pointer(path: &[String]) -> String {
    let mut pointer = String::from("#");
    for key in path {
        pointer.push_str("/properties/");
        push_escaped(&mut pointer, key);
    }
    pointer
}

/// An `x-mcp-header` annotation that breaks the spec's rules: the tool
/// that carries it must be left out of `tools/list`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the x-mcp-header at {at} in the inputSchema {problem}")]
pub(crate) struct InvalidHeaderAnnotation {
    /// Where the annotation is: a JSON Pointer fragment into the
    /// `inputSchema`, e.g. `#/properties/region`.
    pub(crate) at: String,
    /// What is wrong with it.
    pub(crate) problem: AnnotationProblem,
}

impl InvalidHeaderAnnotation {
    /// The error for an annotation in the schema object at `at`.
    fn new(at: Option<&Trail<'_>>, problem: AnnotationProblem) -> Self {
        InvalidHeaderAnnotation {
            at: Trail::pointer(at),
            problem,
        }
    }
}

/// Why an `x-mcp-header` annotation is invalid. Each reads as the end of
/// a sentence that starts with the annotation's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AnnotationProblem {
    /// It is not on a property reached from the root through `properties`
    /// keys alone (under `items`, `oneOf`, `$defs`, ..., or on the root).
    Unreachable,
    /// Its value is not a string.
    NotAString,
    /// Its value is the empty string.
    Empty,
    /// Its value has a character outside RFC 9110's `tchar`.
    NotAToken(String),
    /// Another annotation has the same name, ignoring ASCII case.
    Duplicate {
        /// This annotation's name.
        name: String,
        /// Where the first one with that name is.
        first: String,
    },
    /// The property is a `number`, which the spec excludes.
    NumberType,
    /// The property's `type` is not one of string, integer, boolean (as
    /// JSON text).
    NotPrimitive(String),
    /// The property declares no `type`, so it may hold anything.
    MissingType,
}

impl fmt::Display for AnnotationProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Names come from the server and may hold control characters:
        // Debug quoting keeps them from reaching a log raw.
        match self {
            AnnotationProblem::Unreachable => f.write_str(
                "is not on a property reached from the schema root through `properties` alone",
            ),
            AnnotationProblem::NotAString => f.write_str("is not a string"),
            AnnotationProblem::Empty => f.write_str("is empty"),
            AnnotationProblem::NotAToken(name) => write!(
                f,
                "names the header {name:?}, which is not an HTTP token (RFC 9110 tchar only)"
            ),
            AnnotationProblem::Duplicate { name, first } => write!(
                f,
                "names the header {name:?}, already named (ignoring case) at {first}"
            ),
            AnnotationProblem::NumberType => f.write_str(
                "is on a `number` property; only string, integer and boolean may be mirrored",
            ),
            AnnotationProblem::NotPrimitive(declared) => write!(
                f,
                "is on a property of type {declared}; only string, integer and boolean may be \
                 mirrored"
            ),
            AnnotationProblem::MissingType => f.write_str(
                "is on a property with no `type`; only string, integer and boolean may be mirrored",
            ),
        }
    }
}

/// A call's arguments that cannot be mirrored into their headers: the call
/// should be refused rather than sent without them.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ArgumentHeaderError {
    /// The arguments could not be read as JSON.
    #[error("the tool arguments could not be read: {0}")]
    Arguments(#[source] serde_json::Error),
    /// An annotated argument holds a value no header can carry.
    #[error("the argument at {path} cannot be sent as the header {header}: {problem}")]
    Value {
        /// The full header name, e.g. `Mcp-Param-Priority`.
        header: String,
        /// A JSON Pointer to the argument, e.g. `/priority`.
        path: String,
        /// What is wrong with the value.
        problem: ValueProblem,
    },
}

/// Why an argument's value cannot be mirrored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ValueProblem {
    /// An object or an array (named so).
    #[error("it is {0}, not a string, an integer or a boolean")]
    NotScalar(&'static str),
    /// A number that is not an integer within ±(2^53−1) (as written).
    #[error("{0} is not an integer within ±(2^53−1)")]
    NotSafeInteger(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// The annotations of `schema`, which must be valid.
    fn params(schema: Value) -> HeaderParams {
        HeaderParams::from_schema(&schema).expect("a valid schema")
    }

    /// The error for `schema`, which must be invalid.
    fn invalid(schema: Value) -> InvalidHeaderAnnotation {
        HeaderParams::from_schema(&schema).expect_err("an invalid schema")
    }

    /// The headers `params` sends for `arguments`.
    fn headers(params: &HeaderParams, arguments: &str) -> Vec<(String, String)> {
        let raw = RawValue::from_string(arguments.to_owned()).expect("valid JSON");
        params.headers(&raw).expect("mirrorable arguments")
    }

    /// The error `params` gives for `arguments`.
    fn header_error(params: &HeaderParams, arguments: &str) -> ArgumentHeaderError {
        let raw = RawValue::from_string(arguments.to_owned()).expect("valid JSON");
        params.headers(&raw).expect_err("unmirrorable arguments")
    }

    /// A schema with one property `p` annotated `name`, declared as `kind`.
    fn one(name: &str, kind: Value) -> Value {
        json!({"type": "object", "properties": {"p": {"type": kind, "x-mcp-header": name}}})
    }

    /// What a server does with a header value: decode the sentinel form
    /// (the regex `^=\?base64\?(.*)\?=$`), take anything else literally.
    fn decoded(value: &str) -> Vec<u8> {
        if value.len() >= SENTINEL_PREFIX.len() + SENTINEL_SUFFIX.len()
            && value.starts_with(SENTINEL_PREFIX)
            && value.ends_with(SENTINEL_SUFFIX)
        {
            let inner = &value[SENTINEL_PREFIX.len()..value.len() - SENTINEL_SUFFIX.len()];
            STANDARD.decode(inner).expect("padded standard Base64")
        } else {
            value.as_bytes().to_vec()
        }
    }

    #[test]
    fn the_spec_encoding_table_verbatim() {
        for (original, sent) in [
            ("us-west1", "us-west1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ] {
            assert_eq!(header_value(original), sent, "{original:?}");
        }
    }

    #[test]
    fn the_sep_edge_case_table() {
        for (original, sent) in [
            (" us-west1", "=?base64?IHVzLXdlc3Qx?="),
            ("us-west1 ", "=?base64?dXMtd2VzdDEg?="),
            (" us-west1 ", "=?base64?IHVzLXdlc3QxIA==?="),
            ("us west 1", "us west 1"),
            ("日本語", "=?base64?5pel5pys6Kqe?="),
            ("line1\r\nline2", "=?base64?bGluZTENCmxpbmUy?="),
            ("\tindented", "=?base64?CWluZGVudGVk?="),
            ("", ""),
        ] {
            assert_eq!(header_value(original), sent, "{original:?}");
        }
    }

    #[test]
    fn plain_values_are_borrowed() {
        assert!(matches!(header_value("get_weather"), Cow::Borrowed(_)));
        assert!(matches!(
            header_value("file:///path/to/file%20name.txt"),
            Cow::Borrowed(_)
        ));
        assert!(matches!(
            header_value("https://example.com/resource?id=123"),
            Cow::Borrowed(_)
        ));
        assert!(matches!(
            header_value("my-hyphenated-tool"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn control_characters_tabs_and_non_ascii_never_go_raw() {
        for original in [
            "a\rb",
            "a\nb",
            "a\0b",
            "a\u{7f}b",
            "a\u{1b}[31mb",
            "a\tb",
            "é",
            "a\u{a0}b",
        ] {
            let sent = header_value(original);
            assert!(sent.starts_with(SENTINEL_PREFIX), "{original:?} -> {sent}");
            assert_eq!(decoded(&sent), original.as_bytes());
        }
    }

    #[test]
    fn only_the_exact_lowercase_sentinel_shape_is_encoded() {
        // Both ends must match, in lowercase.
        for plain in ["=?base64?SGVsbG8=", "SGVsbG8=?=", "=?BASE64?SGVsbG8=?="] {
            assert_eq!(header_value(plain), plain);
        }
        // Shorter than the servers' pattern, but encoding it is harmless.
        assert_eq!(decoded(&header_value("=?base64?=")), b"=?base64?=");
        assert_ne!(header_value("=?base64?="), "=?base64?=");
    }

    #[test]
    fn tokens_are_rfc_9110_tchar() {
        for good in ["Region", "TenantId", "x", "a1-_.!#$%&'*+^`|~"] {
            assert!(is_token(good), "{good}");
        }
        for bad in [
            "",
            "My Region",
            "Region:Primary",
            "Région",
            "Region\t1",
            "a\r\nb",
            "a/b",
            "(a)",
            "a\"b",
            "a,b",
            "a;b",
            "a=b",
            "a@b",
            "a{b}",
            "a[b]",
            "a?b",
            "a\\b",
        ] {
            assert!(!is_token(bad), "{bad:?}");
        }
    }

    #[test]
    fn a_schema_without_annotations_allocates_nothing() {
        let found = params(json!({
            "type": "object",
            "properties": {"query": {"type": "string"}, "n": {"type": "integer"}},
            "$defs": {"x": {"type": "string"}}
        }));
        assert!(found.is_empty());
        assert_eq!(found.params.capacity(), 0);
        // No annotation, no parse: even arguments that are not an object.
        assert!(headers(&found, "[1, 2]").is_empty());
    }

    #[test]
    fn the_spec_example_mirrors_the_region() {
        let found = params(json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "description": "The region", "x-mcp-header": "Region"},
                "query": {"type": "string"}
            },
            "required": ["region", "query"]
        }));
        assert_eq!(
            found.params,
            [HeaderParam {
                name: "Region".into(),
                path: vec!["region".into()],
                kind: ParamType::String,
            }]
        );
        assert_eq!(
            headers(
                &found,
                r#"{"region":"us-west1","query":"SELECT * FROM users"}"#
            ),
            [("Mcp-Param-Region".to_owned(), "us-west1".to_owned())]
        );
    }

    #[test]
    fn nested_properties_are_mirrored_from_their_exact_path() {
        let found = params(json!({
            "type": "object",
            "properties": {
                "target": {
                    "type": "object",
                    "properties": {
                        "location": {
                            "type": "object",
                            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}
                        }
                    }
                },
                "region": {"type": "string"}
            }
        }));
        assert_eq!(found.params[0].path, ["target", "location", "region"]);
        assert_eq!(
            headers(
                &found,
                r#"{"region":"decoy","target":{"location":{"region":"eu-1"}}}"#
            ),
            [("Mcp-Param-Region".to_owned(), "eu-1".to_owned())]
        );
        // A path that runs into a non-object, or stops short, has no value.
        assert!(headers(&found, r#"{"target":{"location":"eu-1"}}"#).is_empty());
        assert!(headers(&found, r#"{"target":[{"location":{"region":"eu-1"}}]}"#).is_empty());
        assert!(headers(&found, r#"{"target":{}}"#).is_empty());
        assert!(headers(&found, "null").is_empty());
    }

    #[test]
    fn property_names_are_only_names() {
        // A property called `x-mcp-header` is no annotation, and an
        // annotated property may have that name or one with `/` and `~`.
        let found = params(json!({
            "type": "object",
            "properties": {
                "x-mcp-header": {"type": "string"},
                "properties": {
                    "type": "object",
                    "properties": {"a/b~c": {"type": "integer", "x-mcp-header": "Odd"}}
                }
            }
        }));
        assert_eq!(found.params.len(), 1);
        assert_eq!(found.params[0].path, ["properties", "a/b~c"]);
        let error = header_error(&found, r#"{"properties":{"a/b~c":1.5}}"#);
        assert!(error.to_string().contains("/properties/a~1b~0c"), "{error}");
    }

    #[test]
    fn annotations_off_the_properties_chain_make_the_tool_invalid() {
        let annotated = json!({"type": "string", "x-mcp-header": "Hidden"});
        let placements = [
            ("#", json!({"type": "string", "x-mcp-header": "Root"})),
            (
                "#/properties/tags/items",
                json!({"properties": {"tags": {"type": "array", "items": annotated}}}),
            ),
            ("#/items/0", json!({"items": [annotated]})),
            ("#/prefixItems/0", json!({"prefixItems": [annotated]})),
            ("#/additionalItems", json!({"additionalItems": annotated})),
            (
                "#/additionalProperties",
                json!({"additionalProperties": annotated}),
            ),
            (
                "#/unevaluatedProperties",
                json!({"unevaluatedProperties": annotated}),
            ),
            ("#/unevaluatedItems", json!({"unevaluatedItems": annotated})),
            (
                "#/patternProperties/^a",
                json!({"patternProperties": {"^a": annotated}}),
            ),
            ("#/propertyNames", json!({"propertyNames": annotated})),
            ("#/contains", json!({"contains": annotated})),
            ("#/contentSchema", json!({"contentSchema": annotated})),
            ("#/oneOf/1", json!({"oneOf": [{}, annotated]})),
            ("#/anyOf/0", json!({"anyOf": [annotated]})),
            (
                "#/allOf/0/properties/a",
                json!({"allOf": [{"properties": {"a": annotated}}]}),
            ),
            ("#/not", json!({"not": annotated})),
            ("#/if", json!({"if": annotated})),
            (
                "#/then/properties/a",
                json!({"then": {"properties": {"a": annotated}}}),
            ),
            ("#/else", json!({"else": annotated})),
            (
                "#/$defs/Region",
                json!({
                    "$defs": {"Region": annotated},
                    "properties": {"r": {"$ref": "#/$defs/Region"}}
                }),
            ),
            (
                "#/definitions/Region",
                json!({"definitions": {"Region": annotated}}),
            ),
            (
                "#/dependentSchemas/a/properties/b",
                json!({"dependentSchemas": {"a": {"properties": {"b": annotated}}}}),
            ),
            (
                "#/dependencies/a",
                json!({"dependencies": {"a": annotated, "b": ["a"]}}),
            ),
            (
                "#/properties/a/additionalProperties/properties/b",
                json!({"properties": {"a": {
                    "additionalProperties": {"properties": {"b": annotated}}
                }}}),
            ),
        ];
        for (at, schema) in placements {
            let error = invalid(schema);
            assert_eq!(error.problem, AnnotationProblem::Unreachable, "{at}");
            assert_eq!(error.at, at);
        }
    }

    #[test]
    fn an_x_mcp_header_key_in_data_is_no_annotation() {
        let found = params(json!({
            "type": "object",
            "properties": {"a": {
                "type": "object",
                "default": {"x-mcp-header": "A"},
                "const": {"x-mcp-header": "B"},
                "enum": [{"x-mcp-header": "C"}],
                "examples": [{"x-mcp-header": "D"}],
                "x-vendor": {"x-mcp-header": "E"}
            }}
        }));
        assert!(found.is_empty());
    }

    #[test]
    fn the_conformance_invalid_tools_are_refused() {
        for (tool, schema, problem) in [
            (
                "invalid_empty_header",
                one("", json!("string")),
                AnnotationProblem::Empty,
            ),
            (
                "invalid_object_header",
                one("Data", json!("object")),
                AnnotationProblem::NotPrimitive("\"object\"".into()),
            ),
            (
                "invalid_array_header",
                one("Items", json!("array")),
                AnnotationProblem::NotPrimitive("\"array\"".into()),
            ),
            (
                "invalid_null_header",
                one("Nil", json!("null")),
                AnnotationProblem::NotPrimitive("\"null\"".into()),
            ),
            (
                "invalid_space_in_name",
                one("My Region", json!("string")),
                AnnotationProblem::NotAToken("My Region".into()),
            ),
            (
                "invalid_colon_in_name",
                one("Region:Primary", json!("string")),
                AnnotationProblem::NotAToken("Region:Primary".into()),
            ),
            (
                "invalid_non_ascii_name",
                one("Région", json!("string")),
                AnnotationProblem::NotAToken("Région".into()),
            ),
            (
                "invalid_control_char_name",
                one("Region\t1", json!("string")),
                AnnotationProblem::NotAToken("Region\t1".into()),
            ),
        ] {
            let error = invalid(schema);
            assert_eq!(error.problem, problem, "{tool}");
            assert_eq!(error.at, "#/properties/p", "{tool}");
        }
        // The valid tool next to them is kept.
        assert_eq!(params(one("Region", json!("string"))).params.len(), 1);
    }

    #[test]
    fn duplicate_names_are_refused_ignoring_case() {
        for (first, second) in [
            ("Region", "Region"),
            ("MyField", "myfield"),
            ("Region", "REGION"),
        ] {
            let error = invalid(json!({"type": "object", "properties": {
                "field1": {"type": "string", "x-mcp-header": first},
                "field2": {"type": "string", "x-mcp-header": second}
            }}));
            assert_eq!(
                error.problem,
                AnnotationProblem::Duplicate {
                    name: second.into(),
                    first: "#/properties/field1".into()
                }
            );
            assert_eq!(error.at, "#/properties/field2");
        }
        // Across nesting levels too: uniqueness is over the whole schema.
        let error = invalid(json!({"properties": {
            "a": {"type": "string", "x-mcp-header": "Id"},
            "b": {"properties": {"c": {"type": "string", "x-mcp-header": "ID"}}}
        }}));
        assert!(matches!(error.problem, AnnotationProblem::Duplicate { .. }));
    }

    #[test]
    fn a_standard_header_name_is_a_param_like_any_other() {
        let found = params(one("Method", json!("string")));
        assert_eq!(
            headers(&found, r#"{"p":"test-method"}"#),
            [("Mcp-Param-Method".to_owned(), "test-method".to_owned())]
        );
    }

    #[test]
    fn only_string_integer_and_boolean_properties_may_be_annotated() {
        for (kind, expected) in [
            ("string", ParamType::String),
            ("integer", ParamType::Integer),
            ("boolean", ParamType::Boolean),
        ] {
            assert_eq!(params(one("P", json!(kind))).params[0].kind, expected);
        }
        assert_eq!(
            invalid(one("P", json!("number"))).problem,
            AnnotationProblem::NumberType
        );
        assert_eq!(
            invalid(one("P", json!(["number", "null"]))).problem,
            AnnotationProblem::NumberType
        );
        let untyped = json!({"properties": {"p": {"enum": ["a"], "x-mcp-header": "P"}}});
        assert_eq!(invalid(untyped).problem, AnnotationProblem::MissingType);
        let by_ref = json!({
            "$defs": {"S": {"type": "string"}},
            "properties": {"p": {"$ref": "#/$defs/S", "x-mcp-header": "P"}}
        });
        assert_eq!(invalid(by_ref).problem, AnnotationProblem::MissingType);
        for kind in [
            json!(["string", "integer"]),
            json!(["null"]),
            json!([]),
            json!(7),
            json!({"const": "string"}),
        ] {
            assert!(
                matches!(
                    invalid(one("P", kind.clone())).problem,
                    AnnotationProblem::NotPrimitive(_)
                ),
                "{kind}"
            );
        }
        assert_eq!(
            invalid(json!({"properties": {"p": {"type": "string", "x-mcp-header": 7}}})).problem,
            AnnotationProblem::NotAString
        );
    }

    #[test]
    fn a_nullable_primitive_may_be_annotated() {
        for (kind, expected) in [
            (json!(["string", "null"]), ParamType::String),
            (json!(["null", "integer"]), ParamType::Integer),
            (json!(["boolean"]), ParamType::Boolean),
        ] {
            assert_eq!(params(one("P", kind)).params[0].kind, expected);
        }
        let found = params(one("P", json!(["string", "null"])));
        assert!(headers(&found, r#"{"p":null}"#).is_empty());
        assert_eq!(
            headers(&found, r#"{"p":"x"}"#),
            [("Mcp-Param-P".to_owned(), "x".to_owned())]
        );
    }

    /// The conformance suite's `test_custom_headers` tool (`float_val` is
    /// served without an annotation).
    fn conformance_tool() -> HeaderParams {
        let mut properties = serde_json::Map::new();
        for (property, kind, name) in [
            ("region", "string", "Region"),
            ("priority", "integer", "Priority"),
            ("verbose", "boolean", "Verbose"),
            ("debug", "boolean", "Debug"),
            ("empty_val", "string", "EmptyVal"),
            ("method_val", "string", "Method"),
            ("non_ascii_val", "string", "NonAscii"),
            ("whitespace_val", "string", "Whitespace"),
            ("leading_space_val", "string", "LeadingSpace"),
            ("trailing_space_val", "string", "TrailingSpace"),
            ("internal_space_val", "string", "InternalSpace"),
            ("control_char_val", "string", "ControlChar"),
            ("crlf_val", "string", "CrLf"),
            ("tab_val", "string", "Tab"),
        ] {
            properties.insert(property.into(), json!({"type": kind, "x-mcp-header": name}));
        }
        properties.insert("float_val".into(), json!({"type": "number"}));
        properties.insert("query".into(), json!({"type": "string"}));
        params(json!({
            "type": "object",
            "properties": properties,
            "required": ["region", "priority", "query"]
        }))
    }

    #[test]
    fn the_conformance_custom_headers_call() {
        let sent = headers(
            &conformance_tool(),
            r#"{"region":"us-west1","priority":42,"verbose":false,"debug":true,
                "empty_val":"","method_val":"test-method","float_val":3.14159,
                "non_ascii_val":"Hello, 世界","whitespace_val":" padded ",
                "leading_space_val":" us-west1","trailing_space_val":"us-west1 ",
                "internal_space_val":"us west 1","control_char_val":"line1\nline2",
                "crlf_val":"line1\r\nline2","tab_val":"\tindented",
                "query":"SELECT * FROM users"}"#,
        );
        let mut sent: Vec<(&str, &str)> = sent
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        sent.sort_unstable();
        let mut expected = vec![
            ("Mcp-Param-Region", "us-west1"),
            ("Mcp-Param-Priority", "42"),
            ("Mcp-Param-Verbose", "false"),
            ("Mcp-Param-Debug", "true"),
            ("Mcp-Param-EmptyVal", ""),
            ("Mcp-Param-Method", "test-method"),
            ("Mcp-Param-NonAscii", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            ("Mcp-Param-Whitespace", "=?base64?IHBhZGRlZCA=?="),
            ("Mcp-Param-LeadingSpace", "=?base64?IHVzLXdlc3Qx?="),
            ("Mcp-Param-TrailingSpace", "=?base64?dXMtd2VzdDEg?="),
            ("Mcp-Param-InternalSpace", "us west 1"),
            ("Mcp-Param-ControlChar", "=?base64?bGluZTEKbGluZTI=?="),
            ("Mcp-Param-CrLf", "=?base64?bGluZTENCmxpbmUy?="),
            ("Mcp-Param-Tab", "=?base64?CWluZGVudGVk?="),
        ];
        expected.sort_unstable();
        // No header for the unannotated `float_val` and `query`.
        assert_eq!(sent, expected);
    }

    #[test]
    fn the_conformance_null_call_omits_the_header() {
        let found = params(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "query": {"type": "string"}
        }}));
        let mut sent = headers(
            &found,
            r#"{"region":"us-east1","priority":1,"verbose":null,"query":"SELECT 1"}"#,
        );
        sent.sort_unstable();
        assert_eq!(
            sent,
            [
                ("Mcp-Param-Priority".to_owned(), "1".to_owned()),
                ("Mcp-Param-Region".to_owned(), "us-east1".to_owned())
            ]
        );
        // Absent is the same as null.
        assert_eq!(headers(&found, r#"{"region":"x"}"#).len(), 1);
    }

    #[test]
    fn integers_are_decimal_within_the_safe_range() {
        let found = params(one("N", json!("integer")));
        for (argument, sent) in [
            ("42", "42"),
            ("-7", "-7"),
            ("0", "0"),
            ("-0.0", "0"),
            ("42.0", "42"),
            ("1e3", "1000"),
            ("9007199254740991", "9007199254740991"),
            ("-9007199254740991", "-9007199254740991"),
            ("9007199254740991.0", "9007199254740991"),
        ] {
            assert_eq!(
                headers(&found, &format!(r#"{{"p":{argument}}}"#))[0].1,
                sent,
                "{argument}"
            );
        }
        for argument in [
            "9007199254740992",
            "-9007199254740992",
            "18446744073709551615",
            "3.5",
            "1e300",
            "9007199254740992.0",
        ] {
            let error = header_error(&found, &format!(r#"{{"p":{argument}}}"#));
            assert!(
                matches!(
                    &error,
                    ArgumentHeaderError::Value {
                        header,
                        path,
                        problem: ValueProblem::NotSafeInteger(_),
                    } if header == "Mcp-Param-N" && path == "/p"
                ),
                "{argument}: {error}"
            );
        }
    }

    #[test]
    fn a_value_is_mirrored_by_its_own_type() {
        // The server validates the arguments; the header mirrors the body.
        let found = params(one("P", json!("integer")));
        assert_eq!(headers(&found, r#"{"p":"42"}"#)[0].1, "42");
        assert_eq!(headers(&found, r#"{"p":true}"#)[0].1, "true");
        let found = params(one("P", json!("string")));
        assert_eq!(headers(&found, r#"{"p":7}"#)[0].1, "7");
        for (argument, what) in [
            (r#"{"p":[1]}"#, "an array"),
            (r#"{"p":{"a":1}}"#, "an object"),
        ] {
            let error = header_error(&found, argument);
            assert!(
                matches!(
                    &error,
                    ArgumentHeaderError::Value {
                        problem: ValueProblem::NotScalar(kind),
                        ..
                    } if *kind == what
                ),
                "{error}"
            );
        }
    }

    #[test]
    fn error_messages_name_the_place_and_the_reason() {
        let error = invalid(one("Region\r\nX-Evil: 1", json!("string")));
        let message = error.to_string();
        assert!(message.contains("#/properties/p"), "{message}");
        assert!(message.contains("not an HTTP token"), "{message}");
        // The server's name is quoted, never logged raw.
        assert!(
            !message.contains('\r') && !message.contains('\n'),
            "{message}"
        );
        let message = invalid(json!({"properties": {"a": {
            "type": "array",
            "items": {"type": "string", "x-mcp-header": "A"}
        }}}))
        .to_string();
        assert_eq!(
            message,
            "the x-mcp-header at #/properties/a/items in the inputSchema is not on a property \
             reached from the schema root through `properties` alone"
        );
        let message = header_error(&params(one("N", json!("integer"))), r#"{"p":3.5}"#).to_string();
        assert_eq!(
            message,
            "the argument at /p cannot be sent as the header Mcp-Param-N: 3.5 is not an integer \
             within ±(2^53−1)"
        );
    }

    /// Strings that reach the interesting cases more often than any string.
    fn edgy_text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[ -~\t\r\n\u{0}\u{7f}é世]{0,12}",
            "=\\?base64\\?[ -~]{0,6}\\?=",
            "[ \t]?[a-z]{0,4}[ \t]?",
        ]
    }

    proptest! {
        #[test]
        fn any_value_is_header_safe_and_decodes_back(text in edgy_text()) {
            let sent = header_value(&text);
            prop_assert!(sent.bytes().all(|b| (0x20..=0x7E).contains(&b)), "{:?}", sent);
            prop_assert!(!sent.starts_with(' ') && !sent.ends_with(' '), "{:?}", sent);
            prop_assert_eq!(decoded(&sent), text.as_bytes());
            #[cfg(feature = "http")]
            prop_assert!(reqwest::header::HeaderValue::from_str(&sent).is_ok(), "{:?}", sent);
        }
    }
}
