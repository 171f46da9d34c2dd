//! `nslookup` in two styles: busybox ≥ 1.30 (its own DNS client: A+AAAA queries, the search
//! list only for names without a dot, every reply printed) and bind9's (dnsutils: the
//! resolver's search rules with `ndots`, only the final answer printed).

use super::{candidates, is_ipv4, Libc, ResolvConf};
use crate::program::{default_signal_exit, DnsMessage, DnsQuestion, DnsRecord, NetCall, NetReply, Os, Program, RType, Rcode, Spawn, Step, Wake};

/// Output style.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// busybox 1.36.
    Busybox,
    /// bind9 9.18 (dnsutils).
    Bind,
    /// busybox ≤ 1.28 (getaddrinfo through the libc resolver, `Address 1: IP NAME` lines with
    /// reverse lookups) — the format the Kubernetes DNS-debugging page shows.
    Busybox128,
}

/// The `nslookup` program.
#[derive(Clone, Debug)]
pub struct Nslookup {
    spawn: Spawn,
    style: Style,
    name: String,
    servers: Vec<String>,
    si: usize,
    port: u16,
    timeout_s: u64,
    /// Busybox: the queries (name, type); bind: candidate names.
    queries: Vec<(String, RType)>,
    qi: usize,
    replies: usize,
    out: String,
    exit: i32,
    printed_server: bool,
    bind_answers: Vec<DnsRecord>,
    bind_auth: bool,
    bind_found: Option<String>,
    bind_stage_aaaa: bool,
    last: Option<Step>,
    old: Option<Old>,
}

/// busybox 1.28 state: reverse lookup of the server, forward lookup, reverse of each address.
#[derive(Clone, Debug)]
struct Old {
    phase: u8,
    resolver: Option<Box<super::Resolver>>,
    addrs: Vec<String>,
    ai: usize,
    lines: Vec<String>,
}

fn ptr_query(server: &str, ip: &str) -> NetCall {
    NetCall::Dns {
        server: server.to_string(),
        port: 53,
        question: DnsQuestion { name: format!("{}.", ptr_name(ip)), qtype: RType::Ptr },
        tcp: false,
        timeout_ms: 5000,
    }
}

fn ptr_answer(r: &Result<DnsMessage, crate::program::NetError>) -> Option<String> {
    let m = r.as_ref().ok()?;
    m.answers.iter().find(|a| a.rtype == RType::Ptr).map(|a| strip_dot(&a.data).to_string())
}

fn ptr_name(ip: &str) -> String {
    let p: Vec<&str> = ip.split('.').collect();
    format!("{}.{}.{}.{}.in-addr.arpa", p[3], p[2], p[1], p[0])
}

fn strip_dot(s: &str) -> &str {
    s.strip_suffix('.').unwrap_or(s)
}

/// busybox's record lines.
fn bb_record(r: &DnsRecord) -> String {
    let name = strip_dot(&r.name);
    match r.rtype {
        RType::A | RType::Aaaa => format!("Name:\t{name}\nAddress: {}\n", r.data),
        RType::Cname => format!("{name}\tcanonical name = {}\n", strip_dot(&r.data)),
        RType::Ptr => format!("{name}\tname = {}\n", strip_dot(&r.data)),
        RType::Ns => format!("{name}\tnameserver = {}\n", strip_dot(&r.data)),
        RType::Srv => {
            let f: Vec<&str> = r.data.split_whitespace().collect();
            if f.len() == 4 {
                format!("{name}\tservice = {} {} {} {}\n", f[0], f[1], f[2], strip_dot(f[3]))
            } else {
                format!("{name}\tservice = {}\n", r.data)
            }
        }
        RType::Txt => format!("{name}\ttext = \"{}\"\n", r.data.trim_matches('"')),
        RType::Mx => {
            let (p, h) = r.data.split_once(' ').unwrap_or(("0", &r.data));
            format!("{name}\tmail exchanger = {p} {}\n", strip_dot(h))
        }
        RType::Soa => {
            let f: Vec<&str> = r.data.split_whitespace().collect();
            let g = |i: usize| f.get(i).copied().unwrap_or("");
            format!(
                "{name}\n\torigin = {}\n\tmail addr = {}\n\tserial = {}\n\trefresh = {}\n\tretry = {}\n\texpire = {}\n\tminimum = {}\n",
                strip_dot(g(0)),
                strip_dot(g(1)),
                g(2),
                g(3),
                g(4),
                g(5),
                g(6)
            )
        }
        RType::Any => String::new(),
    }
}

