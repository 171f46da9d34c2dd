//! glibc `getent` (Debian 12 libc-bin 2.36): `hosts`, `ahosts`, `ahostsv4`, `passwd`, `group`.
//!
//! `getent hosts NAME` mirrors `hosts_keys` in glibc's `nss/getent.c`: IPv6 first
//! (`gethostbyname2(AF_INET6)`, answered here only by IPv6 lines of `/etc/hosts`; AAAA is not
//! asked of DNS, like the rest of this crate's resolver), then IPv4 through `/etc/hosts` and
//! the DNS search list. Lines are `printf("%-15s %s", ip, canonical)` plus the aliases.

use super::{libc_of, ResolveStep, Resolver};
use crate::program::{default_signal_exit, Os, Program, Spawn, Step, Wake};

/// The `getent` program.
#[derive(Clone, Debug)]
pub struct Getent {
    spawn: Spawn,
    /// Keys still to look up (hosts databases).
    keys: Vec<String>,
    db: String,
    status: i32,
    resolver: Option<Box<Resolver>>,
}

const TRY_HELP: &str = "Try `getent --help' or `getent --usage' for more information.\n";

/// `/etc/hosts` lines naming `name`: (ip, canonical, aliases), IPv6 or IPv4 ones.
fn hosts_entries(os: &mut dyn Os, name: &str, v6: bool) -> Vec<(String, String, Vec<String>)> {
    let Ok(d) = os.fs_ref().read("/etc/hosts") else { return Vec::new() };
    let text = String::from_utf8_lossy(&d).into_owned();
    let want = name.trim_end_matches('.');
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        let mut it = line.split_whitespace();
        let Some(ip) = it.next() else { continue };
        if ip.contains(':') != v6 {
            continue;
        }
        let names: Vec<String> = it.map(str::to_string).collect();
        if names.iter().any(|n| n.eq_ignore_ascii_case(want)) {
            out.push((ip.to_string(), names[0].clone(), names[1..].to_vec()));
            // glibc's files backend returns the first matching line.
            break;
        }
    }
    out
}

impl Getent {
    /// From a spawn.
    pub fn new(spawn: &Spawn) -> Getent {
        Getent { spawn: spawn.clone(), keys: Vec::new(), db: String::new(), status: 0, resolver: None }
    }

    fn print_addr(&self, os: &mut dyn Os, ip: &str, canon: &str, aliases: &[String]) {
        let line = if self.db == "hosts" {
            let mut l = format!("{ip:<15} {canon}");
            for a in aliases {
                l.push(' ');
                l.push_str(a);
            }
            l.push('\n');
            l
        } else {
            format!("{ip:<15} STREAM {canon}\n{ip:<15} DGRAM  \n{ip:<15} RAW    \n")
        };
        let _ = os.write_stdout(line.as_bytes());
    }

    /// Looks up the next key; returns a step when it needs the network.
    fn next_key(&mut self, os: &mut dyn Os) -> Step {
        while !self.keys.is_empty() {
            let key = self.keys.remove(0);
            if self.db != "ahostsv4" {
                let v6 = hosts_entries(os, &key, true);
                if let Some((ip, canon, aliases)) = v6.first() {
                    self.print_addr(os, ip, canon, aliases);
                    continue;
                }
            }
            if let Some((ip, canon, aliases)) = hosts_entries(os, &key, false).first() {
                self.print_addr(os, ip, canon, aliases);
                continue;
            }
            let libc = libc_of(os.fs_ref());
            let mut r = Resolver::new(os.fs_ref(), &key, libc);
            let s = r.start();
            self.resolver = Some(Box::new(r));
            if let Some(step) = self.on_resolve(os, s) {
                return step;
            }
        }
        Step::Exit(self.status)
    }

    fn on_resolve(&mut self, os: &mut dyn Os, s: ResolveStep) -> Option<Step> {
        match s {
            ResolveStep::Query(c) => Some(Step::Net(c)),
            ResolveStep::Done(Ok(r)) => {
                self.resolver = None;
                if self.db == "hosts" {
                    for ip in &r.addrs {
                        self.print_addr(os, ip, &r.name, &[]);
                    }
                } else {
                    for (i, ip) in r.addrs.iter().enumerate() {
                        let canon = if i == 0 { r.name.as_str() } else { "" };
                        let line = format!("{ip:<15} STREAM {canon}\n{ip:<15} DGRAM  \n{ip:<15} RAW    \n");
                        let _ = os.write_stdout(line.as_bytes());
                    }
                }
                None
            }
            ResolveStep::Done(Err(_)) => {
                self.resolver = None;
                self.status = 2;
                None
            }
        }
    }

    /// `passwd`/`group`: by name or numeric id, or the whole file.
    fn file_db(&mut self, os: &mut dyn Os, path: &str, keys: &[String]) -> Step {
        let text = os.fs_ref().read(path).map(|d| String::from_utf8_lossy(&d).into_owned()).unwrap_or_default();
        if keys.is_empty() {
            let _ = os.write_stdout(text.as_bytes());
            return Step::Exit(0);
        }
        let mut status = 0;
        for k in keys {
            let hit = text.lines().find(|l| {
                let f: Vec<&str> = l.split(':').collect();
                f.first() == Some(&k.as_str()) || (k.parse::<u64>().is_ok() && f.get(2) == Some(&k.as_str()))
            });
            match hit {
                Some(l) => {
                    let _ = os.write_stdout(format!("{l}\n").as_bytes());
                }
                None => status = 2,
            }
        }
        Step::Exit(status)
    }
}

impl Program for Getent {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        match wake {
            Wake::Start => {
                let args: Vec<String> = self.spawn.argv.iter().skip(1).cloned().collect();
                let Some(db) = args.first() else {
                    let _ = os.write_stderr(format!("getent: wrong number of arguments\n{TRY_HELP}").as_bytes());
                    return Step::Exit(1);
                };
                self.db = db.clone();
                let keys = args[1..].to_vec();
                match db.as_str() {
                    "passwd" => self.file_db(os, "/etc/passwd", &keys),
                    "group" => self.file_db(os, "/etc/group", &keys),
                    "hosts" | "ahosts" | "ahostsv4" => {
                        if keys.is_empty() {
                            if db == "hosts" {
                                let text = os.fs_ref().read("/etc/hosts").unwrap_or_default();
                                let _ = os.write_stdout(&text);
                            }
                            return Step::Exit(0);
                        }
                        self.keys = keys;
                        self.next_key(os)
                    }
                    other => {
                        let _ = os.write_stderr(format!("Unknown database: {other}\n{TRY_HELP}").as_bytes());
                        Step::Exit(1)
                    }
                }
            }
            Wake::Net(reply) => match self.resolver.take() {
                Some(mut r) => {
                    let s = r.reply(&reply);
                    self.resolver = Some(r);
                    match self.on_resolve(os, s) {
                        Some(step) => step,
                        None => self.next_key(os),
                    }
                }
                None => Step::Exit(self.status),
            },
            Wake::Signal(s) => match default_signal_exit(os, s) {
                Some(c) => Step::Exit(c),
                None => Step::Wait,
            },
            _ => Step::Exit(self.status),
        }
    }
}
