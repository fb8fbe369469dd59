//! URI templates (RFC 6570, all four levels), as resource templates use
//! them: `file:///{path}`, `demo://resource/dynamic/text/{resourceId}`,
//! `https://example.com/search{?q,lang}`, `file:///{+path*}`.
//!
//! Values are strings (MCP's completion and prompt arguments are strings):
//! a level-4 prefix (`{var:3}`) keeps the value's first characters, and an
//! explode (`{var*}`), which only changes how lists and maps expand, leaves
//! a string as it is.

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;

/// A parsed URI template.
///
/// ```
/// use std::collections::BTreeMap;
/// use golem_mcp::UriTemplate;
///
/// let template = UriTemplate::parse("demo://resource/dynamic/text/{resourceId}{?lang}")?;
/// assert_eq!(template.variables().collect::<Vec<_>>(), ["resourceId", "lang"]);
/// let values = BTreeMap::from([("resourceId", "7"), ("lang", "fr ca")]);
/// assert_eq!(template.expand(&values), "demo://resource/dynamic/text/7?lang=fr%20ca");
/// # Ok::<(), golem_mcp::UriTemplateError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expression {
        operator: Operator,
        variables: Vec<VarSpec>,
    },
}

/// One variable of an expression, with its level-4 modifier.
#[derive(Debug, Clone, PartialEq, Eq)]
struct VarSpec {
    name: String,
    /// `{var:N}`: at most N characters of the value.
    prefix: Option<usize>,
}

/// The largest prefix RFC 6570 allows (`max-length` has at most 4 digits).
const MAX_PREFIX: usize = 9999;

/// An expression's operator, with RFC 6570's table (appendix A) of how it
/// expands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParameter,
    Query,
    QueryContinuation,
}

impl Operator {
    fn from_char(c: char) -> Option<Self> {
        Some(match c {
            '+' => Operator::Reserved,
            '#' => Operator::Fragment,
            '.' => Operator::Label,
            '/' => Operator::Path,
            ';' => Operator::PathParameter,
            '?' => Operator::Query,
            '&' => Operator::QueryContinuation,
            _ => return None,
        })
    }

    /// What goes before the first defined variable.
    fn first(self) -> &'static str {
        match self {
            Operator::Simple | Operator::Reserved => "",
            Operator::Fragment => "#",
            Operator::Label => ".",
            Operator::Path => "/",
            Operator::PathParameter => ";",
            Operator::Query => "?",
            Operator::QueryContinuation => "&",
        }
    }

    /// What goes between defined variables.
    fn separator(self) -> char {
        match self {
            Operator::Simple | Operator::Reserved | Operator::Fragment => ',',
            Operator::Label => '.',
            Operator::Path => '/',
            Operator::PathParameter => ';',
            Operator::Query | Operator::QueryContinuation => '&',
        }
    }

    /// Whether each value is written as `name=value`.
    fn named(self) -> bool {
        matches!(
            self,
            Operator::PathParameter | Operator::Query | Operator::QueryContinuation
        )
    }

    /// What follows the name of a variable whose value is empty.
    fn if_empty(self) -> &'static str {
        match self {
            Operator::Query | Operator::QueryContinuation => "=",
            _ => "",
        }
    }

    /// Whether reserved characters (and percent-encoded triplets) pass
    /// through unencoded.
    fn allows_reserved(self) -> bool {
        matches!(self, Operator::Reserved | Operator::Fragment)
    }
}

/// A URI template that cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URI template {template:?} at byte {position}: {problem}")]
#[non_exhaustive]
pub struct UriTemplateError {
    /// The template.
    pub template: String,
    /// Where the problem is, in bytes from the start.
    pub position: usize,
    /// What is wrong.
    pub problem: String,
}