/// bind9 nslookup's record lines.
fn bind_record(r: &DnsRecord) -> String {
    let name = strip_dot(&r.name);
    match r.rtype {
        RType::A | RType::Aaaa => format!("Name:\t{name}\nAddress: {}\n", r.data),
        RType::Cname => format!("{name}\tcanonical name = {}\n", r.data),
        RType::Ptr => format!("{}\tname = {}\n", r.name.trim_end_matches('.'), r.data),
        RType::Srv => format!("{name}\tservice = {}\n", r.data),
        RType::Txt => format!("{name}\ttext = \"{}\"\n", r.data.trim_matches('"')),
        RType::Mx => format!("{name}\tmail exchanger = {}\n", r.data),
        RType::Ns => format!("{name}\tnameserver = {}\n", r.data),
        _ => format!("{name}\t{} = {}\n", r.rtype.name(), r.data),
    }
}

impl Nslookup {
    /// From a spawn.
    pub fn new(spawn: &Spawn, style: Style) -> Nslookup {
        Nslookup {
            spawn: spawn.clone(),
            style,
            name: String::new(),
            servers: Vec::new(),
            si: 0,
            port: 53,
            timeout_s: if style == Style::Bind { 2 } else { 5 },
            queries: Vec::new(),
            qi: 0,
            replies: 0,
            out: String::new(),
            exit: 0,
            printed_server: false,
            bind_answers: Vec::new(),
            bind_auth: true,
            bind_found: None,
            bind_stage_aaaa: false,
            last: None,
            old: None,
        }
    }

    fn old_start(&mut self, os: &mut dyn Os) -> Step {
        let ops: Vec<String> = self.spawn.argv[1..].iter().filter(|a| !a.starts_with('-')).cloned().collect();
        if ops.is_empty() || ops.len() > 2 || self.spawn.argv[1..].iter().any(|a| a.starts_with('-')) {
            let _ = os.write_stderr(b"BusyBox v1.28.4 (2018-05-22 17:00:17 UTC) multi-call binary.\n\nUsage: nslookup [HOST] [SERVER]\n\nQuery the nameserver for the IP address of the given HOST\noptionally using a specified DNS server\n");
            return Step::Exit(1);
        }
        self.name = ops[0].clone();
        let rc = ResolvConf::load(os.fs_ref());
        self.servers = match ops.get(1) {
            Some(s) => vec![s.clone()],
            None => rc.nameservers.first().cloned().into_iter().collect(),
        };
        if self.servers.is_empty() {
            self.servers.push("127.0.0.1".into());
        }
        self.old = Some(Old { phase: 0, resolver: None, addrs: Vec::new(), ai: 0, lines: Vec::new() });
        Step::Net(ptr_query(&self.servers[0], &self.servers[0]))
    }

    fn old_reply(&mut self, os: &mut dyn Os, r: Result<DnsMessage, crate::program::NetError>) -> Step {
        let Some(mut st) = self.old.take() else { return Step::Exit(1) };
        let server = self.servers[0].clone();
        let step = match st.phase {
            0 => {
                let ptr = ptr_answer(&r).map(|n| format!(" {n}")).unwrap_or_default();
                self.out.push_str(&format!("{:<10} {server}\nAddress 1: {server}{ptr}\n\n", "Server:"));
                let _ = os.write_stdout(std::mem::take(&mut self.out).as_bytes());
                st.phase = 1;
                let mut res = super::Resolver::new(os.fs_ref(), &self.name, Libc::Glibc).with_servers(self.servers.clone());
                let s = res.start();
                st.resolver = Some(Box::new(res));
                self.old_forward(os, &mut st, s)
            }
            1 => {
                let s = match st.resolver.as_mut() {
                    Some(res) => res.reply(&NetReply::Dns(r)),
                    None => super::ResolveStep::Done(Err(super::ResolveError::NotFound)),
                };
                self.old_forward(os, &mut st, s)
            }
            _ => {
                let ip = st.addrs[st.ai].clone();
                let ptr = ptr_answer(&r).map(|n| format!(" {n}")).unwrap_or_default();
                st.lines.push(format!("Address {}: {ip}{ptr}\n", st.ai + 1));
                st.ai += 1;
                if st.ai < st.addrs.len() {
                    Step::Net(ptr_query(&server, &st.addrs[st.ai]))
                } else {
                    let mut out = format!("{:<10} {}\n", "Name:", self.name);
                    for l in &st.lines {
                        out.push_str(l);
                    }
                    let _ = os.write_stdout(out.as_bytes());
                    Step::Exit(0)
                }
            }
        };
        self.old = Some(st);
        step
    }

