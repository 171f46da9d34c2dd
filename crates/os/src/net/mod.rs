//! Network clients over the connection-level primitives: a libc-style resolver (musl and
//! glibc search semantics), HTTP/1.1 helpers shared with server models, and wget, curl, nc,
//! nslookup (busybox and bind9 styles), dig and ping.

pub mod curl;
pub mod dig;
pub mod getent;
pub mod http;
pub mod iface;
pub mod nc;
pub mod nslookup;
pub mod ping;
pub mod wget;

use crate::fs::Fs;
use crate::program::{DnsMessage, DnsQuestion, NetCall, NetError, NetReply, RType, Rcode};

/// `/etc/resolv.conf` settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvConf {
    /// Name servers (at most 3 are used).
    pub nameservers: Vec<String>,
    /// Search domains.
    pub search: Vec<String>,
    /// `options ndots:N` (default 1).
    pub ndots: usize,
    /// `options timeout:N` seconds (default 5).
    pub timeout_s: u64,
    /// `options attempts:N` (default 2).
    pub attempts: u32,
}

impl ResolvConf {
    /// Parses resolv.conf text (missing file = defaults with no servers).
    pub fn parse(text: &str) -> ResolvConf {
        let mut rc = ResolvConf { nameservers: Vec::new(), search: Vec::new(), ndots: 1, timeout_s: 5, attempts: 2 };
        for line in text.lines() {
            let line = line.split(['#', ';']).next().unwrap_or("");
            let mut it = line.split_whitespace();
            match it.next() {
                Some("nameserver") => {
                    if let Some(s) = it.next() {
                        if rc.nameservers.len() < 3 {
                            rc.nameservers.push(s.to_string());
                        }
                    }
                }
                Some("search") => rc.search = it.map(str::to_string).collect(),
                Some("domain") => rc.search = it.take(1).map(str::to_string).collect(),
                Some("options") => {
                    for o in it {
                        if let Some(v) = o.strip_prefix("ndots:") {
                            rc.ndots = v.parse::<usize>().unwrap_or(1).min(15);
                        } else if let Some(v) = o.strip_prefix("timeout:") {
                            rc.timeout_s = v.parse::<u64>().unwrap_or(5).clamp(1, 30);
                        } else if let Some(v) = o.strip_prefix("attempts:") {
                            rc.attempts = v.parse::<u32>().unwrap_or(2).clamp(1, 5);
                        }
                    }
                }
                _ => {}
            }
        }
        rc
    }

    /// Reads `/etc/resolv.conf` through a filesystem.
    pub fn load(fs: &dyn Fs) -> ResolvConf {
        let text = fs.read("/etc/resolv.conf").map(|d| String::from_utf8_lossy(&d).into_owned()).unwrap_or_default();
        ResolvConf::parse(&text)
    }
}

/// Looks `name` up in `/etc/hosts`.
pub fn hosts_lookup(fs: &dyn Fs, name: &str) -> Option<String> {
    let d = fs.read("/etc/hosts").ok()?;
    let text = String::from_utf8_lossy(&d);
    let want = name.trim_end_matches('.');
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        let mut it = line.split_whitespace();
        let Some(ip) = it.next() else { continue };
        if ip.contains(':') {
            continue;
        }
        if it.any(|n| n.eq_ignore_ascii_case(want)) {
            return Some(ip.to_string());
        }
    }
    None
}

/// Is `s` an IPv4 literal.
pub fn is_ipv4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4 && parts.iter().all(|p| !p.is_empty() && p.len() <= 3 && p.chars().all(|c| c.is_ascii_digit()) && p.parse::<u16>().is_ok_and(|v| v <= 255))
}

/// Which libc's search rules to follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Libc {
    /// musl (alpine, busybox): names with ≥ ndots dots are only tried as-is; otherwise
    /// each search domain, then the name; a SERVFAIL/timeout ends the search.
    Musl,
    /// glibc (debian, ubuntu): names with ≥ ndots dots are tried as-is first, then with the
    /// search domains; otherwise the search domains first, then as-is.
    Glibc,
}

