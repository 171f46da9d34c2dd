//! The world outside the cluster, as far as the Kubernetes docs reach it: a handful of public
//! sites with fixed addresses and pages, and the upstream resolver that knows them (Docker's
//! embedded DNS at the kind bridge gateway, [`UPSTREAM_RESOLVER`], which CoreDNS's `forward .
//! /etc/resolv.conf` and `dnsPolicy: Default` pods use). Any other public name is NXDOMAIN and
//! any other public address times out: kubesim has no real network access, and a history must
//! not depend on one.

use kubesim_os::program::{DnsMessage, DnsQuestion, DnsRecord, RType, Rcode};

/// The resolver kind's nodes use (Docker's embedded DNS at the bridge gateway).
pub const UPSTREAM_RESOLVER: &str = "172.18.0.1";

/// Round trip to a public site (virtual ms).
pub const INTERNET_RTT_MS: u64 = 24;

/// One public site.
#[derive(Clone, Copy, Debug)]
pub struct Site {
    /// Host names that resolve to it.
    pub names: &'static [&'static str],
    /// Its IPv4 address.
    pub ip: &'static str,
    /// The `Server` header.
    pub server: &'static str,
    /// The page served at `/`.
    pub page: &'static str,
}

const INFO_CERN_CH: &str = "<html><head></head><body><header>
<title>http://info.cern.ch</title>
</header>

<h1>http://info.cern.ch - home of the first website</h1>
<p>From here you can:</p>
<ul>
<li><a href=\"http://info.cern.ch/hypertext/WWW/TheProject.html\">Browse the first website</a></li>
<li><a href=\"http://line-mode.cern.ch/www/hypertext/WWW/TheProject.html\">Browse the first website using the line-mode browser simulator</a></li>
<li><a href=\"http://home.web.cern.ch/topics/birth-web\">Learn about the birth of the web</a></li>
<li><a href=\"http://home.web.cern.ch/about\">Learn about CERN, the physics laboratory where the web was born</a></li>
</ul>
</body></html>
";

const EXAMPLE_COM: &str = "<!doctype html>
<html>
<head>
    <title>Example Domain</title>
</head>
<body>
<div>
    <h1>Example Domain</h1>
    <p>This domain is for use in illustrative examples in documents. You may use this
    domain in literature without prior coordination or asking for permission.</p>
    <p><a href=\"https://www.iana.org/domains/example\">More information...</a></p>
</div>
</body>
</html>
";

const KUBERNETES_IO: &str = "<!doctype html>
<html itemscope itemtype=\"http://schema.org/WebPage\" lang=\"en\" class=\"no-js\">
<head>
<title>Kubernetes</title>
</head>
<body>
<p>Kubernetes, also known as K8s, is an open source system for automating deployment, scaling, and management of containerized applications.</p>
</body>
</html>
";

/// The sites.
pub const SITES: &[Site] = &[
    Site { names: &["info.cern.ch"], ip: "188.184.67.127", server: "Apache", page: INFO_CERN_CH },
    Site { names: &["example.com", "www.example.com"], ip: "23.192.228.80", server: "ECAcc (nyd/D184)", page: EXAMPLE_COM },
    Site { names: &["kubernetes.io", "www.kubernetes.io", "k8s.io"], ip: "147.75.40.148", server: "Netlify", page: KUBERNETES_IO },
];

fn normalise(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// The site a name resolves to.
pub fn lookup(name: &str) -> Option<&'static Site> {
    let name = normalise(name);
    SITES.iter().find(|s| s.names.contains(&name.as_str()))
}

/// The site at an address.
pub fn site_at(ip: &str) -> Option<&'static Site> {
    SITES.iter().find(|s| s.ip == ip)
}

/// The upstream resolver's answer: the site's A record, NODATA for other types of a known
/// name, NXDOMAIN otherwise.
pub fn resolve(question: &DnsQuestion) -> DnsMessage {
    let Some(site) = lookup(&question.name) else { return DnsMessage::empty(Rcode::NxDomain) };
    let fqdn = format!("{}.", normalise(&question.name));
    match question.qtype {
        RType::A | RType::Any => {
            DnsMessage { authoritative: false, ..DnsMessage::answer(vec![DnsRecord { name: fqdn, ttl: 300, rtype: RType::A, data: site.ip.to_string() }]) }
        }
        _ => DnsMessage::empty(Rcode::NoError),
    }
}

/// A site's answer to an HTTP request on port 80 (`GET /` gets the page, anything else 404).
pub fn http(site: &Site, request: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(request);
    let line = text.lines().next().unwrap_or("");
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("GET");
    let path = parts.next().unwrap_or("/");
    let (status, body) = if path == "/" || path.starts_with("/?") || path.starts_with("http://") && path.trim_end_matches('/').matches('/').count() <= 2 {
        ("200 OK", site.page.to_string())
    } else {
        ("404 Not Found", "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html><head>\n<title>404 Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n<p>The requested URL was not found on this server.</p>\n</body></html>\n".to_string())
    };
    let mut out = format!(
        "HTTP/1.1 {status}\r\nDate: Wed, 01 Jan 2025 00:00:00 GMT\r\nServer: {}\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        site.server,
        body.len()
    );
    if method != "HEAD" {
        out.push_str(&body);
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_sites_resolve_and_serve_their_pages() {
        let q = DnsQuestion { name: "info.cern.ch.".into(), qtype: RType::A };
        assert_eq!(resolve(&q).answers[0].data, "188.184.67.127");
        assert_eq!(resolve(&DnsQuestion { name: "nowhere.invalid".into(), qtype: RType::A }).rcode, Rcode::NxDomain);
        let site = site_at("188.184.67.127").unwrap();
        let reply = String::from_utf8(http(site, b"GET / HTTP/1.1\r\nHost: info.cern.ch\r\n\r\n")).unwrap();
        assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"));
        assert!(reply.ends_with("</body></html>\n"));
        assert!(String::from_utf8(http(site, b"GET /nope HTTP/1.1\r\n\r\n")).unwrap().starts_with("HTTP/1.1 404"));
    }
}
