//! `ServeDNS` and the lookups behind it: plugin/kubernetes/{handler,kubernetes,parse,reverse,ns}.go
//! and plugin/backend_lookup.go (v1.12.1), function by function.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::{Addr, DnsMessage, DnsQuestion, DnsRecord, RType, Rcode, Zone, DNS_SCHEMA_VERSION, DNS_VERSION_TTL};

/// The reverse zones kubeadm lists after the cluster domain; also the `fallthrough` zones.
const REVERSE_ZONES: [&str; 2] = ["in-addr.arpa.", "ip6.arpa."];
const MAX_CNAME_CHAIN: usize = 10;

/// The plugin's name errors (`IsNameError`): NXDOMAIN, or fallthrough in the reverse zones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NameError {
    NoItems,
    NsNotExposed,
    InvalidRequest,
}

type Res<T> = Result<T, NameError>;

/// `request.Request` reduced to what the plugin reads.
#[derive(Clone, Debug)]
struct Req {
    /// `QName()`: the question's name as asked (case kept), fully qualified.
    qname: String,
    /// `Name()`: lower case.
    name: String,
    /// The matched zone in the question's case (`qname[len(qname)-len(zone):]`).
    zone: String,
    qtype: RType,
}

impl Req {
    fn new(qname: &str, zone: &str, qtype: RType) -> Req {
        let qname = fqdn(qname);
        Req { name: qname.to_ascii_lowercase(), qname, zone: zone.to_string(), qtype }
    }
}

/// `msg.Service`: one backend record before it becomes an RR.
#[derive(Clone, Debug)]
struct Rec {
    host: String,
    port: i32,
    text: String,
    ttl: u32,
    /// The record's own name (`msg.Domain(Key)`), fully qualified.
    key: String,
}

enum HostType {
    Cname,
    Txt,
    A(Ipv4Addr),
    Aaaa(Ipv6Addr),
}

impl Rec {
    fn new(host: impl Into<String>, port: i32, ttl: u32, key: impl Into<String>) -> Rec {
        Rec { host: host.into(), port, text: String::new(), ttl, key: key.into() }
    }

    /// `HostType()`.
    fn host_type(&self) -> HostType {
        match parse_ip(&self.host) {
            None if self.text.is_empty() => HostType::Cname,
            None => HostType::Txt,
            Some(IpAddr::V4(v4)) => HostType::A(v4),
            Some(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
                Some(v4) => HostType::A(v4),
                None => HostType::Aaaa(v6),
            },
        }
    }
}

/// `net.ParseIP`.
fn parse_ip(s: &str) -> Option<IpAddr> {
    s.parse().ok()
}

fn fqdn(s: &str) -> String {
    if s.ends_with('.') {
        s.to_string()
    } else {
        format!("{s}.")
    }
}

/// `dns.IsSubDomain(parent, child)`: child is parent or below it (case-insensitive).
fn is_subdomain(parent: &str, child: &str) -> bool {
    let (p, c) = (parent.to_ascii_lowercase(), child.to_ascii_lowercase());
    p == "." || c == p || c.ends_with(&format!(".{p}"))
}

/// `plugin.Name(n).Matches(child)`.
fn name_matches(n: &str, child: &str) -> bool {
    is_subdomain(n, child)
}

/// `plugin.Zones.Matches`: the longest zone holding `qname`.
fn match_zone<'a>(zones: &[&'a str], qname: &str) -> Option<&'a str> {
    zones.iter().copied().filter(|z| is_subdomain(z, qname)).max_by_key(|z| z.len())
}

fn labels(s: &str) -> Vec<&str> {
    let s = s.strip_suffix('.').unwrap_or(s);
    if s.is_empty() {
        Vec::new()
    } else {
        s.split('.').collect()
    }
}

/// `dnsutil.TrimZone`: `q` without the zone's labels and without the trailing dot; `""` when the
/// zone takes every label.
fn trim_zone(q: &str, zone: &str) -> String {
    let (q, z) = (labels(q), labels(zone).len());
    if q.len() <= z {
        return String::new();
    }
    q[..q.len() - z].join(".")
}

