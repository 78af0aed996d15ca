//! Issuing and verifying role tokens: HS256 JWTs with `sub`, `role`, `iat`, optional `exp`, `jti`,
//! `iss` and `aud`. Verification pins the algorithm; every failure looks the same to the caller.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::{Principal, Role};
use crate::clipboard::Coverage;
use crate::logging::refusal::Reason;
use crate::store::Epoch;

#[derive(Debug, Error)]
pub enum AuthError {
    /// Any bad token: the client sees a bare 401; the reason goes to the debug log only.
    #[error("invalid token")]
    Invalid,
    /// The key is unusable or a token could not be signed (never seen by a client).
    #[error("signing: {0}")]
    Signing(String),
}

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    role: Role,
    iat: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exp: Option<u64>,
    jti: String,
    iss: String,
    aud: String,
    /// The OAuth grant the token was issued under, if any: revoking it revokes the token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gid: Option<String>,
    /// The state database's epoch when the token was issued ([`Epoch`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ep: Option<String>,
    /// The tabs the token covers ([`Coverage`]); absent: all of them. Signed like the rest, so a
    /// client cannot widen it.
    #[serde(default, skip_serializing_if = "Coverage::is_all")]
    tabs: Coverage,
}

/// What a new token says: who, which role, for how long, for which audience and grant.
#[derive(Debug, Clone)]
pub struct TokenSpec<'a> {
    pub subject: &'a str,
    pub role: Role,
    pub ttl: Option<Duration>,
    /// `None`: the configured audience (tokens for scripts); OAuth tokens name the resource URL.
    pub audience: Option<&'a str>,
    pub grant: Option<&'a str>,
    pub tabs: &'a Coverage,
}

/// A token and the facts worth recording about it.
#[derive(Debug, Clone)]
pub struct Issued {
    pub token: String,
    pub jti: String,
    pub iat: u64,
    pub exp: Option<u64>,
}

/// Signs and checks tokens for one issuer and audience.
pub struct TokenService {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    issuer: String,
    audience: String,
    epoch: Option<Epoch>,
}

impl std::fmt::Debug for TokenService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenService")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A token id: 16 random bytes, base64url, never starting with `-`, so that `token revoke ID`
/// never reads an id as a flag.
fn new_id() -> Result<String, getrandom::Error> {
    loop {
        let mut id = [0u8; 16];
        getrandom::fill(&mut id)?;
        let id = URL_SAFE_NO_PAD.encode(id);
        if !id.starts_with('-') {
            return Ok(id);
        }
    }
}

impl TokenService {
    /// Tokens are issued for `audience` by default; any of `audience` and `also_accepted` verifies.
    pub fn new(key: &[u8], issuer: &str, audience: &str) -> Result<Self, AuthError> {
        Self::with_audiences(key, issuer, audience, &[])
    }

