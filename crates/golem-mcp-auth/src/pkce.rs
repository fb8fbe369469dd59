//! PKCE (RFC 7636, `S256`) and `state`: random values from the operating
//! system's CSPRNG.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use reqwest::Url;

use crate::error::AuthError;
use crate::secret::Secret;

/// A PKCE verifier and its `S256` challenge.
#[derive(Debug)]
pub(crate) struct Pkce {
    pub(crate) verifier: Secret,
    pub(crate) challenge: String,
}

impl Pkce {
    /// A fresh verifier (32 random bytes: 43 base64url characters, within
    /// RFC 7636's 43..=128) and its challenge.
    pub(crate) fn new() -> Result<Pkce, AuthError> {
        let verifier = random_token()?;
        let challenge = s256(&verifier);
        Ok(Pkce {
            verifier: Secret::new(verifier),
            challenge,
        })
    }
}

/// `BASE64URL(SHA256(verifier))`.
pub(crate) fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// 32 bytes from the OS's CSPRNG, base64url-encoded: a verifier or a
/// `state`.
pub(crate) fn random_token() -> Result<String, AuthError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| AuthError::UserAgent {
        detail: format!("the operating system's random number generator failed: {error}"),
    })?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// Checks the `state` of a redirect.
pub(crate) fn check_state(redirect: &Url, expected: &str) -> Result<(), AuthError> {
    let state = redirect
        .query_pairs()
        .find(|(name, _)| name == "state")
        .map(|(_, value)| value);
    match state.as_deref() == Some(expected) {
        true => Ok(()),
        false => Err(AuthError::UserAgent {
            detail:
                "the redirect's state is not the one sent; refusing it (a forged or stale redirect)"
                    .to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_is_the_rfc_7636_example() {
        // RFC 7636, Appendix B.
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifiers_are_fresh_and_in_the_allowed_alphabet() {
        let first = Pkce::new().expect("valid test input");
        let second = Pkce::new().expect("valid test input");
        assert_ne!(first.verifier, second.verifier);
        let verifier = first.verifier.expose();
        assert_eq!(verifier.len(), 43);
        assert!(
            verifier
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert_eq!(first.challenge, s256(verifier));
        assert!(!format!("{first:?}").contains(verifier));
    }
}
