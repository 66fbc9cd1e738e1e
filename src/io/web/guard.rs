//! Which requests the web server answers: those addressed to it, from pages of its
//! own origin or of this machine. A page elsewhere on the web cannot drive the
//! bridge through the user's browser: a cross-site WebSocket or fetch carries that
//! page's `Origin`, and DNS rebinding (a hostile name resolving to 127.0.0.1) its
//! own name in `Host`.
//!
//! - `Host` must be an IP address (nothing to rebind), `localhost` or a name under
//!   `.localhost`, or one the config lists (`websocket.allowedHosts`).
//! - `Origin`, when a browser sends one, must be the bridge's own (the scheme and
//!   the request's `Host`), a page on this machine (`http` or `https`, any port,
//!   host `localhost`, a name under `.localhost` or any loopback address: all of
//!   `127.0.0.0/8` and `[::1]`), or one the config lists
//!   (`websocket.allowedOrigins`). Programs that are not browsers send no `Origin`
//!   and pass; the token rule applies to all.

use std::net::IpAddr;

/// The extra hosts and origins a bridge answers, from its config.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Guard {
    /// `Host` values accepted besides IP addresses and loopback names: a name, or a
    /// name and port (`studio.local`, `studio.local:8787`), lower case.
    hosts: Vec<String>,
    /// `Origin` values accepted besides the bridge's own and loopback pages
    /// (`https://show.example`, `http://studio.local:3000`), lower case, or `null`.
    origins: Vec<String>,
}

/// Why a request was refused: what the browser sent, for the answer and the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error(
        "Host `{0}` is not this bridge's address (a page may be trying DNS rebinding); \
         add it to websocket.allowedHosts to allow it"
    )]
    Host(String),
    #[error(
        "Origin `{0}` is a page on another site; add it to websocket.allowedOrigins to allow it"
    )]
    Origin(String),
}

impl Guard {
    /// A guard accepting `hosts` and `origins` besides the built-in ones.
    #[must_use]
    pub fn new(hosts: &[String], origins: &[String]) -> Self {
        let lower = |v: &[String]| {
            v.iter()
                .map(|s| s.trim_end_matches('/').to_ascii_lowercase())
                .collect()
        };
        Self {
            hosts: lower(hosts),
            origins: lower(origins),
        }
    }

    /// Checks a request's `Host` and `Origin` headers (`None` when absent).
    pub fn check(&self, host: Option<&str>, origin: Option<&str>) -> Result<(), Refusal> {
        if let Some(host) = host
            && !self.host_allowed(host)
        {
            return Err(Refusal::Host(host.to_owned()));
        }
        match origin {
            Some(origin) if !self.origin_allowed(origin, host) => {
                Err(Refusal::Origin(origin.to_owned()))
            }
            _ => Ok(()),
        }
    }

    fn host_allowed(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        let name = name_of(&host);
        name.parse::<IpAddr>().is_ok()
            || is_localhost(name)
            || self.hosts.iter().any(|h| *h == host || h == name)
    }

    fn origin_allowed(&self, origin: &str, host: Option<&str>) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        if self.origins.contains(&origin) {
            return true;
        }
        let Some((scheme, authority)) = origin.split_once("://") else {
            return false; // `null` (a sandboxed or file page) and anything else
        };
        if !matches!(scheme, "http" | "https") || authority.contains('/') {
            return false;
        }
        let own = host.is_some_and(|h| h.eq_ignore_ascii_case(authority));
        let name = name_of(authority);
        own || is_localhost(name) || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }
}

/// The host name of `host[:port]` or `[ipv6]:port`, without brackets or port.
fn name_of(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match authority.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => authority,
    }
}

fn is_localhost(name: &str) -> bool {
    let name = name.trim_end_matches('.');
    name == "localhost" || name.ends_with(".localhost")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_ip_addresses_loopback_names_or_listed() {
        let guard = Guard::new(&["Studio.local".into()], &[]);
        for host in [
            "127.0.0.1:8787",
            "localhost:8787",
            "LOCALHOST",
            "viewer.localhost:8787",
            "[::1]:8787",
            "192.168.1.20:8787",
            "studio.local:8787",
        ] {
            assert_eq!(guard.check(Some(host), None), Ok(()), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:8787",
            "localhost.evil.example:8787",
        ] {
            assert_eq!(
                guard.check(Some(host), None),
                Err(Refusal::Host(host.into())),
                "{host}"
            );
        }
        assert_eq!(guard.check(None, None), Ok(()), "no Host: not a browser");
    }

    #[test]
    fn origins_are_the_bridges_own_loopback_pages_or_listed() {
        let guard = Guard::new(&["studio.local".into()], &["https://show.example/".into()]);
        let ok = [
            ("127.0.0.1:8787", "http://127.0.0.1:8787"),
            ("studio.local:8787", "http://studio.local:8787"),
            ("192.168.1.20:8787", "http://192.168.1.20:8787"),
            ("127.0.0.1:8787", "http://localhost:5173"),
            ("127.0.0.1:8787", "http://[::1]:3000"),
            ("127.0.0.1:8787", "https://show.example"),
        ];
        for (host, origin) in ok {
            assert_eq!(guard.check(Some(host), Some(origin)), Ok(()), "{origin}");
        }
        let refused = [
            ("127.0.0.1:8787", "http://evil.example"),
            ("127.0.0.1:8787", "null"),
            ("127.0.0.1:8787", "http://192.168.1.20:8787"),
            ("127.0.0.1:8787", "file://"),
            ("studio.local:8787", "http://studio.local:9999"),
        ];
        for (host, origin) in refused {
            assert_eq!(
                guard.check(Some(host), Some(origin)),
                Err(Refusal::Origin(origin.into())),
                "{origin}"
            );
        }
    }
}
