//! The `-e KEY=VALUE` and `-H 'Name: value'` entries, checked and split.
//! A malformed entry is named by its name, never by its value, which may be
//! a secret. It knows nothing of which server they go to.

use crate::failure::Failure;

/// `-e KEY=VALUE` entries.
pub fn parse_env(entries: &[String]) -> Result<Vec<(String, String)>, Failure> {
    entries
        .iter()
        .map(|entry| match entry.split_once('=') {
            Some((key, value)) if is_env_name(key) => Ok((key.to_owned(), value.to_owned())),
            // The entry is not echoed: its value may be a secret.
            _ => Err(Failure::usage(format!(
                "-e {}: expected KEY=VALUE with a name of letters, digits and '_', \
                 e.g. -e API_KEY=secret",
                shown_name(entry, '=')
            ))),
        })
        .collect()
}

/// How a malformed `-e`/`-H` entry is named in an error: by the part before
/// `separator` (the name), never by its value, which may be a secret.
fn shown_name(entry: &str, separator: char) -> String {
    match entry.split_once(separator) {
        Some((name, _)) => format!("{:?} (value not shown)", name.trim()),
        None => format!(
            "entry of {} characters (not shown: it may hold a secret)",
            entry.chars().count()
        ),
    }
}

fn is_env_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// `-H 'Name: value'` entries.
pub fn parse_headers(entries: &[String]) -> Result<Vec<(String, String)>, Failure> {
    entries
        .iter()
        .map(|entry| {
            // The entry is not echoed: its value may be a secret.
            let malformed = |why: &str| {
                Failure::usage(format!(
                    "-H {}: {why}; write it as 'Name: value', e.g. -H 'Authorization: \
                     Bearer TOKEN'",
                    shown_name(entry, ':')
                ))
            };
            let Some((name, value)) = entry.split_once(':') else {
                return Err(malformed("no ':' between the name and the value"));
            };
            let name = name.trim();
            if name.is_empty() {
                return Err(malformed("the header name is empty"));
            }
            if !name.bytes().all(is_token_byte) {
                return Err(malformed(
                    "the header name may hold only letters, digits and !#$%&'*+-.^_`|~",
                ));
            }
            let value = value.trim();
            if value.chars().any(|c| c.is_control() && c != '\t') {
                return Err(malformed("the value contains control characters"));
            }
            Ok((name.to_owned(), value.to_owned()))
        })
        .collect()
}

/// A character allowed in an HTTP header name (RFC 9110 `tchar`).
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::usage_message;

    #[test]
    fn env_entries_need_a_name_and_an_equals_sign() {
        assert_eq!(
            parse_env(&["A=1".into(), "B_2=x=y".into(), "EMPTY=".into()]).expect("valid"),
            [
                ("A".into(), "1".into()),
                ("B_2".into(), "x=y".into()),
                ("EMPTY".into(), String::new())
            ]
        );
        for bad in ["NOVALUE", "=1", "1A=x", "A B=x"] {
            let message = usage_message(parse_env(&[bad.into()]));
            assert!(message.contains("expected KEY=VALUE"), "{bad}: {message}");
        }
    }

    #[test]
    fn headers_need_a_valid_name_and_a_colon() {
        assert_eq!(
            parse_headers(&["Authorization:  Bearer a:b ".into(), "X-Empty:".into()])
                .expect("valid"),
            [
                ("Authorization".into(), "Bearer a:b".into()),
                ("X-Empty".into(), String::new())
            ]
        );
        for (bad, why) in [
            ("Authorization Bearer x", "no ':'"),
            (": x", "name is empty"),
            ("Bad Name: x", "may hold only"),
            ("X: a\u{1}b", "control characters"),
        ] {
            let message = usage_message(parse_headers(&[bad.into()]));
            assert!(message.contains(why), "{bad}: {message}");
            assert!(message.contains("'Name: value'"), "{message}");
        }
    }
}
