//! busybox/iputils `ping -c N [-W SEC] HOST`. ICMP echo is modelled as a UDP datagram to
//! port 0 (`NetCall::Udp { port: 0, .. }`): the host answers it the way the target would
//! answer an echo request (Service ClusterIPs do not; pod IPs do).

use super::{libc_of, ResolveStep, Resolver};
use crate::applets::Family;
use crate::program::{default_signal_exit, NetCall, NetReply, Os, Program, Spawn, Step, Wake};

/// The `ping` program.
#[derive(Clone, Debug)]
pub struct Ping {
    spawn: Spawn,
    family: Family,
    host: String,
    ip: String,
    count: Option<u64>,
    wait_s: u64,
    seq: u64,
    received: u64,
    sent_at: u64,
    rtts: Vec<u64>,
    resolver: Option<Box<Resolver>>,
    sleeping: bool,
    last: Option<Step>,
}

impl Ping {
    /// From a spawn.
    pub fn new(spawn: &Spawn, family: Family) -> Ping {
        Ping {
            spawn: spawn.clone(),
            family,
            host: String::new(),
            ip: String::new(),
            count: None,
            wait_s: 10,
            seq: 0,
            received: 0,
            sent_at: 0,
            rtts: Vec::new(),
            resolver: None,
            sleeping: false,
            last: None,
        }
    }

    fn send(&mut self, os: &mut dyn Os) -> Step {
        self.sent_at = os.now_ms();
        self.sleeping = false;
        Step::Net(NetCall::Udp { dst: self.ip.clone(), port: 0, send: vec![0; 56], timeout_ms: self.wait_s * 1000 })
    }

    fn summary(&self, os: &mut dyn Os) -> Step {
        let sent = self.seq;
        let loss = if sent == 0 { 0 } else { (sent - self.received) * 100 / sent };
        let mut s = format!("\n--- {} ping statistics ---\n", self.host);
        match self.family {
            Family::Busybox => s.push_str(&format!("{sent} packets transmitted, {} packets received, {loss}% packet loss\n", self.received)),
            Family::Gnu => {
                s.push_str(&format!("{sent} packets transmitted, {} received, {loss}% packet loss, time {}ms\n", self.received, sent.saturating_sub(1) * 1000))
            }
        }
        if !self.rtts.is_empty() {
            let min = *self.rtts.iter().min().unwrap_or(&0) as f64 / 1000.0;
            let max = *self.rtts.iter().max().unwrap_or(&0) as f64 / 1000.0;
            let avg = self.rtts.iter().sum::<u64>() as f64 / self.rtts.len() as f64 / 1000.0;
            match self.family {
                Family::Busybox => s.push_str(&format!("round-trip min/avg/max = {min:.3}/{avg:.3}/{max:.3} ms\n")),
                Family::Gnu => s.push_str(&format!("rtt min/avg/max/mdev = {min:.3}/{avg:.3}/{max:.3}/0.000 ms\n")),
            }
        }
        let _ = os.write_stdout(s.as_bytes());
        Step::Exit(if self.received > 0 { 0 } else { 1 })
    }
}

impl Program for Ping {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        let step = match wake {
            Wake::Start => {
                let args = self.spawn.argv[1..].to_vec();
                let mut i = 0;
                while i < args.len() {
                    match args[i].as_str() {
                        "-c" => {
                            i += 1;
                            self.count = args.get(i).and_then(|v| v.parse().ok());
                        }
                        "-W" | "-w" => {
                            i += 1;
                            self.wait_s = args.get(i).and_then(|v| v.parse().ok()).unwrap_or(10).max(1);
                        }
                        "-q" | "-4" | "-n" => {}
                        "-i" | "-s" | "-t" | "-I" => i += 1,
                        a if a.starts_with("-c") => self.count = a[2..].parse().ok(),
                        a => self.host = a.to_string(),
                    }
                    i += 1;
                }
                if self.host.is_empty() {
                    let _ = os.write_stderr(b"ping: usage error: Destination address required\n");
                    return Step::Exit(if self.family == Family::Gnu { 2 } else { 1 });
                }
                let libc = libc_of(os.fs_ref());
                let mut r = Resolver::new(os.fs_ref(), &self.host, libc);
                let s = r.start();
                self.resolver = Some(Box::new(r));
                self.on_resolve(os, s)
            }
            Wake::Net(NetReply::Udp(r)) => {
                let rtt_us = (os.now_ms().saturating_sub(self.sent_at)) * 1000 + 40;
                let seq = self.seq;
                self.seq += 1;
                if r.is_ok() {
                    self.received += 1;
                    self.rtts.push(rtt_us);
                    let line = match self.family {
                        Family::Busybox => format!("64 bytes from {}: seq={seq} ttl=64 time={:.3} ms\n", self.ip, rtt_us as f64 / 1000.0),
                        Family::Gnu => format!("64 bytes from {}: icmp_seq={} ttl=64 time={:.3} ms\n", self.ip, seq + 1, rtt_us as f64 / 1000.0),
                    };
                    let _ = os.write_stdout(line.as_bytes());
                }
                if self.count.is_some_and(|c| self.seq >= c) {
                    return self.summary(os);
                }
                self.sleeping = true;
                let waited = os.now_ms().saturating_sub(self.sent_at);
                Step::Sleep(1000u64.saturating_sub(waited).max(1))
            }
            Wake::Net(reply) => match self.resolver.take() {
                Some(mut r) => {
                    let s = r.reply(&reply);
                    self.resolver = Some(r);
                    self.on_resolve(os, s)
                }
                None => Step::Exit(1),
            },
            Wake::Timer if self.sleeping => self.send(os),
            Wake::Signal(s) => {
                if s == crate::program::Signal::Int || default_signal_exit(os, s).is_some() {
                    if s == crate::program::Signal::Int {
                        return self.summary(os);
                    }
                    return Step::Exit(s.exit_code());
                }
                self.last.clone().unwrap_or(Step::Exit(1))
            }
            _ => self.last.clone().unwrap_or(Step::Exit(1)),
        };
        self.last = Some(step.clone());
        step
    }
}

impl Ping {
    fn on_resolve(&mut self, os: &mut dyn Os, s: ResolveStep) -> Step {
        match s {
            ResolveStep::Query(c) => Step::Net(c),
            ResolveStep::Done(Ok(r)) => {
                self.ip = r.addrs[0].clone();
                self.resolver = None;
                let head = match self.family {
                    Family::Busybox => format!("PING {} ({}): 56 data bytes\n", self.host, self.ip),
                    Family::Gnu => format!("PING {} ({}) 56(84) bytes of data.\n", self.host, self.ip),
                };
                let _ = os.write_stdout(head.as_bytes());
                self.send(os)
            }
            ResolveStep::Done(Err(_)) => {
                let msg = match self.family {
                    Family::Busybox => format!("ping: bad address '{}'\n", self.host),
                    Family::Gnu => format!("ping: {}: Name or service not known\n", self.host),
                };
                let _ = os.write_stderr(msg.as_bytes());
                Step::Exit(if self.family == Family::Gnu { 2 } else { 1 })
            }
        }
    }
}
