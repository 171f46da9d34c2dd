//! `dig` (bind9 9.18): `@server`, `-t TYPE`/`TYPE`, `-p PORT`, `-x ADDR`, `+short`, `+search`,
//! `+tcp`, `+noall +answer`, `+time=N`, `+tries=N`.

use super::{candidates, Libc, ResolvConf};
use crate::program::{default_signal_exit, DnsMessage, DnsQuestion, DnsRecord, NetCall, NetReply, Os, Program, RType, Rcode, Spawn, Step, Wake};

/// The version dig prints.
pub const VERSION: &str = "9.18.28-1~deb12u2-Debian";

/// The `dig` program.
#[derive(Clone, Debug)]
pub struct Dig {
    spawn: Spawn,
    server: String,
    port: u16,
    qtype: RType,
    names: Vec<String>,
    ni: usize,
    short: bool,
    noall: bool,
    answer_only: bool,
    tcp: bool,
    time_s: u64,
    tries: u32,
    attempt: u32,
    id: u16,
    start_ms: u64,
    cmdline: String,
    last: Option<Step>,
}

/// Pads `s` with tabs to `col` (8-column tab stops), or one space if already past it.
fn pad_to(s: &mut String, col: usize) {
    let mut cur = 0;
    for ch in s.chars() {
        cur = if ch == '\t' { (cur / 8 + 1) * 8 } else { cur + 1 };
    }
    if cur >= col {
        s.push(' ');
        return;
    }
    while cur < col {
        s.push('\t');
        cur = (cur / 8 + 1) * 8;
    }
}

/// A record in dig's master-file style.
pub fn record_line(r: &DnsRecord) -> String {
    let mut s = r.name.clone();
    if !s.ends_with('.') {
        s.push('.');
    }
    pad_to(&mut s, 24);
    s.push_str(&r.ttl.to_string());
    pad_to(&mut s, 32);
    s.push_str("IN");
    pad_to(&mut s, 40);
    s.push_str(r.rtype.name());
    pad_to(&mut s, 48);
    s.push_str(&r.data);
    s
}

impl Dig {
    /// From a spawn.
    pub fn new(spawn: &Spawn) -> Dig {
        Dig {
            spawn: spawn.clone(),
            server: String::new(),
            port: 53,
            qtype: RType::A,
            names: Vec::new(),
            ni: 0,
            short: false,
            noall: false,
            answer_only: false,
            tcp: false,
            time_s: 5,
            tries: 3,
            attempt: 0,
            id: 0,
            start_ms: 0,
            cmdline: String::new(),
            last: None,
        }
    }

    fn call(&self) -> NetCall {
        NetCall::Dns {
            server: self.server.clone(),
            port: self.port,
            question: DnsQuestion { name: format!("{}.", self.names[self.ni].trim_end_matches('.')), qtype: self.qtype },
            tcp: self.tcp,
            timeout_ms: self.time_s * 1000,
        }
    }