fn record(name: &str, ttl: u32, rtype: RType, data: impl Into<String>) -> DnsRecord {
    DnsRecord { name: name.to_string(), ttl, rtype, data: data.into() }
}

/// `endpointHostname` (no `endpoint_pod_names`): the hostname, else the dashed IP.
fn endpoint_hostname(a: &Addr) -> String {
    if !a.hostname.is_empty() {
        a.hostname.clone()
    } else if a.ip.contains('.') {
        a.ip.replace('.', "-")
    } else if a.ip.contains(':') {
        a.ip.replace(':', "-")
    } else {
        String::new()
    }
}

fn eq_fold(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// `matchPortAndProtocol`: an empty request field matches anything.
fn match_port_and_protocol(a_port: &str, b_port: &str, a_proto: &str, b_proto: &str) -> bool {
    (eq_fold(a_port, b_port) || a_port.is_empty()) && (eq_fold(a_proto, b_proto) || a_proto.is_empty())
}

/// `recordRequest`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RecordRequest {
    pub port: String,
    pub protocol: String,
    pub endpoint: String,
    pub service: String,
    pub namespace: String,
    pub pod_or_svc: String,
}

/// `parseRequest`: `[_port._proto.|endpoint.]service.namespace.(svc|pod).<zone>`.
pub(crate) fn parse_request(name: &str, zone: &str) -> Result<RecordRequest, ()> {
    let mut r = RecordRequest::default();
    let base = trim_zone(name, zone);
    if base.is_empty() || base == "svc" || base == "pod" {
        return Ok(r);
    }
    let segs: Vec<&str> = base.split('.').collect();
    let mut last = segs.len() - 1;
    r.pod_or_svc = segs[last].to_string();
    if r.pod_or_svc != "pod" && r.pod_or_svc != "svc" {
        return Err(());
    }
    if last == 0 {
        return Ok(r);
    }
    last -= 1;
    r.namespace = segs[last].to_string();
    if last == 0 {
        return Ok(r);
    }
    last -= 1;
    r.service = segs[last].to_string();
    if last == 0 {
        return Ok(r);
    }
    last -= 1;
    match last {
        0 => r.endpoint = segs[0].to_string(),
        1 => {
            r.protocol = strip_underscore(segs[1]).to_string();
            r.port = strip_underscore(segs[0]).to_string();
        }
        _ => return Err(()),
    }
    Ok(r)
}

fn strip_underscore(s: &str) -> &str {
    s.strip_prefix('_').unwrap_or(s)
}

/// `dnsutil.ExtractAddressFromReverse`: the address a reverse name spells, or `""`.
fn extract_address_from_reverse(name: &str) -> String {
    if let Some(s) = name.strip_suffix(".in-addr.arpa.") {
        let mut p: Vec<&str> = s.split('.').collect();
        p.reverse();
        return match p.join(".").parse::<IpAddr>() {
            Ok(IpAddr::V4(v4)) => v4.to_string(),
            Ok(IpAddr::V6(v6)) => v6.to_ipv4_mapped().map(|v| v.to_string()).unwrap_or_default(),
            Err(_) => String::new(),
        };
    }
    if let Some(s) = name.strip_suffix(".ip6.arpa.") {
        let mut p: Vec<&str> = s.split('.').collect();
        p.reverse();
        let groups: Vec<String> = p.chunks_exact(4).map(|c| c.concat()).collect();
        return match groups.join(":").parse::<IpAddr>() {
            Ok(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
                Some(v4) => v4.to_string(),
                None => v6.to_string(),
            },
            Ok(IpAddr::V4(v4)) => v4.to_string(),
            Err(_) => String::new(),
        };
    }
    String::new()
}

/// `dnsutil.IsReverse`.
fn is_reverse(name: &str) -> bool {
    name.ends_with(".in-addr.arpa.") || name.ends_with(".ip6.arpa.")
}

