//! Fetching documents through the owner's proxy. `HTTPS_PROXY` / `https_proxy` (or `ALL_PROXY`)
//! names an `http://` proxy that takes `CONNECT`; `NO_PROXY` / `no_proxy` lists hosts reached
//! directly; both read as curl reads them, once, when the gateway starts.
//!
//! What is checked on that path: the proxy itself is the owner's choice, so its own address is
//! not checked; the gateway cannot see which address the proxy connects to, so the public-only
//! rule holds for what it can see: an IP-literal document host must be public (checked before
//! any route is chosen), and `localhost` names are refused here. Anything else the proxy
//! resolves and reaches: restricting it is the proxy's job. Hosts in `NO_PROXY` are fetched
//! directly, with every check of the direct path.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Empty;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::TokioExecutor;
use url::Url;

use super::CimdError;

pub(super) type Tunneled =
    Client<hyper_rustls::HttpsConnector<Tunnel<HttpConnector>>, Empty<Bytes>>;

/// The proxy rules from the environment.
pub(super) struct Proxies {
    matcher: Matcher,
}

/// A request's way through a proxy: the client, and the proxy as logs and pages name it.
pub(super) struct Route {
    pub(super) client: Tunneled,
    pub(super) proxy: String,
}

impl Proxies {
    pub(super) fn from_env() -> Self {
        Self {
            matcher: Matcher::from_env(),
        }
    }

    /// The route to `url` through a proxy, or `None` to fetch it directly. A `localhost` name
    /// is refused on the way to a proxy unless private addresses are allowed (see the module
    /// doc for what else is checked).
    pub(super) fn route(
        &self,
        url: &Url,
        tls: &rustls::ClientConfig,
        allow_private: bool,
        timeout: Duration,
    ) -> Result<Option<Route>, CimdError> {
        let Some(intercept) = url
            .as_str()
            .parse::<http::Uri>()
            .ok()
            .and_then(|uri| self.matcher.intercept(&uri))
        else {
            return Ok(None);
        };
        let host = url.host_str().unwrap_or_default();
        if !allow_private && (host == "localhost" || host.ends_with(".localhost")) {
            return Err(CimdError::NotPublic(format!(
                "its address is not public ({host} names this machine)"
            )));
        }
        let mut http = HttpConnector::new();
        http.set_connect_timeout(Some(timeout));
        let mut tunnel = Tunnel::new(intercept.uri().clone(), http);
        if let Some(auth) = intercept.basic_auth() {
            tunnel = tunnel.with_auth(auth.clone());
        }
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls.clone())
            .https_only()
            .enable_http1()
            .wrap_connector(tunnel);
        let uri = intercept.uri();
        Ok(Some(Route {
            client: Client::builder(TokioExecutor::new()).build(https),
            proxy: format!(
                "{}://{}",
                uri.scheme_str().unwrap_or("http"),
                uri.authority().map_or("", |a| a.as_str())
            ),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxies(https: &str, no: &str) -> Proxies {
        Proxies {
            matcher: Matcher::builder().https(https).no(no).build(),
        }
    }

    fn tls() -> rustls::ClientConfig {
        super::super::tls_config(None).expect("tls")
    }

    #[test]
    fn routes_follow_no_proxy_and_refuse_local_names() {
        let p = proxies("http://user:pw@127.0.0.1:3128", "direct.example,.corp");
        let t = Duration::from_secs(5);
        let url = |s: &str| Url::parse(s).expect("url");
        let route = p
            .route(&url("https://claude.ai/oauth/x"), &tls(), false, t)
            .expect("allowed")
            .expect("through the proxy");
        assert_eq!(route.proxy, "http://127.0.0.1:3128", "no credentials shown");
        for direct in ["https://direct.example/x", "https://a.corp/x"] {
            assert!(
                p.route(&url(direct), &tls(), false, t)
                    .expect("ok")
                    .is_none()
            );
        }
        assert!(matches!(
            p.route(&url("https://localhost/x"), &tls(), false, t),
            Err(CimdError::NotPublic(_))
        ));
        assert!(
            p.route(&url("https://localhost/x"), &tls(), true, t)
                .is_ok()
        );
        assert!(
            proxies("", "")
                .route(&url("https://claude.ai/x"), &tls(), false, t)
                .expect("ok")
                .is_none()
        );
    }
}
