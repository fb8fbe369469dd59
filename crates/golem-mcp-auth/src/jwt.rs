//! `private_key_jwt` (RFC 7523 §2.2): the client proves who it is with an
//! assertion signed by its private key.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Serialize;

use crate::error::AuthError;
use crate::pkce::random_token;

/// How long an assertion is valid.
const LIFETIME_SECS: u64 = 300;

/// The signature algorithms of client assertions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SigningAlgorithm {
    /// ECDSA with P-256 and SHA-256.
    Es256,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
}

/// A private key that signs client assertions. `Debug` shows only its
/// algorithm.
#[derive(Clone)]
pub struct SigningKey {
    algorithm: SigningAlgorithm,
    key: EncodingKey,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// Reads a PEM private key (PKCS#8, or SEC1 for EC and PKCS#1 for
    /// RSA) for `algorithm`. The error never quotes the key.
    pub fn from_pem(pem: &str, algorithm: SigningAlgorithm) -> Result<Self, AuthError> {
        let key = match algorithm {
            SigningAlgorithm::Es256 => EncodingKey::from_ec_pem(pem.as_bytes()),
            SigningAlgorithm::Rs256 => EncodingKey::from_rsa_pem(pem.as_bytes()),
        }
        .map_err(|error| AuthError::InvalidConfig {
            field: "private key",
            problem: format!("not a PEM {algorithm:?} private key ({:?})", error.kind()),
        })?;
        Ok(SigningKey { algorithm, key })
    }

    /// A fresh assertion by `client_id` for `audience` (the authorization
    /// server's issuer).
    pub(crate) fn assertion(&self, client_id: &str, audience: &str) -> Result<String, AuthError> {
        #[derive(Serialize)]
        struct Claims<'a> {
            iss: &'a str,
            sub: &'a str,
            aud: &'a str,
            iat: u64,
            exp: u64,
            jti: String,
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        let claims = Claims {
            iss: client_id,
            sub: client_id,
            aud: audience,
            iat: now,
            exp: now + LIFETIME_SECS,
            jti: random_token()?,
        };
        let algorithm = match self.algorithm {
            SigningAlgorithm::Es256 => Algorithm::ES256,
            SigningAlgorithm::Rs256 => Algorithm::RS256,
        };
        jsonwebtoken::encode(&Header::new(algorithm), &claims, &self.key).map_err(|error| {
            AuthError::InvalidConfig {
                field: "private key",
                problem: format!("cannot sign the client assertion ({:?})", error.kind()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};

    // Throwaway keys made for these tests (`testdata/`), used nowhere else.
    const ES256_KEY: &str = include_str!("testdata/es256-test-key.pem");
    const ES256_PUBLIC: &str = include_str!("testdata/es256-test-key.pub.pem");
    const RS256_KEY: &str = include_str!("testdata/rs256-test-key.pem");
    const RS256_PUBLIC: &str = include_str!("testdata/rs256-test-key.pub.pem");

    #[test]
    fn assertions_are_signed_by_the_client_for_the_issuer() {
        for (key, public, algorithm, alg) in [
            (
                ES256_KEY,
                ES256_PUBLIC,
                SigningAlgorithm::Es256,
                Algorithm::ES256,
            ),
            (
                RS256_KEY,
                RS256_PUBLIC,
                SigningAlgorithm::Rs256,
                Algorithm::RS256,
            ),
        ] {
            let key = SigningKey::from_pem(key, algorithm).expect("a PEM key");
            assert!(!format!("{key:?}").contains("BEGIN"));
            let assertion = key
                .assertion("my-client", "https://auth.example.com")
                .expect("signed");
            let decoding = match algorithm {
                SigningAlgorithm::Es256 => DecodingKey::from_ec_pem(public.as_bytes()),
                SigningAlgorithm::Rs256 => DecodingKey::from_rsa_pem(public.as_bytes()),
            }
            .expect("a public key");
            let mut validation = Validation::new(alg);
            validation.set_audience(&["https://auth.example.com"]);
            validation.set_issuer(&["my-client"]);
            validation.sub = Some("my-client".to_owned());
            let decoded =
                jsonwebtoken::decode::<serde_json::Value>(&assertion, &decoding, &validation)
                    .expect("valid");
            assert!(
                decoded.claims["jti"]
                    .as_str()
                    .is_some_and(|jti| jti.len() >= 32)
            );
        }
    }

    #[test]
    fn a_key_of_the_other_algorithm_is_refused() {
        assert!(SigningKey::from_pem(RS256_KEY, SigningAlgorithm::Es256).is_err());
        assert!(SigningKey::from_pem(ES256_KEY, SigningAlgorithm::Rs256).is_err());
    }

    #[test]
    fn a_key_that_is_not_pem_is_refused_without_being_quoted() {
        let error = SigningKey::from_pem("not-a-key-secret-material", SigningAlgorithm::Es256)
            .expect_err("not PEM");
        assert!(matches!(error, AuthError::InvalidConfig { .. }));
        assert!(!error.to_string().contains("secret-material"), "{error}");
    }
}