impl UriTemplate {
    /// Parses `template`.
    ///
    /// Fails on an unclosed or stray brace, an empty expression, a variable
    /// name with characters RFC 6570 does not allow, an operator it
    /// reserves for future use (`=`, `,`, `!`, `@`, `|`), and a malformed
    /// modifier (a prefix outside 1 to 9999, or two modifiers).
    pub fn parse(template: &str) -> Result<Self, UriTemplateError> {
        let error = |position: usize, problem: String| UriTemplateError {
            template: template.to_owned(),
            position,
            problem,
        };
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut rest = template;
        while let Some(brace) = rest.find(['{', '}']) {
            let at = template.len() - rest.len() + brace;
            literal.push_str(&rest[..brace]);
            if rest[brace..].starts_with('}') {
                return Err(error(at, "a '}' without its '{'".into()));
            }
            let Some(close) = rest[brace..].find('}') else {
                return Err(error(at, "a '{' without its '}'".into()));
            };
            let body = &rest[brace + 1..brace + close];
            if let Some(nested) = body.find('{') {
                return Err(error(at + 1 + nested, "a '{' inside an expression".into()));
            }
            if !literal.is_empty() {
                parts.push(Part::Literal(std::mem::take(&mut literal)));
            }
            parts.push(
                parse_expression(body)
                    .map_err(|(offset, problem)| error(at + 1 + offset, problem))?,
            );
            rest = &rest[brace + close + 1..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        Ok(UriTemplate {
            source: template.to_owned(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The names of the template's variables, each once, in the order they
    /// first appear.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        let mut seen = Vec::new();
        self.parts
            .iter()
            .flat_map(|part| match part {
                Part::Expression { variables, .. } => variables.as_slice(),
                Part::Literal(_) => &[],
            })
            .map(|variable| &variable.name)
            .filter_map(move |name| {
                if seen.contains(&name) {
                    return None;
                }
                seen.push(name);
                Some(name.as_str())
            })
    }

    /// Expands the template with `values`. A variable without a value is
    /// left out, with its operator's prefix and separator (RFC 6570's
    /// "undefined"); an empty string is a value. Characters a value may not
    /// carry are percent-encoded (as UTF-8), after a prefix modifier has
    /// cut the value to its first characters.
    pub fn expand<K, V>(&self, values: &BTreeMap<K, V>) -> String
    where
        K: Borrow<str> + Ord,
        V: AsRef<str>,
    {
        let mut out = String::with_capacity(self.source.len());
        for part in &self.parts {
            match part {
                Part::Literal(text) => encode(&mut out, text, true),
                Part::Expression {
                    operator,
                    variables,
                } => {
                    let mut first = true;
                    for VarSpec { name, prefix } in variables {
                        let Some(value) = values.get(name.as_str()) else {
                            continue;
                        };
                        let value = match prefix {
                            Some(length) => first_characters(
                                value.as_ref(),
                                *length,
                                operator.allows_reserved(),
                            ),
                            None => value.as_ref(),
                        };
                        if first {
                            out.push_str(operator.first());
                            first = false;
                        } else {
                            out.push(operator.separator());
                        }
                        if operator.named() {
                            out.push_str(name);
                            if value.is_empty() {
                                out.push_str(operator.if_empty());
                                continue;
                            }
                            out.push('=');
                        }
                        encode(&mut out, value, operator.allows_reserved());
                    }
                }
            }
        }
        out
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl std::str::FromStr for UriTemplate {
    type Err = UriTemplateError;

    fn from_str(template: &str) -> Result<Self, Self::Err> {
        UriTemplate::parse(template)
    }
}

/// Parses what is between the braces; an error is (offset in `body`,
/// problem).
fn parse_expression(body: &str) -> Result<Part, (usize, String)> {
    let mut chars = body.chars();
    let (operator, names_at) = match chars.next() {
        None => return Err((0, "an empty expression".into())),
        Some(c) if Operator::from_char(c).is_some() => {
            (Operator::from_char(c).unwrap_or(Operator::Simple), 1)
        }
        Some(c @ ('=' | ',' | '!' | '@' | '|')) => {
            return Err((
                0,
                format!("the operator {c:?} is reserved by RFC 6570 and has no meaning"),
            ));
        }
        Some(_) => (Operator::Simple, 0),
    };
    let mut variables = Vec::new();
    let mut offset = names_at;
    for spec in body[names_at..].split(',') {
        let variable = parse_varspec(spec).map_err(|(at, problem)| (offset + at, problem))?;
        variables.push(variable);
        offset += spec.len() + 1;
    }
    Ok(Part::Expression {
        operator,
        variables,
    })
}

/// A variable with its modifier: `name`, `name*` or `name:N`.
fn parse_varspec(spec: &str) -> Result<VarSpec, (usize, String)> {
    let (name, prefix) = match spec.find([':', '*']) {
        None => (spec, None),
        Some(at) if spec[at..] == *"*" => (&spec[..at], None),
        Some(at) if spec.as_bytes()[at] == b':' => {
            let digits = &spec[at + 1..];
            let length = digits
                .bytes()
                .all(|byte| byte.is_ascii_digit())
                .then(|| digits.parse::<usize>().ok())
                .flatten()
                .filter(|length| (1..=MAX_PREFIX).contains(length))
                .filter(|_| !digits.starts_with('0'));
            match length {
                Some(length) => (&spec[..at], Some(length)),
                None => {
                    return Err((
                        at + 1,
                        format!(
                            "the prefix modifier of {:?} must be a number from 1 to {MAX_PREFIX}",
                            &spec[..at]
                        ),
                    ));
                }
            }
        }
        Some(at) => {
            return Err((
                at + 1,
                format!(
                    "nothing may follow the explode modifier of {:?}",
                    &spec[..at]
                ),
            ));
        }
    };
    check_name(name)?;
    Ok(VarSpec {
        name: name.to_owned(),
        prefix,
    })
}

/// The first `length` characters of `value`. Where reserved characters
/// pass through, a percent-encoded triplet counts as one character and is
/// never split.
fn first_characters(value: &str, length: usize, reserved: bool) -> &str {
    let bytes = value.as_bytes();
    let mut end = 0;
    for _ in 0..length {
        if end >= value.len() {
            break;
        }
        end += match value[end..].chars().next() {
            Some('%') if reserved && is_triplet(&bytes[end..]) => 3,
            Some(c) => c.len_utf8(),
            None => break,
        };
    }
    &value[..end]
}

/// A variable name: letters, digits, `_` and percent-encoded triplets, in
/// dot-separated runs.
fn check_name(name: &str) -> Result<(), (usize, String)> {
    if name.is_empty() {
        return Err((0, "an empty variable name".into()));
    }
    let bytes = name.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'%' if is_triplet(&bytes[at..]) => at += 3,
            b'.' if at > 0 && at + 1 < bytes.len() && bytes[at - 1] != b'.' => at += 1,
            byte if byte.is_ascii_alphanumeric() || byte == b'_' => at += 1,
            _ => {
                let shown = name[at..].chars().next().unwrap_or('?');
                return Err((
                    at,
                    format!("{shown:?} cannot be part of the variable name {name:?}"),
                ));
            }
        }
    }
    Ok(())
}

fn is_triplet(bytes: &[u8]) -> bool {
    bytes.len() >= 3 && bytes[1].is_ascii_hexdigit() && bytes[2].is_ascii_hexdigit()
}

fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

fn is_reserved(byte: u8) -> bool {
    matches!(
        byte,
        b':' | b'/'
            | b'?'
            | b'#'
            | b'['
            | b']'
            | b'@'
            | b'!'
            | b'$'
            | b'&'
            | b'\''
            | b'('
            | b')'
            | b'*'
            | b'+'
            | b','
            | b';'
            | b'='
    )
}

/// Appends `text`, percent-encoding every byte that is not unreserved (or,
/// with `reserved`, reserved or part of a percent-encoded triplet).
fn encode(out: &mut String, text: &str, reserved: bool) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if is_unreserved(byte) || (reserved && is_reserved(byte)) {
            out.push(byte as char);
        } else if reserved && byte == b'%' && is_triplet(&bytes[at..]) {
            out.push_str(&text[at..at + 3]);
            at += 3;
            continue;
        } else {
            out.push('%');
            out.push(HEX[usize::from(byte >> 4)] as char);
            out.push(HEX[usize::from(byte & 0xF)] as char);
        }
        at += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The variables of RFC 6570's examples (section 1.2).
    fn rfc_values() -> BTreeMap<&'static str, &'static str> {
        BTreeMap::from([
            ("var", "value"),
            ("hello", "Hello World!"),
            ("path", "/foo/bar"),
            ("empty", ""),
            ("x", "1024"),
            ("y", "768"),
        ])
    }

    fn expand(template: &str) -> String {
        UriTemplate::parse(template)
            .unwrap_or_else(|error| panic!("{error}"))
            .expand(&rfc_values())
    }

    #[test]
    fn level_1_examples_of_the_rfc() {
        for (template, expected) in [("{var}", "value"), ("{hello}", "Hello%20World%21")] {
            assert_eq!(expand(template), expected, "{template}");
        }
    }

    #[test]
    fn level_2_examples_of_the_rfc() {
        for (template, expected) in [
            ("{+var}", "value"),
            ("{+hello}", "Hello%20World!"),
            ("{+path}/here", "/foo/bar/here"),
            ("here?ref={+path}", "here?ref=/foo/bar"),
            ("X{#var}", "X#value"),
            ("X{#hello}", "X#Hello%20World!"),
        ] {
            assert_eq!(expand(template), expected, "{template}");
        }
    }

    #[test]
    fn level_3_examples_of_the_rfc() {
        for (template, expected) in [
            ("map?{x,y}", "map?1024,768"),
            ("{x,hello,y}", "1024,Hello%20World%21,768"),
            ("{+x,hello,y}", "1024,Hello%20World!,768"),
            ("{+path,x}/here", "/foo/bar,1024/here"),
            ("{#x,hello,y}", "#1024,Hello%20World!,768"),
            ("{#path,x}/here", "#/foo/bar,1024/here"),
            ("X{.var}", "X.value"),
            ("X{.x,y}", "X.1024.768"),
            ("{/var}", "/value"),
            ("{/var,x}/here", "/value/1024/here"),
            ("{;x,y}", ";x=1024;y=768"),
            ("{;x,y,empty}", ";x=1024;y=768;empty"),
            ("{?x,y}", "?x=1024&y=768"),
            ("{?x,y,empty}", "?x=1024&y=768&empty="),
            ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
            ("{&x,y,empty}", "&x=1024&y=768&empty="),
        ] {
            assert_eq!(expand(template), expected, "{template}");
        }
    }

    #[test]
    fn undefined_variables_are_left_out_with_their_prefix() {
        for (template, expected) in [
            ("a{undef}b", "ab"),
            ("{?undef}", ""),
            ("{?undef,x}", "?x=1024"),
            ("{/undef,var}", "/value"),
            ("X{.undef}", "X"),
            ("{#undef}", ""),
        ] {
            assert_eq!(expand(template), expected, "{template}");
        }
    }

    #[test]
    fn non_ascii_is_encoded_as_utf8_and_literals_are_kept() {
        let values = BTreeMap::from([("name", "café/ü")]);
        let template = UriTemplate::parse("file:///docs/{name}").expect("valid");
        assert_eq!(template.expand(&values), "file:///docs/caf%C3%A9%2F%C3%BC");
        let template = UriTemplate::parse("file:///{+name}").expect("valid");
        assert_eq!(template.expand(&values), "file:///caf%C3%A9/%C3%BC");
        // A percent-encoded triplet survives + and #, not a simple expansion.
        let values = BTreeMap::from([("v", "50%25 off")]);
        assert_eq!(
            UriTemplate::parse("{+v}|{v}")
                .expect("valid")
                .expand(&values),
            "50%25%20off%7C50%2525%20off"
        );
    }

    #[test]
    fn level_4_examples_of_the_rfc_with_string_values() {
        for (template, expected) in [
            ("{var:3}", "val"),
            ("{var:30}", "value"),
            ("{+path:6}/here", "/foo/b/here"),
            ("{#path:6}/here", "#/foo/b/here"),
            ("X{.var:3}", "X.val"),
            ("{/var:1,var}", "/v/value"),
            ("{;hello:5}", ";hello=Hello"),
            ("{?var:3}", "?var=val"),
            ("{&var:3}", "&var=val"),
            // An explode changes only lists and maps.
            ("{var*}", "value"),
            ("{+path*}", "/foo/bar"),
            ("{/path*}", "/%2Ffoo%2Fbar"),
            ("{?x*,y}", "?x=1024&y=768"),
        ] {
            assert_eq!(expand(template), expected, "{template}");
        }
    }

    #[test]
    fn a_prefix_counts_characters_and_never_splits_a_triplet() {
        let values = BTreeMap::from([("v", "éa%2Fbc")]);
        let expand = |template: &str| UriTemplate::parse(template).expect("valid").expand(&values);
        assert_eq!(expand("{v:1}"), "%C3%A9");
        // With `+`, `%2F` passes through as one character.
        assert_eq!(expand("{+v:3}"), "%C3%A9a%2F");
        // Without, `%` is a character of its own, encoded.
        assert_eq!(expand("{v:3}"), "%C3%A9a%25");
        assert_eq!(
            UriTemplate::parse("{a:2,b*}")
                .expect("valid")
                .variables()
                .collect::<Vec<_>>(),
            ["a", "b"]
        );
    }

    #[test]
    fn variables_are_listed_once_in_order() {
        let template = UriTemplate::parse("x{/b,a}{?b,c}").expect("valid");
        assert_eq!(template.variables().collect::<Vec<_>>(), ["b", "a", "c"]);
        assert_eq!(template.to_string(), "x{/b,a}{?b,c}");
    }

    #[test]
    fn malformed_templates_are_refused_naming_the_place() {
        for (template, position, says) in [
            ("a{b", 1, "without its '}'"),
            ("a}b", 1, "without its '{'"),
            ("a{}", 2, "empty expression"),
            ("{a{b}}", 2, "inside an expression"),
            ("{a,}", 3, "empty variable name"),
            ("{var:0}", 5, "from 1 to 9999"),
            ("{var:10000}", 5, "from 1 to 9999"),
            ("{var:}", 5, "from 1 to 9999"),
            ("{var:03}", 5, "from 1 to 9999"),
            ("{var:3*}", 5, "from 1 to 9999"),
            ("{var*:3}", 5, "follow the explode"),
            ("{var**}", 5, "follow the explode"),
            ("{:3}", 1, "empty variable name"),
            ("{=a}", 1, "reserved"),
            ("{a b}", 2, "cannot be part"),
            ("{a..b}", 3, "cannot be part"),
        ] {
            let error = UriTemplate::parse(template).expect_err(template);
            assert_eq!(error.position, position, "{template}: {error}");
            assert!(error.to_string().contains(says), "{template}: {error}");
        }
        assert!(UriTemplate::parse("{a.b,%41_1}").is_ok());
    }

    fn percent_decode(text: &str) -> Vec<u8> {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            if bytes[at] == b'%' {
                let hex = std::str::from_utf8(&bytes[at + 1..at + 3]).expect("ASCII");
                out.push(u8::from_str_radix(hex, 16).expect("hex"));
                at += 3;
            } else {
                out.push(bytes[at]);
                at += 1;
            }
        }
        out
    }

    proptest! {
        #[test]
        fn a_simple_expansion_is_unreserved_and_decodes_back(value in any::<String>()) {
            let values = BTreeMap::from([("v", value.as_str())]);
            let expanded = UriTemplate::parse("{v}").expect("valid").expand(&values);
            prop_assert!(expanded.bytes().all(|b| is_unreserved(b) || b == b'%'), "{}", expanded);
            prop_assert_eq!(percent_decode(&expanded), value.as_bytes());
        }

        #[test]
        fn a_query_expansion_keeps_values_apart(a in any::<String>(), b in any::<String>()) {
            let values = BTreeMap::from([("a", a.as_str()), ("b", b.as_str())]);
            let expanded = UriTemplate::parse("{?a,b}").expect("valid").expand(&values);
            let query = expanded.strip_prefix('?').expect("a query");
            let pairs: Vec<&str> = query.split('&').collect();
            prop_assert_eq!(pairs.len(), 2);
            let decoded: Vec<Vec<u8>> = pairs.iter().map(|pair| percent_decode(pair.split_once('=').map_or("", |(_, v)| v))).collect();
            prop_assert_eq!(&decoded[0], a.as_bytes());
            prop_assert_eq!(&decoded[1], b.as_bytes());
        }
    }
}
