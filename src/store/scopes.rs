//! Scopes (`--scope`): where exact copies and Overlap pairs are looked for.
//!
//! With `crawl` (the default) every document may copy any other. With
//! `host` or `site`, as a site search engine keeps its clones (locust's
//! docset mode), documents are compared only with those of the same host,
//! or of the same registrable domain (the public suffix list's eTLD+1:
//! `docs.example.co.uk` and `www.example.co.uk` are the site
//! `example.co.uk`). A host that has no registrable domain (an IP address,
//! `localhost`, a bare public suffix) is its own site; documents without a
//! host share one scope.
//!
//! `scopes.fpd` (kind 13, 4 bytes a record, one per row, written by the
//! exact stage for `host` and `site`): `scope: u32`, the number of the
//! row's scope, dense in order of first appearance.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use super::file::{Record, le_u32};

/// Where copies and pairs are looked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Scope {
    #[default]
    Crawl,
    Host,
    Site,
}

impl Scope {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scope::Crawl => "crawl",
            Scope::Host => "host",
            Scope::Site => "site",
        }
    }

    /// The name of the scope a document of `host` (lowercase, without
    /// port) is in.
    pub(crate) fn of(self, host: &str) -> &str {
        match self {
            Scope::Crawl => "",
            Scope::Host => host,
            // An address has no public suffix (the list's default rule
            // would make `2.1` the site of `192.0.2.1`).
            Scope::Site if host.parse::<std::net::IpAddr>().is_ok() => host,
            Scope::Site => psl::domain_str(host).unwrap_or(host),
        }
    }
}

impl FromStr for Scope {
    type Err = String;
    fn from_str(s: &str) -> Result<Scope, String> {
        [Scope::Crawl, Scope::Host, Scope::Site]
            .into_iter()
            .find(|scope| scope.name() == s)
            .ok_or_else(|| format!("unknown scope '{s}' (available: crawl, host, site)"))
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A row's scope number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ScopeId(pub u32);

impl Record for ScopeId {
    const KIND: u32 = 13;
    const SIZE: usize = 4;
    fn encode(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.0.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        ScopeId(le_u32(&b[..4]))
    }
}

/// Numbers scopes in order of first appearance.
#[derive(Default)]
pub(crate) struct ScopeNumbers {
    ids: HashMap<String, u32>,
}

impl ScopeNumbers {
    pub(crate) fn id(&mut self, name: &str) -> ScopeId {
        let next = self.ids.len() as u32;
        ScopeId(*self.ids.entry(name.to_string()).or_insert(next))
    }

    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_are_registrable_domains() {
        assert_eq!(Scope::Site.of("docs.example.co.uk"), "example.co.uk");
        assert_eq!(Scope::Site.of("www.example.com"), "example.com");
        assert_eq!(Scope::Site.of("user.github.io"), "user.github.io");
        assert_eq!(Scope::Site.of("192.0.2.1"), "192.0.2.1");
        assert_eq!(Scope::Site.of("localhost"), "localhost");
        assert_eq!(Scope::Site.of(""), "");
        assert_eq!(Scope::Host.of("www.example.com"), "www.example.com");
        assert_eq!(Scope::Crawl.of("www.example.com"), "");
        assert_eq!("site".parse::<Scope>(), Ok(Scope::Site));
        assert!("domain".parse::<Scope>().unwrap_err().contains("crawl, host, site"));
        let mut n = ScopeNumbers::default();
        assert_eq!([n.id("b"), n.id("a"), n.id("b")], [ScopeId(0), ScopeId(1), ScopeId(0)]);
        assert_eq!(n.len(), 2);
    }
}