    fn old_forward(&mut self, os: &mut dyn Os, st: &mut Old, s: super::ResolveStep) -> Step {
        match s {
            super::ResolveStep::Query(c) => Step::Net(c),
            super::ResolveStep::Done(Ok(r)) => {
                st.addrs = r.addrs;
                st.phase = 2;
                Step::Net(ptr_query(&self.servers[0], &st.addrs[0]))
            }
            super::ResolveStep::Done(Err(_)) => {
                let _ = os.write_stderr(format!("nslookup: can't resolve '{}'\n", self.name).as_bytes());
                Step::Exit(1)
            }
        }
    }

    fn usage(&self, os: &mut dyn Os) -> Step {
        let msg = match self.style {
            Style::Busybox => "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: nslookup [-type=QUERY_TYPE] [-debug] HOST [DNS_SERVER]\n\nQuery DNS about HOST\n\nQUERY_TYPE: soa,ns,a,aaaa,cname,mx,txt,ptr,srv,any\n",
            Style::Bind | Style::Busybox128 => "Usage: nslookup [-opt ...] host [server]\n",
        };
        let _ = os.write_stderr(msg.as_bytes());
        Step::Exit(1)
    }

    fn call(&self) -> NetCall {
        let (n, t) = self.queries[self.qi].clone();
        NetCall::Dns {
            server: self.servers[self.si].clone(),
            port: self.port,
            question: DnsQuestion { name: format!("{n}."), qtype: t },
            tcp: false,
            timeout_ms: self.timeout_s * 1000,
        }
    }

    fn start(&mut self, os: &mut dyn Os) -> Step {
        let mut types: Vec<RType> = Vec::new();
        let mut ops = Vec::new();
        for a in self.spawn.argv[1..].to_vec() {
            if let Some(o) = a.strip_prefix('-') {
                let (k, v) = o.split_once('=').unwrap_or((o, ""));
                match k {
                    "type" | "querytype" | "q" | "t" => match RType::parse(v) {
                        Some(t) => types.push(t),
                        None => {
                            let _ = os.write_stderr(format!("nslookup: invalid query type \"{v}\"\n").as_bytes());
                            return Step::Exit(1);
                        }
                    },
                    "port" => self.port = v.parse().unwrap_or(53),
                    "timeout" => self.timeout_s = v.parse().unwrap_or(5).max(1),
                    "retry" | "debug" | "nodebug" | "vc" | "novc" | "fail" | "nofail" | "recurse" | "norecurse" => {}
                    _ => return self.usage(os),
                }
                continue;
            }
            ops.push(a);
        }
        if ops.is_empty() || ops.len() > 2 {
            return self.usage(os);
        }
        self.name = ops[0].clone();
        let rc = ResolvConf::load(os.fs_ref());
        self.servers = match ops.get(1) {
            Some(s) => vec![s.clone()],
            None => rc.nameservers.clone(),
        };
        if self.servers.is_empty() {
            self.servers.push("127.0.0.1".into());
        }
        match self.style {
            Style::Busybox => {
                if types.is_empty() {
                    if is_ipv4(&self.name) {
                        self.queries.push((ptr_name(&self.name), RType::Ptr));
                    } else {
                        for t in [RType::A, RType::Aaaa] {
                            self.add_with_search(&rc, t);
                        }
                    }
                } else {
                    for t in types {
                        self.add_with_search(&rc, t);
                    }
                }
            }
            Style::Bind | Style::Busybox128 => {
                if is_ipv4(&self.name) {
                    self.queries.push((ptr_name(&self.name), RType::Ptr));
                } else {
                    let t = types.first().copied().unwrap_or(RType::A);
                    for c in candidates(&self.name, &rc, Libc::Glibc) {
                        self.queries.push((c, t));
                    }
                }
            }
        }
        Step::Net(self.call())
    }

    fn add_with_search(&mut self, rc: &ResolvConf, t: RType) {
        if t == RType::Ptr || rc.search.is_empty() || self.name.contains('.') {
            self.queries.push((self.name.clone(), t));
            return;
        }
        for d in &rc.search {
            self.queries.push((format!("{}.{d}", self.name), t));
        }
    }

    fn server_header(&mut self) {
        if self.printed_server {
            return;
        }
        self.printed_server = true;
        let s = self.servers[self.si].clone();
        match self.style {
            Style::Busybox => self.out.push_str(&format!("Server:\t\t{s}\nAddress:\t{s}:{}\n\n", self.port)),
            Style::Bind | Style::Busybox128 => self.out.push_str(&format!("Server:\t\t{s}\nAddress:\t{s}#{}\n\n", self.port)),
        }
    }

    fn finish(&mut self, os: &mut dyn Os) -> Step {
        let out = std::mem::take(&mut self.out);
        let _ = os.write_stdout(out.as_bytes());
        Step::Exit(self.exit)
    }