/// The names a resolver tries, in order.
pub fn candidates(name: &str, rc: &ResolvConf, libc: Libc) -> Vec<String> {
    if let Some(abs) = name.strip_suffix('.') {
        return vec![abs.to_string()];
    }
    let dots = name.matches('.').count();
    let with_search: Vec<String> = rc.search.iter().filter(|d| !d.is_empty() && *d != ".").map(|d| format!("{name}.{}", d.trim_end_matches('.'))).collect();
    match libc {
        Libc::Musl => {
            if dots >= rc.ndots {
                vec![name.to_string()]
            } else {
                let mut v = with_search;
                v.push(name.to_string());
                v
            }
        }
        Libc::Glibc => {
            if dots >= rc.ndots {
                let mut v = vec![name.to_string()];
                v.extend(with_search);
                v
            } else {
                let mut v = with_search;
                v.push(name.to_string());
                v
            }
        }
    }
}

/// Why a lookup failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResolveError {
    /// Every candidate returned NXDOMAIN (or no address).
    NotFound,
    /// A server failed or no server answered (EAI_AGAIN).
    TryAgain,
}

/// A lookup result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The name that answered (fully qualified, without trailing dot).
    pub name: String,
    /// Addresses, in answer order.
    pub addrs: Vec<String>,
    /// The server that answered (`None` for /etc/hosts or literals).
    pub server: Option<String>,
}

/// What the resolver needs next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResolveStep {
    /// Send this query and feed the reply back with [`Resolver::reply`].
    Query(NetCall),
    /// Finished.
    Done(Result<Resolved, ResolveError>),
}

/// A getaddrinfo-like resolver as a state machine (A records only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolver {
    rc: ResolvConf,
    libc: Libc,
    names: Vec<String>,
    ni: usize,
    server: usize,
    attempt: u32,
    done: Option<Result<Resolved, ResolveError>>,
    got_servfail: bool,
    qtype: RType,
}

impl Resolver {
    /// Starts a lookup of `name` (literals and /etc/hosts entries resolve immediately).
    pub fn new(fs: &dyn Fs, name: &str, libc: Libc) -> Resolver {
        Resolver::with_type(fs, name, libc, RType::A)
    }

    /// Like [`Resolver::new`] for another record type.
    pub fn with_type(fs: &dyn Fs, name: &str, libc: Libc, qtype: RType) -> Resolver {
        let rc = ResolvConf::load(fs);
        let mut r = Resolver { names: candidates(name, &rc, libc), rc, libc, ni: 0, server: 0, attempt: 0, done: None, got_servfail: false, qtype };
        if is_ipv4(name) {
            r.done = Some(Ok(Resolved { name: name.to_string(), addrs: vec![name.to_string()], server: None }));
        } else if name == "localhost" || name == "localhost." {
            r.done = Some(Ok(Resolved { name: "localhost".into(), addrs: vec!["127.0.0.1".into()], server: None }));
        } else if let Some(ip) = hosts_lookup(fs, name) {
            r.done = Some(Ok(Resolved { name: name.trim_end_matches('.').to_string(), addrs: vec![ip], server: None }));
        } else if name.is_empty() || name.len() > 253 {
            r.done = Some(Err(ResolveError::NotFound));
        } else if r.rc.nameservers.is_empty() {
            r.rc.nameservers.push("127.0.0.1".into());
        }
        r
    }

    /// Uses these name servers instead of resolv.conf's.
    pub fn with_servers(mut self, servers: Vec<String>) -> Resolver {
        if !servers.is_empty() {
            self.rc.nameservers = servers;
        }
        self
    }

    /// The resolv.conf in use.
    pub fn conf(&self) -> &ResolvConf {
        &self.rc
    }

    fn query(&self) -> NetCall {
        NetCall::Dns {
            server: self.rc.nameservers[self.server].clone(),
            port: 53,
            question: DnsQuestion { name: format!("{}.", self.names[self.ni]), qtype: self.qtype },
            tcp: false,
            timeout_ms: self.rc.timeout_s * 1000,
        }
    }

    /// The first step.
    pub fn start(&mut self) -> ResolveStep {
        if let Some(d) = self.done.clone() {
            return ResolveStep::Done(d);
        }
        if self.names.is_empty() {
            return ResolveStep::Done(Err(ResolveError::NotFound));
        }
        ResolveStep::Query(self.query())
    }