/// `ServeDNS`.
pub(crate) fn serve(z: &Zone, q: &DnsQuestion, upstream: &mut dyn FnMut(&DnsQuestion) -> Option<DnsMessage>) -> crate::Answer {
    let qname = fqdn(if q.name.is_empty() { "." } else { &q.name });
    let zones = [z.domain.as_str(), REVERSE_ZONES[0], REVERSE_ZONES[1]];
    let Some(zone) = match_zone(&zones, &qname) else {
        return crate::Answer::Forward;
    };
    let zone = qname.get(qname.len() - zone.len()..).unwrap_or(zone).to_string();
    let state = Req::new(&qname, &zone, q.qtype);
    let mut k = K { z, upstream };

    let mut records = Vec::new();
    let mut extra = Vec::new();
    let result: Res<()> = match q.qtype {
        RType::A | RType::Aaaa => k.address(&state, q.qtype, &[]).map(|r| records = r),
        RType::Txt => k.txt(&state).map(|r| records = r),
        RType::Cname => k.cname(&state).map(|r| records = r),
        RType::Ptr => k.ptr(&state).map(|r| records = r),
        RType::Mx => k.services(&state).map(|_| ()),
        RType::Srv => k.srv(&state).map(|(r, e)| {
            records = r;
            extra = e;
        }),
        RType::Soa => {
            if state.qname == state.zone {
                records = vec![k.soa(&state.zone)];
            }
            Ok(())
        }
        RType::Ns if state.name == state.zone => k.ns(&state).map(|(r, e)| {
            records = r;
            extra = e;
        }),
        RType::Ns | RType::Any => {
            // A fake A lookup, to tell NODATA from NXDOMAIN.
            let fake = Req { qtype: RType::A, ..state.clone() };
            k.address(&fake, RType::A, &[]).map(|_| ())
        }
    };

    let soa = k.soa(&state.zone);
    match result {
        Err(_) => {
            if REVERSE_ZONES.iter().any(|f| is_subdomain(f, &state.name)) {
                return crate::Answer::Forward;
            }
            let rcode = if z.synced { Rcode::NxDomain } else { Rcode::ServFail };
            crate::Answer::Authoritative(DnsMessage { rcode, authoritative: true, answers: Vec::new(), authority: vec![soa], additional: Vec::new() })
        }
        Ok(()) if records.is_empty() => crate::Answer::Authoritative(DnsMessage {
            rcode: Rcode::NoError,
            authoritative: true,
            answers: Vec::new(),
            authority: vec![soa],
            additional: Vec::new(),
        }),
        Ok(()) => {
            crate::Answer::Authoritative(DnsMessage { rcode: Rcode::NoError, authoritative: true, answers: records, authority: Vec::new(), additional: extra })
        }
    }
}

/// The plugin at work on one question: the caches plus the upstream for external CNAME targets.
struct K<'a, 'u> {
    z: &'a Zone,
    upstream: &'u mut dyn FnMut(&DnsQuestion) -> Option<DnsMessage>,
}

impl K<'_, '_> {
    fn ttl(&self) -> u32 {
        self.z.ttl
    }

    /// `plugin.SOA`.
    fn soa(&self, zone: &str) -> DnsRecord {
        let min = self.ttl();
        let data = format!("ns.dns.{zone} hostmaster.{zone} {} 7200 1800 86400 {min}", self.z.serial);
        record(zone, min.min(300), RType::Soa, data)
    }

    fn namespace_exposed(&self, ns: &str) -> bool {
        self.z.namespaces.contains(ns)
    }

    /// `Kubernetes.Services`.
    fn services(&self, state: &Req) -> Res<Vec<Rec>> {
        match state.qtype {
            RType::Txt => {
                let t = trim_zone(&state.name, &state.zone);
                if t == "dns-version" {
                    let mut r = Rec::new("", 0, DNS_VERSION_TTL, state.qname.clone());
                    r.text = DNS_SCHEMA_VERSION.to_string();
                    return Ok(vec![r]);
                }
                // Another type at this name ⇒ NODATA, else NXDOMAIN.
                match self.records(state) {
                    Ok(s) if !s.is_empty() => Ok(Vec::new()),
                    _ => Err(NameError::NoItems),
                }
            }
            RType::Ns => Ok(self.ns_addrs(&state.zone).into_iter().map(|(name, ip)| Rec::new(ip.to_string(), 0, self.ttl(), name)).collect()),
            qtype => {
                if is_default_ns(&state.name, &state.zone) {
                    let want_v4 = qtype == RType::A;
                    let want_v6 = qtype == RType::Aaaa;
                    return Ok(self
                        .ns_addrs(&state.zone)
                        .into_iter()
                        .filter(|(_, ip)| (ip.is_ipv4() && want_v4) || (ip.is_ipv6() && want_v6))
                        .map(|(_, ip)| Rec::new(ip.to_string(), 0, self.ttl(), state.qname.clone()))
                        .collect());
                }
                let s = self.records(state)?;
                if qtype != RType::Srv {
                    return Ok(s);
                }
                // SRV for external services is not implemented upstream: drop the CNAMEs.
                Ok(s.into_iter().filter(|r| !matches!(r.host_type(), HostType::Cname)).collect())
            }
        }
    }

