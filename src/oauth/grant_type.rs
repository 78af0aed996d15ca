//! The OAuth grant types the gateway serves, named once: the metadata advertises these, a
//! registration may ask for these, and `/token` takes these, each parsed from its string once.

/// A grant type of RFC 6749 this gateway serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantType {
    AuthorizationCode,
    RefreshToken,
}

impl GrantType {
    /// Every grant type served, in the order the metadata lists them.
    pub const ALL: [Self; 2] = [Self::AuthorizationCode, Self::RefreshToken];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::AuthorizationCode => "authorization_code",
            Self::RefreshToken => "refresh_token",
        }
    }

    /// `None` for a grant type the gateway does not serve.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|g| g.as_str() == s)
    }

    /// The names of [`Self::ALL`], joined by `sep` (for the refusals that list them).
    pub fn listed(sep: &str) -> String {
        Self::ALL.map(Self::as_str).join(sep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grant_type_parses_back_from_its_name() {
        for g in GrantType::ALL {
            assert_eq!(GrantType::parse(g.as_str()), Some(g));
        }
        assert_eq!(GrantType::parse("client_credentials"), None);
        assert_eq!(GrantType::parse(""), None);
        assert_eq!(
            GrantType::listed(" or "),
            "authorization_code or refresh_token"
        );
    }
}