    /// Feeds a reply.
    pub fn reply(&mut self, r: &NetReply) -> ResolveStep {
        let result: Result<DnsMessage, NetError> = match r {
            NetReply::Dns(m) => m.clone(),
            _ => Err(NetError::TimedOut),
        };
        match result {
            Err(_) => {
                // Next server, then next attempt.
                self.server += 1;
                if self.server >= self.rc.nameservers.len() {
                    self.server = 0;
                    self.attempt += 1;
                }
                if self.attempt >= self.rc.attempts {
                    return ResolveStep::Done(Err(ResolveError::TryAgain));
                }
                ResolveStep::Query(self.query())
            }
            Ok(m) => {
                let server = self.rc.nameservers[self.server].clone();
                match m.rcode {
                    Rcode::NoError => {
                        let addrs: Vec<String> = m.answers.iter().filter(|a| a.rtype == self.qtype).map(|a| a.data.clone()).collect();
                        if !addrs.is_empty() {
                            let name = m
                                .answers
                                .iter()
                                .find(|a| a.rtype == self.qtype)
                                .map(|a| a.name.trim_end_matches('.').to_string())
                                .unwrap_or_else(|| self.names[self.ni].clone());
                            let _ = name;
                            return ResolveStep::Done(Ok(Resolved { name: self.names[self.ni].clone(), addrs, server: Some(server) }));
                        }
                        self.next_name()
                    }
                    Rcode::NxDomain => self.next_name(),
                    _ => {
                        if self.libc == Libc::Musl {
                            return ResolveStep::Done(Err(ResolveError::TryAgain));
                        }
                        self.got_servfail = true;
                        self.next_name()
                    }
                }
            }
        }
    }

    fn next_name(&mut self) -> ResolveStep {
        self.ni += 1;
        self.server = 0;
        self.attempt = 0;
        if self.ni >= self.names.len() {
            return ResolveStep::Done(Err(if self.got_servfail { ResolveError::TryAgain } else { ResolveError::NotFound }));
        }
        ResolveStep::Query(self.query())
    }
}

/// The libc flavour of the image: musl when `/etc/alpine-release` or `/bin/busybox` exists.
pub fn libc_of(fs: &dyn Fs) -> Libc {
    if fs.stat("/etc/alpine-release").is_ok() || fs.stat("/bin/busybox").is_ok() {
        Libc::Musl
    } else {
        Libc::Glibc
    }
}

/// A parsed URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    /// `http` / `https` / `ftp`.
    pub scheme: String,
    /// Host name or IP.
    pub host: String,
    /// Port (default per scheme).
    pub port: u16,
    /// The port was given explicitly.
    pub explicit_port: bool,
    /// Path with query, starting with `/`.
    pub path: String,
    /// `user:password`.
    pub userinfo: Option<String>,
}

impl Url {
    /// Parses `scheme://[user@]host[:port][/path]`; a missing scheme means `http`.
    pub fn parse(s: &str) -> Result<Url, String> {
        let (scheme, rest) = match s.split_once("://") {
            Some((sc, r)) => (sc.to_ascii_lowercase(), r),
            None => ("http".to_string(), s),
        };
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            "ftp" => 21,
            _ => return Err(format!("unsupported protocol {scheme}")),
        };
        let (hostport, path) = match rest.find(['/', '?', '#']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let path = if path.starts_with('/') { path.to_string() } else { format!("/{path}") };
        let path = path.split('#').next().unwrap_or("/").to_string();
        let (userinfo, hostport) = match hostport.rsplit_once('@') {
            Some((u, h)) => (Some(u.to_string()), h),
            None => (None, hostport),
        };
        let (host, port, explicit) = if let Some(stripped) = hostport.strip_prefix('[') {
            let (h, rest) = stripped.split_once(']').unwrap_or((stripped, ""));
            match rest.strip_prefix(':') {
                Some(p) => (h.to_string(), p.parse::<u16>().map_err(|_| format!("bad port {p}"))?, true),
                None => (h.to_string(), default_port, false),
            }
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) if !p.is_empty() => (h.to_string(), p.parse::<u16>().map_err(|_| format!("bad port {p}"))?, true),
                Some((h, _)) => (h.to_string(), default_port, false),
                None => (hostport.to_string(), default_port, false),
            }
        };
        if host.is_empty() {
            return Err("no host".into());
        }
        Ok(Url { scheme, host, port, explicit_port: explicit, path, userinfo })
    }

    /// `Host:` header value.
    pub fn host_header(&self) -> String {
        if self.explicit_port {
            format!("{}:{}", self.host, self.port)
        } else {
            self.host.clone()
        }
    }
}