    /// `Kubernetes.Records`.
    fn records(&self, state: &Req) -> Res<Vec<Rec>> {
        let r = parse_request(&state.name, &state.zone).map_err(|_| NameError::InvalidRequest)?;
        if r.pod_or_svc.is_empty() {
            return Ok(Vec::new());
        }
        if is_reverse(&state.name) {
            return Err(NameError::NoItems);
        }
        if !self.namespace_exposed(&r.namespace) {
            return Err(NameError::NsNotExposed);
        }
        if r.pod_or_svc == "pod" {
            self.find_pods(&r, &state.zone)
        } else {
            self.find_services(&r, &state.zone)
        }
    }

    /// `findPods`, `pods insecure`: any well-formed dashed address in an existing namespace.
    fn find_pods(&self, r: &RecordRequest, zone: &str) -> Res<Vec<Rec>> {
        if !self.namespace_exposed(&r.namespace) {
            return Err(NameError::NoItems);
        }
        let podname = &r.service;
        if podname.is_empty() {
            return Ok(Vec::new());
        }
        let ip = if podname.matches('-').count() == 3 && !podname.contains("--") { podname.replace('-', ".") } else { podname.replace('-', ":") };
        if parse_ip(&ip).is_none() {
            return Err(NameError::NoItems);
        }
        Ok(vec![Rec::new(ip, 0, self.ttl(), format!("{podname}.{}.pod.{zone}", r.namespace))])
    }

    /// `findServices`.
    fn find_services(&self, r: &RecordRequest, zone: &str) -> Res<Vec<Rec>> {
        if !self.namespace_exposed(&r.namespace) {
            return Err(NameError::NoItems);
        }
        if r.service.is_empty() {
            return Ok(Vec::new());
        }
        let mut err = Some(NameError::NoItems);
        let mut services = Vec::new();
        let ttl = self.ttl();
        if let Some(svc) = self.z.service(&r.namespace, &r.service) {
            let svc_name = format!("{}.{}.svc.{zone}", svc.name, svc.namespace);
            if svc.external_name_type {
                // No endpoints, and no port/protocol pseudo-subdomains, for ExternalName services.
                if r.endpoint.is_empty() && r.port.is_empty() && r.protocol.is_empty() {
                    let s = Rec::new(svc.external_name.clone(), 0, ttl, svc_name);
                    if matches!(s.host_type(), HostType::Cname) {
                        services.push(s);
                        err = None;
                    }
                }
            } else if svc.headless() || !r.endpoint.is_empty() {
                for ep in self.z.slices_of(&svc.namespace, &svc.name) {
                    for addr in &ep.addresses {
                        let host = endpoint_hostname(addr);
                        if !r.endpoint.is_empty() && !eq_fold(&r.endpoint, &host) {
                            continue;
                        }
                        for p in &ep.ports {
                            if !match_port_and_protocol(&r.port, &p.name, &r.protocol, &p.protocol) {
                                continue;
                            }
                            services.push(Rec::new(addr.ip.clone(), p.port, ttl, format!("{host}.{svc_name}")));
                            err = None;
                        }
                    }
                }
            } else {
                for p in &svc.ports {
                    if !match_port_and_protocol(&r.port, &p.name, &r.protocol, &p.protocol) {
                        continue;
                    }
                    err = None;
                    for ip in &svc.cluster_ips {
                        services.push(Rec::new(ip.clone(), p.port, ttl, svc_name.clone()));
                    }
                }
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(services),
        }
    }

    /// `nsAddrs(false, false, zone)`: the kube-dns Service records whose endpoints hold one of our
    /// own addresses, else `ns.dns.<zone>` at our own addresses.
    fn ns_addrs(&self, zone: &str) -> Vec<(String, IpAddr)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut found = false;
        for local in &self.z.local_ips {
            for ep in self.z.slices_with_ip(local) {
                found = true;
                let Some(svc) = self.z.service(&ep.namespace, &ep.service) else {
                    continue;
                };
                let svc_name = format!("{}.{}.svc.{zone}", svc.name, svc.namespace);
                if svc.headless() {
                    for a in &ep.addresses {
                        out.push((format!("{}.{svc_name}", endpoint_hostname(a)), a.ip.clone()));
                    }
                } else {
                    for ip in &svc.cluster_ips {
                        out.push((svc_name.clone(), ip.clone()));
                    }
                }
            }
        }
        if !found {
            out = self.z.local_ips.iter().map(|ip| (format!("ns.dns.{zone}"), ip.clone())).collect();
        }
        out.into_iter()
            .filter_map(|(n, ip)| {
                parse_ip(&ip).map(|ip| match ip {
                    IpAddr::V6(v6) => (n, v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(IpAddr::V6(v6))),
                    v4 => (n, v4),
                })
            })
            .collect()
    }

