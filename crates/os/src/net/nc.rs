//! busybox `nc`: `nc [-z] [-v] [-w SEC] [-u] HOST PORT` (stdin is sent, the reply printed),
//! and `nc -l [-p] PORT` (listens; the host delivers connections to [`Program::serve`]).

use super::{libc_of, ResolveStep, Resolver};
use crate::program::{default_signal_exit, Incoming, NetCall, NetError, NetReply, Os, Outgoing, Program, Spawn, Step, Wake};

/// The `nc` program.
#[derive(Clone, Debug)]
pub struct Nc {
    spawn: Spawn,
    zero: bool,
    verbose: bool,
    udp: bool,
    wait_s: Option<u64>,
    host: String,
    port: u16,
    ip: String,
    listen: Option<u16>,
    keep: bool,
    resolver: Option<Box<Resolver>>,
    last: Option<Step>,
    served: bool,
}

impl Nc {
    /// From a spawn.
    pub fn new(spawn: &Spawn) -> Nc {
        Nc {
            spawn: spawn.clone(),
            zero: false,
            verbose: false,
            udp: false,
            wait_s: None,
            host: String::new(),
            port: 0,
            ip: String::new(),
            listen: None,
            keep: false,
            resolver: None,
            last: None,
            served: false,
        }
    }

    fn usage(os: &mut dyn Os) -> Step {
        let _ = os.write_stderr(b"BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: nc [OPTIONS] HOST PORT  - connect\nnc [OPTIONS] -l -p PORT [HOST] [PORT]  - listen\n");
        Step::Exit(1)
    }

    fn start(&mut self, os: &mut dyn Os) -> Step {
        let args = self.spawn.argv[1..].to_vec();
        let mut ops = Vec::new();
        let mut i = 0;
        let mut listen = false;
        let mut lport: Option<u16> = None;
        while i < args.len() {
            let a = &args[i];
            if a.starts_with('-') && a.len() > 1 {
                for (k, c) in a[1..].chars().enumerate() {
                    match c {
                        'z' => self.zero = true,
                        'v' => self.verbose = true,
                        'u' => self.udp = true,
                        'l' => listen = true,
                        'k' => self.keep = true,
                        'n' | 'N' | 'q' => {}
                        'w' | 'p' | 'i' | 's' | 'e' => {
                            let rest = &a[2 + k..];
                            let v = if rest.is_empty() {
                                i += 1;
                                args.get(i).cloned().unwrap_or_default()
                            } else {
                                rest.to_string()
                            };
                            if c == 'w' {
                                self.wait_s = v.parse().ok();
                            }
                            if c == 'p' {
                                lport = v.parse().ok();
                            }
                            break;
                        }
                        _ => return Nc::usage(os),
                    }
                }
                i += 1;
                continue;
            }
            ops.push(a.clone());
            i += 1;
        }
        if listen {
            self.listen = lport.or_else(|| ops.last().and_then(|p| p.parse().ok()));
            if self.listen.is_none() {
                return Nc::usage(os);
            }
            return Step::Wait;
        }
        if ops.len() < 2 {
            return Nc::usage(os);
        }
        self.host = ops[0].clone();
        match ops[1].parse::<u16>() {
            Ok(p) => self.port = p,
            Err(_) => {
                let _ = os.write_stderr(format!("nc: bad port '{}'\n", ops[1]).as_bytes());
                return Step::Exit(1);
            }
        }
        let libc = libc_of(os.fs_ref());
        let mut r = Resolver::new(os.fs_ref(), &self.host, libc);
        let s = r.start();
        self.resolver = Some(Box::new(r));
        self.on_resolve(os, s)
    }

    fn on_resolve(&mut self, os: &mut dyn Os, s: ResolveStep) -> Step {
        match s {
            ResolveStep::Query(c) => Step::Net(c),
            ResolveStep::Done(Ok(r)) => {
                self.ip = r.addrs[0].clone();
                self.resolver = None;
                let timeout_ms = self.wait_s.map(|s| s * 1000).unwrap_or(super::wget::KERNEL_CONNECT_TIMEOUT_MS);
                let send = if self.zero { Vec::new() } else { self.spawn.stdin.clone() };
                if self.udp {
                    Step::Net(NetCall::Udp { dst: self.ip.clone(), port: self.port, send, timeout_ms })
                } else {
                    Step::Net(NetCall::Tcp { dst: self.ip.clone(), port: self.port, send, timeout_ms })
                }
            }
            ResolveStep::Done(Err(_)) => {
                let _ = os.write_stderr(format!("nc: bad address '{}'\n", self.host).as_bytes());
                Step::Exit(1)
            }
        }
    }

    fn on_reply(&mut self, os: &mut dyn Os, r: Result<Vec<u8>, NetError>) -> Step {
        match r {
            Ok(d) => {
                if self.verbose {
                    let _ = os.write_stderr(format!("{} ({}:{}) open\n", self.host, self.ip, self.port).as_bytes());
                }
                if !self.zero {
                    let _ = os.write_stdout(&d);
                }
                Step::Exit(0)
            }
            Err(NetError::TimedOut) if self.udp => Step::Exit(0),
            Err(e) => {
                let msg = if self.verbose {
                    format!("nc: {} ({}:{}): {}\n", self.host, self.ip, self.port, e.strerror())
                } else if e == NetError::TimedOut && self.wait_s.is_some() {
                    "nc: timed out\n".to_string()
                } else {
                    format!("nc: can't connect to remote host ({}): {}\n", self.ip, e.strerror())
                };
                let _ = os.write_stderr(msg.as_bytes());
                Step::Exit(1)
            }
        }
    }
}

impl Program for Nc {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        let step = match wake {
            Wake::Start => self.start(os),
            Wake::Net(NetReply::Tcp(r)) | Wake::Net(NetReply::Udp(r)) => self.on_reply(os, r),
            Wake::Net(reply) => match self.resolver.take() {
                Some(mut r) => {
                    let s = r.reply(&reply);
                    self.resolver = Some(r);
                    self.on_resolve(os, s)
                }
                None => Step::Exit(1),
            },
            Wake::Signal(s) => match default_signal_exit(os, s) {
                Some(c) => Step::Exit(c),
                None => self.last.clone().unwrap_or(Step::Wait),
            },
            _ => {
                if self.listen.is_some() && self.served && !self.keep {
                    Step::Exit(0)
                } else {
                    self.last.clone().unwrap_or(Step::Wait)
                }
            }
        };
        self.last = Some(step.clone());
        step
    }

    fn serve(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Outgoing> {
        let port = self.listen?;
        if conn.port != port || (self.served && !self.keep) {
            return None;
        }
        self.served = true;
        let _ = os.write_stdout(&conn.data);
        Some(Outgoing::Reply(self.spawn.stdin.clone()))
    }

    fn listening(&self) -> Vec<(u16, bool)> {
        match self.listen {
            Some(p) if !(self.served && !self.keep) => vec![(p, self.udp)],
            _ => Vec::new(),
        }
    }
}