    fn on_reply_busybox(&mut self, os: &mut dyn Os, r: Result<DnsMessage, crate::program::NetError>) -> Step {
        match r {
            Err(_) => {
                // No reply from this server within the timeout: try the next one.
                if self.replies == 0 {
                    self.si += 1;
                    self.qi = 0;
                    if self.si >= self.servers.len() {
                        self.out.push_str(";; connection timed out; no servers could be reached\n\n");
                        self.exit = 1;
                        return self.finish(os);
                    }
                    return Step::Net(self.call());
                }
            }
            Ok(m) => {
                self.server_header();
                self.replies += 1;
                let qname = self.queries[self.qi].0.clone();
                if m.rcode != Rcode::NoError {
                    self.out.push_str(&format!("** server can't find {qname}: {}\n", m.rcode.name()));
                    self.exit = 1;
                } else {
                    if !m.authoritative {
                        self.out.push_str("Non-authoritative answer:\n");
                    }
                    // An empty NOERROR answer (NODATA, the AAAA query for an IPv4-only Service)
                    // prints nothing but the blank line below since busybox 1.33 (commit
                    // 49fd1d69b "nslookup: do not print "No answer" for NODATA replies");
                    // 1.29-1.32 printed `*** Can't find NAME: No answer` there.
                    for a in &m.answers {
                        self.out.push_str(&bb_record(a));
                    }
                }
                self.out.push('\n');
            }
        }
        self.qi += 1;
        if self.qi >= self.queries.len() {
            return self.finish(os);
        }
        Step::Net(self.call())
    }

    fn on_reply_bind(&mut self, os: &mut dyn Os, r: Result<DnsMessage, crate::program::NetError>) -> Step {
        match r {
            Err(_) => {
                self.si += 1;
                if self.si >= self.servers.len() {
                    self.out.push_str(";; connection timed out; no servers could be reached\n\n");
                    self.exit = 1;
                    return self.finish(os);
                }
                Step::Net(self.call())
            }
            Ok(m) => {
                self.server_header();
                if self.bind_stage_aaaa {
                    self.bind_answers.extend(m.answers.into_iter().filter(|a| a.rtype == RType::Aaaa));
                    return self.bind_print(os);
                }
                match m.rcode {
                    Rcode::NoError if !m.answers.is_empty() => {
                        self.bind_auth = m.authoritative;
                        self.bind_answers = m.answers;
                        let (n, t) = self.queries[self.qi].clone();
                        self.bind_found = Some(n.clone());
                        if t == RType::A {
                            self.bind_stage_aaaa = true;
                            self.queries = vec![(n, RType::Aaaa)];
                            self.qi = 0;
                            return Step::Net(self.call());
                        }
                        self.bind_print(os)
                    }
                    Rcode::NoError | Rcode::NxDomain => {
                        self.qi += 1;
                        if self.qi >= self.queries.len() {
                            if m.rcode == Rcode::NoError {
                                self.out.push_str(&format!("*** Can't find {}: No answer\n\n", self.name));
                            } else {
                                self.out.push_str(&format!("** server can't find {}: NXDOMAIN\n\n", self.name));
                                self.exit = 1;
                            }
                            return self.finish(os);
                        }
                        Step::Net(self.call())
                    }
                    other => {
                        self.out.push_str(&format!("** server can't find {}: {}\n\n", self.name, other.name()));
                        self.exit = 1;
                        self.finish(os)
                    }
                }
            }
        }
    }

    fn bind_print(&mut self, os: &mut dyn Os) -> Step {
        if !self.bind_auth {
            self.out.push_str("Non-authoritative answer:\n");
        }
        let recs = std::mem::take(&mut self.bind_answers);
        for r in &recs {
            self.out.push_str(&bind_record(r));
        }
        self.out.push('\n');
        self.finish(os)
    }
}

impl Program for Nslookup {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        let step = match wake {
            Wake::Start if self.style == Style::Busybox128 => self.old_start(os),
            Wake::Start => self.start(os),
            Wake::Net(NetReply::Dns(r)) => match self.style {
                Style::Busybox => self.on_reply_busybox(os, r),
                Style::Bind => self.on_reply_bind(os, r),
                Style::Busybox128 => self.old_reply(os, r),
            },
            Wake::Signal(s) => match default_signal_exit(os, s) {
                Some(c) => Step::Exit(c),
                None => self.last.clone().unwrap_or(Step::Exit(1)),
            },
            _ => self.last.clone().unwrap_or(Step::Exit(1)),
        };
        self.last = Some(step.clone());
        step
    }
}