    /// `plugin.A` / `plugin.AAAA` (the apex check only ever falls back to the name itself here).
    fn address(&mut self, state: &Req, family: RType, previous: &[DnsRecord]) -> Res<Vec<DnsRecord>> {
        let services = self.services(state)?;
        let mut dup = BTreeSet::new();
        let mut records = Vec::new();
        for serv in services {
            match serv.host_type() {
                HostType::Cname => {
                    let target = fqdn(&serv.host);
                    if name_matches(&state.name, &target) {
                        // x CNAME x is a direct loop.
                        continue;
                    }
                    let new_record = record(&state.qname, serv.ttl, RType::Cname, target.clone());
                    if previous.len() > MAX_CNAME_CHAIN || previous.iter().any(|r| r.rtype == RType::Cname && r.data == target) {
                        continue;
                    }
                    if is_subdomain(&state.zone, &target) {
                        let state1 = Req::new(&target, &state.zone, state.qtype);
                        let mut chain = previous.to_vec();
                        chain.push(new_record.clone());
                        if let Ok(next) = self.address(&state1, family, &chain) {
                            if !next.is_empty() {
                                records.push(new_record);
                                records.extend(next);
                            }
                        }
                        continue;
                    }
                    // Outside the zone: ask upstream (the server again, i.e. `forward`).
                    let answers = (self.upstream)(&DnsQuestion { name: target, qtype: state.qtype }).map(|m| m.answers).unwrap_or_default();
                    records.push(new_record);
                    records.extend(answers);
                }
                HostType::A(ip) if family == RType::A && dup.insert(serv.host.clone()) => {
                    records.push(record(&state.qname, serv.ttl, RType::A, ip.to_string()));
                }
                HostType::Aaaa(ip) if family == RType::Aaaa && dup.insert(serv.host.clone()) => {
                    records.push(record(&state.qname, serv.ttl, RType::Aaaa, ip.to_string()));
                }
                _ => {}
            }
        }
        Ok(records)
    }

