//! `Challenge`: the `Bearer` challenge of a `WWW-Authenticate` header
//! (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1).

/// What a server's `Bearer` challenge says: where its protected-resource
/// metadata is, which scopes the request needs, and why it was refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Challenge {
    /// `resource_metadata`: the URL of the protected-resource metadata.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the refused request needs, space-separated.
    pub scope: Option<String>,
    /// `error`, e.g. `invalid_token` or `insufficient_scope`.
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

impl Challenge {
    /// Reads the `Bearer` challenge of a `WWW-Authenticate` header value;
    /// `None` when the header has no `Bearer` challenge. Unknown parameters
    /// and other schemes' challenges are skipped.
    ///
    /// ```
    /// use golem_mcp_auth::Challenge;
    ///
    /// let challenge = Challenge::parse(
    ///     r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource""#,
    /// ).expect("valid test input");
    /// assert_eq!(challenge.scope.as_deref(), Some("files:read files:write"));
    /// assert!(challenge.is_insufficient_scope());
    /// ```
    pub fn parse(header: &str) -> Option<Challenge> {
        let mut parser = Parser { rest: header };
        let mut found: Option<Challenge> = None;
        let mut in_bearer = false;
        loop {
            parser.skip_separators();
            let Some(word) = parser.token() else {
                break;
            };
            parser.skip_spaces();
            if parser.peek() == Some('=') {
                // An auth-param of the current challenge.
                parser.bump();
                parser.skip_spaces();
                let value = parser.value();
                if in_bearer && let Some(challenge) = found.as_mut() {
                    challenge.set(&word, value);
                }
            } else {
                // A new challenge's scheme.
                in_bearer = word.eq_ignore_ascii_case("bearer") && found.is_none();
                if in_bearer {
                    found = Some(Challenge::default());
                }
                // A token68 after the scheme, if any, is not ours to read.
            }
        }
        found
    }

    /// Whether the server said the token lacks scopes (`403` with
    /// `error="insufficient_scope"`): a step-up authorization may help.
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }

    fn set(&mut self, name: &str, value: String) {
        let slot = match name.to_ascii_lowercase().as_str() {
            "resource_metadata" => &mut self.resource_metadata,
            "scope" => &mut self.scope,
            "error" => &mut self.error,
            "error_description" => &mut self.error_description,
            _ => return,
        };
        *slot = Some(value);
    }
}

struct Parser<'a> {
    rest: &'a str,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.rest.chars().next()
    }

    fn bump(&mut self) {
        let mut chars = self.rest.chars();
        chars.next();
        self.rest = chars.as_str();
    }

    fn skip_spaces(&mut self) {
        self.rest = self.rest.trim_start_matches([' ', '\t']);
    }

    fn skip_separators(&mut self) {
        self.rest = self.rest.trim_start_matches([' ', '\t', ',']);
    }

    /// A token (RFC 9110 `tchar`s; `/` and `=`-free token68 characters
    /// other than those are skipped as one word too).
    fn token(&mut self) -> Option<String> {
        let end = self
            .rest
            .find(['=', ',', ' ', '\t', '"'])
            .unwrap_or(self.rest.len());
        if end == 0 {
            // A stray quote or `=`: skip one character.
            if self.rest.is_empty() {
                return None;
            }
            self.bump();
            return Some(String::new());
        }
        let (word, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(word.to_owned())
    }

    /// A token or a quoted string (with `\` escapes).
    fn value(&mut self) -> String {
        if self.peek() != Some('"') {
            let end = self.rest.find([',', ' ', '\t']).unwrap_or(self.rest.len());
            let (value, rest) = self.rest.split_at(end);
            self.rest = rest;
            return value.to_owned();
        }
        self.bump();
        let mut value = String::new();
        let mut chars = self.rest.char_indices();
        while let Some((index, c)) = chars.next() {
            match c {
                '"' => {
                    self.rest = &self.rest[index + 1..];
                    return value;
                }
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(escaped);
                    }
                }
                c => value.push(c),
            }
        }
        self.rest = "";
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_parameters_of_the_bearer_challenge() {
        let challenge = Challenge::parse(
            r#"Bearer realm="mcp", error="invalid_token", error_description="The token \"x\" expired", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/mcp", scope=files:read"#,
        )
        .expect("valid test input");
        assert_eq!(challenge.error.as_deref(), Some("invalid_token"));
        assert_eq!(
            challenge.error_description.as_deref(),
            Some(r#"The token "x" expired"#)
        );
        assert_eq!(
            challenge.resource_metadata.as_deref(),
            Some("http://localhost:3000/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(challenge.scope.as_deref(), Some("files:read"));
        assert!(!challenge.is_insufficient_scope());
    }

    #[test]
    fn skips_other_schemes_and_finds_bearer_among_them() {
        let challenge = Challenge::parse(
            r#"Basic realm="x", DPoP algs="ES256", Bearer scope="a b", error="insufficient_scope""#,
        )
        .expect("valid test input");
        assert_eq!(challenge.scope.as_deref(), Some("a b"));
        assert!(challenge.is_insufficient_scope());
        assert_eq!(challenge.resource_metadata, None);
    }

    #[test]
    fn a_bare_bearer_scheme_is_an_empty_challenge() {
        assert_eq!(Challenge::parse("Bearer"), Some(Challenge::default()));
        assert_eq!(Challenge::parse("bearer  "), Some(Challenge::default()));
    }

    #[test]
    fn no_bearer_challenge_is_none() {
        assert_eq!(Challenge::parse(r#"Basic realm="x""#), None);
        assert_eq!(Challenge::parse(""), None);
    }

    #[test]
    fn malformed_headers_do_not_panic() {
        for header in [
            "Bearer scope=\"unterminated",
            "Bearer ==,,\"\"",
            "Bearer scope=",
            "=\"",
            "Bearer a=\"\\",
        ] {
            let _ = Challenge::parse(header);
        }
        assert_eq!(
            Challenge::parse("Bearer scope=\"unterminated").and_then(|c| c.scope),
            Some("unterminated".to_owned())
        );
    }
}
