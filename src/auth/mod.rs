//! Who is calling: role-carrying bearer tokens (HS256 JWTs) and their signing key. The HTTP side
//! (`http::bearer`) turns an `Authorization: Bearer` header into a [`Principal`], or a bare 401.

mod keys;
mod token;

use serde::{Deserialize, Serialize};

pub use crate::clipboard::Coverage;
pub(crate) use keys::inline_key;
pub use keys::{Secret, load_or_create_key};
pub use token::{AuthError, Issued, TokenService, TokenSpec, parse_ttl};

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// `mcp_read` and `mcp_validate`.
    Read,
    /// Everything `Read` may, plus `mcp_write`.
    Write,
}

impl Role {
    pub fn can_write(self) -> bool {
        matches!(self, Self::Write)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "read" => Some(Self::Read),
            "write" => Some(Self::Write),
            _ => None,
        }
    }
}

/// The verified caller of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The token's `sub`: a name the owner gave it.
    pub subject: String,
    pub role: Role,
    /// The token's `jti`, for revocation.
    pub token_id: String,
    /// The OAuth grant it was issued under, if any.
    pub grant: Option<String>,
    /// The tabs it covers: others do not exist for it.
    pub tabs: crate::clipboard::Coverage,
    /// The token's `exp` (Unix seconds), verified: what lives past the request (a subscription)
    /// ends then.
    pub expires: Option<u64>,
}

impl Principal {
    /// Who this caller is across token renewals: its OAuth grant (a refresh mints a new token
    /// id, never a new grant), else the name the owner gave the token. Rate limits and sessions
    /// belong to this.
    pub fn owner_key(&self) -> String {
        match &self.grant {
            Some(grant) => format!("grant:{grant}"),
            None => format!("sub:{}", self.subject),
        }
    }
}