    /// `plugin.SRV`: weights share 100 per priority; address targets get a synthesised name and
    /// their A/AAAA in the additional section.
    fn srv(&mut self, state: &Req) -> Res<(Vec<DnsRecord>, Vec<DnsRecord>)> {
        let services = self.services(state)?;
        // Every record has priority 0 and weight 0 (⇒ 100) here.
        let total = 100.0 * services.len() as f64;
        let mut dup: BTreeSet<(String, u16, String)> = BTreeSet::new();
        let mut lookup: BTreeSet<String> = BTreeSet::new();
        let (mut records, mut extra) = (Vec::new(), Vec::new());
        for serv in services {
            if serv.port == -1 {
                continue;
            }
            let weight = ((100.0 / total * 100.0).floor() as u16).max(1);
            let port = serv.port as u16;
            match serv.host_type() {
                HostType::Cname => {
                    let target = fqdn(&serv.host);
                    records.push(record(&state.qname, serv.ttl, RType::Srv, format!("0 {weight} {port} {target}")));
                    if !lookup.insert(target.clone()) {
                        continue;
                    }
                    if !is_subdomain(&state.zone, &target) {
                        for t in [RType::A, RType::Aaaa] {
                            if let Some(m) = (self.upstream)(&DnsQuestion { name: target.clone(), qtype: t }) {
                                extra.extend(m.answers.into_iter().filter(|a| t == RType::A || a.rtype != RType::Cname));
                            }
                        }
                        continue;
                    }
                    let state1 = Req::new(&target, &state.zone, RType::A);
                    if let Ok(addr) = self.address(&state1, RType::A, &[]) {
                        extra.extend(addr);
                    }
                }
                HostType::A(_) | HostType::Aaaa(_) => {
                    let target = serv.key.clone();
                    if dup.insert((target.clone(), port, String::new())) {
                        records.push(record(&state.qname, serv.ttl, RType::Srv, format!("0 {weight} {port} {target}")));
                    }
                    if dup.insert((target.clone(), 0, serv.host.clone())) {
                        let (t, ip) = match serv.host_type() {
                            HostType::A(v4) => (RType::A, v4.to_string()),
                            HostType::Aaaa(v6) => (RType::Aaaa, v6.to_string()),
                            _ => unreachable!("address host type"),
                        };
                        extra.push(record(&target, serv.ttl, t, ip));
                    }
                }
                HostType::Txt => {}
            }
        }
        Ok((records, extra))
    }

    /// `plugin.CNAME`: the first record, if it is a name.
    fn cname(&mut self, state: &Req) -> Res<Vec<DnsRecord>> {
        let services = self.services(state)?;
        Ok(services.first().filter(|s| parse_ip(&s.host).is_none()).map(|s| record(&state.qname, s.ttl, RType::Cname, fqdn(&s.host))).into_iter().collect())
    }

    /// `plugin.TXT`: only `dns-version.<zone>` has one.
    fn txt(&mut self, state: &Req) -> Res<Vec<DnsRecord>> {
        let services = self.services(state)?;
        let mut dup = BTreeSet::new();
        Ok(services
            .into_iter()
            .filter(|s| matches!(s.host_type(), HostType::Txt) && dup.insert(s.text.clone()))
            .map(|s| record(&state.qname, s.ttl, RType::Txt, format!("\"{}\"", s.text)))
            .collect())
    }

    /// `plugin.PTR` over `Kubernetes.Reverse`.
    fn ptr(&mut self, state: &Req) -> Res<Vec<DnsRecord>> {
        let ip = extract_address_from_reverse(&state.name);
        if ip.is_empty() {
            self.records(state)?;
            return Ok(Vec::new());
        }
        let services = self.service_record_for_ip(&ip);
        if services.is_empty() {
            return Err(NameError::NoItems);
        }
        let mut dup = BTreeSet::new();
        Ok(services
            .into_iter()
            .filter(|s| parse_ip(&s.host).is_none() && dup.insert(s.host.clone()))
            .map(|s| record(&state.qname, s.ttl, RType::Ptr, fqdn(&s.host)))
            .collect())
    }

    /// `serviceRecordForIP`: the (first) service with this cluster IP, else every ready endpoint
    /// with this address, named `<hostname|dashed-ip>.<service>.<ns>.svc.<domain>`.
    fn service_record_for_ip(&self, ip: &str) -> Vec<Rec> {
        let primary = &self.z.domain;
        if let Some(svc) = self.z.services_with_ip(ip).next() {
            return vec![Rec::new(format!("{}.{}.svc.{primary}", svc.name, svc.namespace), 0, self.ttl(), "")];
        }
        let mut out = Vec::new();
        for ep in self.z.slices_with_ip(ip) {
            for a in ep.addresses.iter().filter(|a| a.ip == ip) {
                out.push(Rec::new(format!("{}.{}.{}.svc.{primary}", endpoint_hostname(a), ep.service, ep.namespace), 0, self.ttl(), ""));
            }
        }
        out
    }