    pub fn with_audiences(
        key: &[u8],
        issuer: &str,
        audience: &str,
        also_accepted: &[&str],
    ) -> Result<Self, AuthError> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_issuer(&[issuer]);
        let mut audiences = vec![audience];
        audiences.extend_from_slice(also_accepted);
        validation.set_audience(&audiences);
        validation.set_required_spec_claims(&["sub", "iss", "aud"]);
        validation.validate_exp = true;
        validation.leeway = 0;
        let key_error = |e: jsonwebtoken::errors::Error| AuthError::Signing(e.to_string());
        Ok(Self {
            encoding: EncodingKey::from_secret(key).map_err(key_error)?,
            decoding: DecodingKey::from_secret(key).map_err(key_error)?,
            validation,
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
            epoch: None,
        })
    }

    /// Issue tokens in `epoch`, and accept only tokens of it.
    pub fn with_epoch(mut self, epoch: Epoch) -> Self {
        self.epoch = Some(epoch);
        self
    }

    /// A new token for `subject` with `role`, expiring after `ttl` if given.
    pub fn issue(
        &self,
        subject: &str,
        role: Role,
        ttl: Option<Duration>,
    ) -> Result<String, AuthError> {
        let spec = TokenSpec {
            subject,
            role,
            ttl,
            audience: None,
            grant: None,
            tabs: &Coverage::All,
        };
        self.issue_spec(&spec).map(|i| i.token)
    }

    pub fn issue_spec(&self, spec: &TokenSpec<'_>) -> Result<Issued, AuthError> {
        let iat = now();
        let jti = new_id().map_err(|e| AuthError::Signing(e.to_string()))?;
        let claims = Claims {
            sub: spec.subject.to_owned(),
            role: spec.role,
            iat,
            exp: spec.ttl.map(|t| iat.saturating_add(t.as_secs())),
            jti,
            iss: self.issuer.clone(),
            aud: spec.audience.unwrap_or(&self.audience).to_owned(),
            gid: spec.grant.map(str::to_owned),
            ep: self.epoch.as_ref().map(|e| e.id.clone()),
            tabs: spec.tabs.clone(),
        };
        let token = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .map_err(|e| AuthError::Signing(e.to_string()))?;
        Ok(Issued {
            token,
            jti: claims.jti,
            iat,
            exp: claims.exp,
        })
    }

    pub fn verify(&self, token: &str) -> Result<Principal, AuthError> {
        self.verify_why(token).map_err(|reason| {
            tracing::debug!(reason = reason.as_str(), "token refused");
            AuthError::Invalid
        })
    }

    /// As [`TokenService::verify`], saying why a token is refused (for the log, never the client).
    pub(crate) fn verify_why(&self, token: &str) -> Result<Principal, Reason> {
        use jsonwebtoken::errors::ErrorKind;
        let data = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
            .map_err(|e| match e.kind() {
                ErrorKind::ExpiredSignature => Reason::Expired,
                ErrorKind::InvalidSignature => Reason::BadSignature,
                ErrorKind::InvalidAudience => Reason::WrongAudience,
                ErrorKind::InvalidIssuer => Reason::WrongIssuer,
                _ => Reason::Malformed,
            })?;
        let c = data.claims;
        if let Some(epoch) = &self.epoch {
            let current = match &c.ep {
                Some(ep) => *ep == epoch.id,
                None => epoch.legacy,
            };
            if !current {
                return Err(Reason::OtherEpoch);
            }
        }
        Ok(Principal {
            subject: c.sub,
            role: c.role,
            token_id: c.jti,
            grant: c.gid,
            tabs: c.tabs,
            expires: c.exp,
        })
    }
}

