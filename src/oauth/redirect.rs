//! Which redirect URIs a client may register: https, or http on a loopback host (native and CLI
//! clients), without a fragment, and at an origin the owner allows (by default the Claude and
//! ChatGPT callbacks and loopback, any port).

use url::Url;

use crate::public::is_loopback;

#[derive(Debug, Clone)]
pub struct RedirectPolicy {
    origins: Vec<String>,
}

/// Whether the redirect URI an authorization request names is one the client registered: the
/// same, or, for a loopback `http` URI registered without a port, the same on any port (RFC 8252
/// section 7.3: a native app listens on whatever port it gets; Claude Code's metadata document
/// registers `http://localhost/callback` and asks for `http://localhost:PORT/callback`).
pub fn registered(registered: &str, asked: &str) -> bool {
    if registered == asked {
        return true;
    }
    let (Ok(reg), Ok(mut ask)) = (Url::parse(registered), Url::parse(asked)) else {
        return false;
    };
    if reg.scheme() != "http" || !is_loopback(&reg) || reg.port().is_some() || ask.port().is_none()
    {
        return false;
    }
    ask.set_port(None).is_ok() && ask == reg
}

impl RedirectPolicy {
    /// `origins`: `scheme://host[:port]` entries; a loopback entry without a port allows any port;
    /// `*` allows any https origin.
    pub fn new(origins: Vec<String>) -> Self {
        Self { origins }
    }

    fn allowed_origin(&self, url: &Url) -> bool {
        let origin = url.origin().ascii_serialization();
        self.origins.iter().any(|o| {
            if o == "*" {
                return url.scheme() == "https";
            }
            let Ok(allowed) = Url::parse(o) else {
                return false;
            };
            if allowed.port().is_none() && is_loopback(&allowed) {
                allowed.scheme() == url.scheme() && allowed.host() == url.host()
            } else {
                allowed.origin().ascii_serialization() == origin
            }
        })
    }

    /// Why `uri` may not be registered, if it may not.
    pub fn check(&self, uri: &str) -> Result<(), String> {
        let url =
            Url::parse(uri).map_err(|_| format!("redirect URI '{uri}' is not an absolute URL"))?;
        if url.fragment().is_some() {
            return Err(format!("redirect URI '{uri}' has a fragment"));
        }
        match url.scheme() {
            "https" => {}
            "http" if is_loopback(&url) => {}
            _ => {
                return Err(format!(
                    "redirect URI '{uri}' must be https, or http on a loopback address"
                ));
            }
        }
        if !self.allowed_origin(&url) {
            return Err(format!(
                "redirect URI '{uri}' is not at an allowed origin (oauth.redirect_origins)"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default_policy() -> RedirectPolicy {
        RedirectPolicy::new(
            [
                "https://claude.ai",
                "https://claude.com",
                "https://chatgpt.com",
                "http://127.0.0.1",
                "http://localhost",
                "http://[::1]",
            ]
            .map(String::from)
            .to_vec(),
        )
    }

    #[test]
    fn known_connectors_and_loopback_pass() {
        let p = default_policy();
        for ok in [
            "https://claude.ai/api/mcp/auth_callback",
            "https://claude.com/api/mcp/auth_callback",
            "https://chatgpt.com/connector_platform_oauth_redirect",
            "http://127.0.0.1:33418/callback",
            "http://localhost:6274/oauth/callback",
            "http://[::1]:9/cb",
        ] {
            assert_eq!(p.check(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn loopback_uris_registered_without_a_port_match_any_port() {
        for (reg, asked) in [
            (
                "http://localhost/callback",
                "http://localhost:52345/callback",
            ),
            ("http://127.0.0.1/callback", "http://127.0.0.1:1/callback"),
            ("http://[::1]/cb", "http://[::1]:8080/cb"),
            (
                "https://claude.ai/api/mcp/auth_callback",
                "https://claude.ai/api/mcp/auth_callback",
            ),
        ] {
            assert!(registered(reg, asked), "{reg} / {asked}");
        }
        for (reg, asked) in [
            (
                "http://localhost:3000/callback",
                "http://localhost:3001/callback",
            ),
            ("http://localhost/callback", "http://localhost:5/other"),
            (
                "http://localhost/callback",
                "http://localhost:5/callback?x=1",
            ),
            ("http://localhost/callback", "http://127.0.0.1:5/callback"),
            ("https://claude.ai/cb", "https://claude.ai:8443/cb"),
            ("http://example.com/cb", "http://example.com:80/cb"),
            ("http://localhost/callback", "http://localhost/callback/"),
        ] {
            assert!(!registered(reg, asked), "{reg} / {asked}");
        }
    }

    #[test]
    fn others_are_refused() {
        let p = default_policy();
        for bad in [
            "http://claude.ai/api/mcp/auth_callback",
            "https://evil.example/cb",
            "https://claude.ai.evil.example/cb",
            "https://claude.ai/cb#frag",
            "http://192.168.1.5/cb",
            "javascript:alert(1)",
            "custom-scheme:/cb",
            "/relative",
        ] {
            assert!(p.check(bad).is_err(), "{bad}");
        }
        let any = RedirectPolicy::new(vec!["*".into()]);
        assert_eq!(any.check("https://my.example/cb"), Ok(()));
        assert_eq!(
            any.check("http://my.example/cb"),
            Err(
                "redirect URI 'http://my.example/cb' must be https, or http on a loopback address"
                    .into()
            )
        );
    }
}