    /// `plugin.NS` for the zone apex.
    fn ns(&mut self, state: &Req) -> Res<(Vec<DnsRecord>, Vec<DnsRecord>)> {
        let fake = Req::new(&format!("ns.dns.{}", state.zone), &state.zone, RType::Ns);
        let services = self.services(&fake)?;
        let (mut records, mut extra) = (Vec::new(), Vec::new());
        let mut seen = BTreeSet::new();
        for serv in services {
            let target = fqdn(&serv.key);
            let (t, ip) = match serv.host_type() {
                HostType::A(v4) => (RType::A, v4.to_string()),
                HostType::Aaaa(v6) => (RType::Aaaa, v6.to_string()),
                _ => continue,
            };
            extra.push(record(&target, serv.ttl, t, ip));
            if seen.insert(target.clone()) {
                records.push(record(&state.qname, serv.ttl, RType::Ns, target));
            }
        }
        Ok((records, extra))
    }
}

/// `isDefaultNS`: `ns.dns.<zone>`.
fn is_default_ns(name: &str, zone: &str) -> bool {
    name.strip_prefix("ns.dns.") == Some(zone)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TestParseRequest and TestParseInvalidRequest (parse_test.go).
    #[test]
    fn parse_request_vectors() {
        let zone = "inter.webs.tests.";
        let ok = [
            ("_http._tcp.webs.mynamespace.svc.inter.webs.tests.", "http.tcp..webs.mynamespace.svc"),
            ("1-2-3-4.webs.mynamespace.svc.inter.webs.tests.", "..1-2-3-4.webs.mynamespace.svc"),
            ("inter.webs.tests.", "....."),
            ("svc.inter.webs.tests.", "....."),
            ("pod.inter.webs.tests.", "....."),
            ("..webs.mynamespace.svc.inter.webs.tests.", "...webs.mynamespace.svc"),
        ];
        for (q, want) in ok {
            let r = parse_request(q, zone).unwrap_or_else(|_| panic!("{q}"));
            let got = [&r.port, &r.protocol, &r.endpoint, &r.service, &r.namespace, &r.pod_or_svc].map(|s| s.as_str()).join(".");
            assert_eq!(got, want, "{q}");
        }
        for q in ["webs.mynamespace.pood.inter.webs.test.", "too.long.for.what.I.am.trying.to.pod.inter.webs.tests."] {
            assert!(parse_request(q, zone).is_err(), "{q}");
        }
    }

    /// TestEndpointHostname (kubernetes_test.go), the rows without endpoint_pod_names.
    #[test]
    fn endpoint_hostname_vectors() {
        let a = |ip: &str, h: &str| Addr { ip: ip.into(), hostname: h.into() };
        assert_eq!(endpoint_hostname(&a("10.11.12.13", "")), "10-11-12-13");
        assert_eq!(endpoint_hostname(&a("10.11.12.13", "epname")), "epname");
        assert_eq!(endpoint_hostname(&a("5678:abcd::1", "")), "5678-abcd--1");
    }

    #[test]
    fn reverse_names() {
        assert_eq!(extract_address_from_reverse("54.119.58.176.in-addr.arpa."), "176.58.119.54");
        assert_eq!(extract_address_from_reverse("b.a.9.8.7.6.5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa."), "2001:db8::567:89ab");
        assert_eq!(extract_address_from_reverse("3.2.1.in-addr.arpa."), "");
        assert_eq!(extract_address_from_reverse("example.org."), "");
    }

    #[test]
    fn zone_helpers() {
        assert_eq!(trim_zone("a.b.cluster.local.", "Cluster.Local."), "a.b");
        assert_eq!(trim_zone("cluster.local.", "cluster.local."), "");
        assert!(is_subdomain("cluster.local.", "X.Cluster.LOCAL."));
        assert!(!is_subdomain("cluster.local.", "xcluster.local."));
        assert_eq!(match_zone(&["cluster.local.", "in-addr.arpa.", "ip6.arpa."], "1.0.0.10.in-addr.arpa."), Some("in-addr.arpa."));
        assert!(is_default_ns("ns.dns.cluster.local.", "cluster.local."));
    }
}