/// A lifetime such as `30d`, `12h` or `90m`.
pub fn parse_ttl(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s).map_err(|e| format!("invalid duration '{s}': {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_never_look_like_flags() {
        // One id in 64 would start with '-' if nothing prevented it: 4,000 draws miss that
        // with a probability of about 1e-27.
        for _ in 0..4000 {
            let id = new_id().unwrap();
            assert!(!id.starts_with('-'), "{id}");
            assert_eq!(id.len(), 22);
        }
    }

    #[test]
    fn tokens_are_valid_in_their_epoch_only() {
        let key = [7u8; 32];
        let in_epoch = |id: &str, legacy| {
            TokenService::new(&key, "copyq-mcp", "copyq-mcp")
                .unwrap()
                .with_epoch(Epoch {
                    id: id.into(),
                    legacy,
                })
        };
        let old = in_epoch("e1", false);
        let t = old.issue("laptop", Role::Read, None).unwrap();
        assert!(old.verify(&t).is_ok());
        assert!(in_epoch("e2", true).verify(&t).is_err(), "a new database");
        let plain = TokenService::new(&key, "copyq-mcp", "copyq-mcp").unwrap();
        let no_epoch = plain.issue("old", Role::Read, None).unwrap();
        assert!(
            in_epoch("e1", true).verify(&no_epoch).is_ok(),
            "an upgraded database"
        );
        assert!(
            in_epoch("e1", false).verify(&no_epoch).is_err(),
            "a fresh one"
        );
    }

    const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

    fn svc() -> TokenService {
        TokenService::new(KEY, "copyq-mcp", "copyq-mcp").unwrap()
    }

    fn forge(claims: serde_json::Value, header: Header, key: &[u8]) -> String {
        jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(key).unwrap()).unwrap()
    }

    #[test]
    fn round_trip_keeps_role_and_subject() {
        let t = svc()
            .issue("laptop", Role::Write, Some(Duration::from_secs(60)))
            .unwrap();
        let p = svc().verify(&t).unwrap();
        assert_eq!((p.subject.as_str(), p.role), ("laptop", Role::Write));
        let t = svc().issue("script", Role::Read, None).unwrap();
        assert_eq!(svc().verify(&t).unwrap().role, Role::Read);
    }

    #[test]
    fn bad_tokens_are_refused() {
        let base = serde_json::json!({"sub": "x", "role": "write", "iat": now(), "jti": "j", "iss": "copyq-mcp", "aud": "copyq-mcp"});
        let mut expired = base.clone();
        expired["exp"] = (now() - 10).into();
        let mut wrong_aud = base.clone();
        wrong_aud["aud"] = "other".into();
        let mut wrong_iss = base.clone();
        wrong_iss["iss"] = "other".into();
        let mut bad_role = base.clone();
        bad_role["role"] = "admin".into();
        let h = Header::new(Algorithm::HS256);
        for token in [
            forge(expired, h.clone(), KEY),
            forge(wrong_aud, h.clone(), KEY),
            forge(wrong_iss, h.clone(), KEY),
            forge(bad_role, h.clone(), KEY),
            forge(base.clone(), Header::new(Algorithm::HS384), KEY),
            forge(base.clone(), h.clone(), b"another-key-another-key-another-"),
            "not.a.token".to_owned(),
            String::new(),
        ] {
            assert!(svc().verify(&token).is_err(), "{token}");
        }
        assert!(svc().verify(&forge(base, h, KEY)).is_ok());
    }

    #[test]
    fn the_tabs_a_token_covers_travel_in_it_and_cannot_be_bent() {
        let managed = Coverage::managed();
        let spec = TokenSpec {
            subject: "agent",
            role: Role::Read,
            ttl: None,
            audience: None,
            grant: None,
            tabs: &managed,
        };
        let t = svc().issue_spec(&spec).unwrap().token;
        assert_eq!(svc().verify(&t).unwrap().tabs, managed);
        let all = svc().issue("laptop", Role::Read, None).unwrap();
        assert_eq!(svc().verify(&all).unwrap().tabs, Coverage::All);
        // The claim is absent for all tabs, so tokens issued before coverage mean what they did.
        let payload = |t: &str| {
            let part = t.split('.').nth(1).unwrap().to_owned();
            String::from_utf8(URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
        };
        assert!(!payload(&all).contains("tabs"), "{}", payload(&all));
        assert!(
            payload(&t).contains(r#""tabs":{"mcp":[""]}"#),
            "{}",
            payload(&t)
        );
        // A claim we did not write is refused, even signed with our key.
        let base = serde_json::json!({"sub": "x", "role": "read", "iat": now(), "jti": "j", "iss": "copyq-mcp", "aud": "copyq-mcp"});
        for odd in [
            serde_json::json!("all"),
            serde_json::json!({"every": true}),
            serde_json::json!([""]),
        ] {
            let mut claims = base.clone();
            claims["tabs"] = odd.clone();
            let forged = forge(claims, Header::new(Algorithm::HS256), KEY);
            assert!(svc().verify(&forged).is_err(), "{odd}");
        }
    }

    #[test]
    fn alg_none_is_refused() {
        let enc = |v: serde_json::Value| URL_SAFE_NO_PAD.encode(v.to_string());
        let token = format!(
            "{}.{}.",
            enc(serde_json::json!({"alg": "none", "typ": "JWT"})),
            enc(
                serde_json::json!({"sub": "x", "role": "write", "iat": 0, "jti": "j", "iss": "copyq-mcp", "aud": "copyq-mcp"})
            )
        );
        assert!(svc().verify(&token).is_err());
    }

    #[test]
    fn ttl_parses() {
        assert_eq!(parse_ttl("30d").unwrap(), Duration::from_secs(30 * 86400));
        assert!(parse_ttl("soon").is_err());
    }
}
