//! Why a metadata document could not be fetched, in words the owner can act on: the cause of a
//! failed connection (DNS, refused, no route, TLS, the proxy) read from the error chain, and
//! what to do about each kind of failure.

use std::error::Error;
use std::io::ErrorKind;

use super::CimdError;

/// The message the public-only resolver fails with (`public.rs`): matched to name the cause.
const NO_PUBLIC_ADDRESS: &str = "the name resolves to no public address";

/// What stopped a connection to `host` (or to it through `proxy`), from the error chain of the
/// failed request. The chain is walked rather than matched on types: hyper-util exports neither
/// its connect nor its tunnel error.
pub(super) fn connect_failure(
    e: &(dyn Error + 'static),
    host: &str,
    proxy: Option<&str>,
) -> CimdError {
    let mut texts = Vec::new();
    let mut next = Some(e);
    while let Some(err) = next {
        if let Some(found) = err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io_cause(io, host))
        {
            return found;
        }
        if let Some(tls) = err.downcast_ref::<rustls::Error>() {
            return tls_failure(tls, host);
        }
        texts.push(err.to_string());
        next = err.source();
    }
    let said = |what: &str| texts.iter().any(|t| t.contains(what));
    let unreachable = |why: String| CimdError::Unreachable(why);
    match proxy {
        Some(proxy) if said("failed to create underlying connection") => {
            unreachable(format!("cannot connect to the proxy {proxy} (HTTPS_PROXY)"))
        }
        Some(proxy) if said("proxy authorization required") => {
            unreachable(format!("the proxy {proxy} asks for a login (HTTPS_PROXY)"))
        }
        Some(proxy) if said("tunnel error") => unreachable(format!(
            "the proxy {proxy} would not open a tunnel to {host}:443 (it cannot resolve or \
             reach it, or refuses to)"
        )),
        _ if said("dns error") => unreachable(format!(
            "the name {host} does not resolve here (DNS: {})",
            texts.last().map_or("no answer", String::as_str)
        )),
        _ => unreachable(format!(
            "cannot connect to {host} over https ({})",
            texts.last().map_or("no detail", String::as_str)
        )),
    }
}

fn io_cause(io: &std::io::Error, host: &str) -> Option<CimdError> {
    if let Some(tls) = io.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        return Some(tls_failure(tls, host));
    }
    if io.to_string() == NO_PUBLIC_ADDRESS {
        return Some(CimdError::NotPublic(format!(
            "its address is not public ({host} resolves only to loopback, private or other \
             non-public addresses)"
        )));
    }
    let why = match io.kind() {
        ErrorKind::ConnectionRefused => {
            format!("{host} refused the connection (nothing listens on its https port)")
        }
        ErrorKind::HostUnreachable | ErrorKind::NetworkUnreachable => {
            format!("there is no route to {host} from this machine")
        }
        ErrorKind::TimedOut => format!("connecting to {host} timed out"),
        ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted => {
            format!("{host} closed the connection")
        }
        _ => return None,
    };
    Some(CimdError::Unreachable(why))
}

fn tls_failure(tls: &rustls::Error, host: &str) -> CimdError {
    CimdError::Unreachable(format!("the TLS handshake with {host} failed: {tls}"))
}

impl CimdError {
    /// What the owner can do about it, for the consent page and the log.
    pub fn remedy(&self) -> &'static str {
        match self {
            Self::Unreachable(_) => {
                "if this machine reaches the internet only through a proxy, start the gateway \
                 with HTTPS_PROXY set (and NO_PROXY for hosts to reach directly); or connect the \
                 app as a registered client instead: the README's \"When an app's metadata \
                 document cannot be fetched\" gives the commands for Claude Code and Codex"
            }
            Self::NotPublic(_) => {
                "documents are fetched from public addresses only; for an app whose document is \
                 served on your own network, set oauth.metadata_document_allow_private = true"
            }
            Self::BadUrl(_) | Self::Fetch(_) | Self::Invalid(_) => {
                "the app's developers publish this document; meanwhile connect the app as a \
                 registered client: see the README's \"When an app's metadata document cannot \
                 be fetched\""
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_named() {
        let refused = std::io::Error::from(ErrorKind::ConnectionRefused);
        let got = connect_failure(&refused, "docs.example", None);
        assert_eq!(
            got.to_string(),
            "the client's metadata document could not be fetched: docs.example refused the \
             connection (nothing listens on its https port)"
        );
        let private = std::io::Error::other(NO_PUBLIC_ADDRESS);
        assert!(matches!(
            connect_failure(&private, "localhost", None),
            CimdError::NotPublic(_)
        ));
        let tls = std::io::Error::new(
            ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        );
        let got = connect_failure(&tls, "docs.example", None).to_string();
        assert!(
            got.contains("the TLS handshake with docs.example failed"),
            "{got}"
        );
    }

    /// The resolver's refusal is recognised by its message: keep the two in step.
    #[tokio::test]
    #[cfg_attr(
        windows,
        ignore = "fails under Wine: its resolver's error for localhost is not the public-only refusal (not checked on Windows)"
    )]
    async fn the_resolvers_refusal_is_recognised() {
        use std::str::FromStr;
        use tower::Service;
        let mut resolver = super::super::public::PublicOnly {
            allow_private: false,
        };
        let name =
            hyper_util::client::legacy::connect::dns::Name::from_str("localhost").expect("name");
        let err = resolver.call(name).await.expect_err("loopback only");
        assert!(matches!(
            connect_failure(&err, "localhost", None),
            CimdError::NotPublic(_)
        ));
    }
}