    fn start(&mut self, os: &mut dyn Os) -> Step {
        let args = self.spawn.argv[1..].to_vec();
        self.cmdline = args.join(" ");
        let rc = ResolvConf::load(os.fs_ref());
        let mut name: Option<String> = None;
        let mut search = false;
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            if let Some(s) = a.strip_prefix('@') {
                self.server = s.to_string();
            } else if let Some(o) = a.strip_prefix('+') {
                let (k, v) = o.split_once('=').unwrap_or((o, ""));
                match k {
                    "short" => self.short = true,
                    "search" => search = true,
                    "nosearch" => search = false,
                    "tcp" | "vc" => self.tcp = true,
                    "notcp" => self.tcp = false,
                    "noall" => self.noall = true,
                    "answer" => self.answer_only = true,
                    "time" => self.time_s = v.parse().unwrap_or(5).max(1),
                    "tries" => self.tries = v.parse().unwrap_or(3).max(1),
                    "retry" => self.tries = v.parse::<u32>().unwrap_or(2) + 1,
                    _ => {}
                }
            } else if a == "-t" {
                i += 1;
                if let Some(t) = args.get(i).and_then(|t| RType::parse(t)) {
                    self.qtype = t;
                }
            } else if a == "-p" {
                i += 1;
                self.port = args.get(i).and_then(|p| p.parse().ok()).unwrap_or(53);
            } else if a == "-x" {
                i += 1;
                if let Some(ip) = args.get(i) {
                    let p: Vec<&str> = ip.split('.').collect();
                    if p.len() == 4 {
                        name = Some(format!("{}.{}.{}.{}.in-addr.arpa", p[3], p[2], p[1], p[0]));
                        self.qtype = RType::Ptr;
                    }
                }
            } else if a.starts_with('-') {
            } else if let (Some(t), true) = (RType::parse(a), name.is_some()) {
                self.qtype = t;
            } else if name.is_none() {
                name = Some(a.clone());
            } else if let Some(t) = RType::parse(a) {
                self.qtype = t;
            }
            i += 1;
        }
        let name = name.unwrap_or_else(|| ".".into());
        if self.server.is_empty() {
            self.server = rc.nameservers.first().cloned().unwrap_or_else(|| "127.0.0.1".into());
        }
        self.names = if search && name != "." { candidates(&name, &rc, Libc::Glibc) } else { vec![name] };
        self.id = (os.random_u64() & 0xffff) as u16;
        self.start_ms = os.now_ms();
        Step::Net(self.call())
    }

    fn render(&self, os: &dyn Os, m: &DnsMessage) -> String {
        if self.short {
            let mut s = String::new();
            for a in &m.answers {
                s.push_str(&a.data);
                s.push('\n');
            }
            return s;
        }
        let qname = format!("{}.", self.names[self.ni].trim_end_matches('.'));
        let mut s = String::new();
        if self.noall {
            if self.answer_only {
                for a in &m.answers {
                    s.push_str(&record_line(a));
                    s.push('\n');
                }
            }
            return s;
        }
        s.push_str(&format!("\n; <<>> DiG {VERSION} <<>> {}\n", self.cmdline));
        s.push_str(";; global options: +cmd\n;; Got answer:\n");
        s.push_str(&format!(";; ->>HEADER<<- opcode: QUERY, status: {}, id: {}\n", m.rcode.name(), self.id));
        let flags = if m.authoritative { "qr aa rd" } else { "qr rd ra" };
        s.push_str(&format!(
            ";; flags: {flags}; QUERY: 1, ANSWER: {}, AUTHORITY: {}, ADDITIONAL: {}\n",
            m.answers.len(),
            m.authority.len(),
            m.additional.len() + 1
        ));
        if m.authoritative {
            s.push_str(";; WARNING: recursion requested but not available\n");
        }
        s.push_str("\n;; OPT PSEUDOSECTION:\n; EDNS: version: 0, flags:; udp: 1232\n");
        s.push_str(";; QUESTION SECTION:\n");
        let mut q = format!(";{qname}");
        pad_to(&mut q, 32);
        q.push_str("IN");
        pad_to(&mut q, 40);
        q.push_str(self.qtype.name());
        s.push_str(&q);
        s.push_str("\n\n");
        for (title, recs) in [("ANSWER", &m.answers), ("AUTHORITY", &m.authority), ("ADDITIONAL", &m.additional)] {
            if recs.is_empty() {
                continue;
            }
            s.push_str(&format!(";; {title} SECTION:\n"));
            for r in recs {
                s.push_str(&record_line(r));
                s.push('\n');
            }
            s.push('\n');
        }
        let ms = os.now_ms().saturating_sub(self.start_ms);
        let when = crate::time::strftime("%a %b %d %H:%M:%S UTC %Y", os.unix_time() as i64, 0);
        s.push_str(&format!(
            ";; Query time: {ms} msec\n;; SERVER: {}#{}({}) ({})\n;; WHEN: {when}\n",
            self.server,
            self.port,
            self.server,
            if self.tcp { "TCP" } else { "UDP" }
        ));
        let size = 12 + qname.len() + 5 + m.answers.iter().map(|a| a.name.len() + 12 + a.data.len()).sum::<usize>() + 11;
        s.push_str(&format!(";; MSG SIZE  rcvd: {size}\n\n"));
        s
    }
}

impl Program for Dig {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        let step = match wake {
            Wake::Start => self.start(os),
            Wake::Net(NetReply::Dns(r)) => match r {
                Err(_) => {
                    self.attempt += 1;
                    if self.attempt >= self.tries {
                        let msg = if self.short {
                            format!(";; connection timed out; no servers could be reached\n")
                        } else {
                            format!(
                                "\n; <<>> DiG {VERSION} <<>> {}\n;; global options: +cmd\n;; connection timed out; no servers could be reached\n",
                                self.cmdline
                            )
                        };
                        let _ = os.write_stdout(msg.as_bytes());
                        Step::Exit(9)
                    } else {
                        Step::Net(self.call())
                    }
                }
                Ok(m) => {
                    if m.rcode == Rcode::NxDomain && self.ni + 1 < self.names.len() {
                        self.ni += 1;
                        Step::Net(self.call())
                    } else {
                        let s = self.render(os, &m);
                        let _ = os.write_stdout(s.as_bytes());
                        Step::Exit(0)
                    }
                }
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
