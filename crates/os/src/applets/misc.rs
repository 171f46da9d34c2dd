//! System applets: echo, printf, test, date, hostname, env/printenv, id, whoami, uname, ps,
//! kill, killall, pidof, nproc, free, uptime, which, pwd.

use super::{getopt, Ctx};
use crate::program::Signal;

pub(crate) fn echo(c: &mut Ctx) -> i32 {
    let out = super::echo::render(super::echo::Style::Gnu, &c.args);
    if c.out(&out) {
        0
    } else {
        1
    }
}

pub(crate) fn printf(c: &mut Ctx) -> i32 {
    let Some(fmt) = c.args.first().cloned() else {
        if c.gnu() {
            c.err("missing operand");
            c.err_raw("Try 'printf --help' for more information.\n");
        } else {
            c.err_raw("Usage: printf FORMAT [ARG]...\n");
        }
        return 1;
    };
    let (out, bad, code) = super::printf::format(&fmt, &c.args[1..]);
    c.out(&out);
    for b in bad {
        if c.gnu() {
            c.err(&format!("'{b}': expected a numeric value"));
        } else {
            c.err(&format!("invalid number '{b}'"));
        }
    }
    code
}

pub(crate) fn test(c: &mut Ctx) -> i32 {
    let mut args = c.args.clone();
    if c.name == "[" || c.name == "[[" {
        let close = if c.name == "[" { "]" } else { "]]" };
        if args.last().map(String::as_str) != Some(close) {
            if c.gnu() {
                c.err(&format!("missing '{close}'"));
            } else {
                c.err(&format!("missing {close}"));
            }
            return 2;
        }
        args.pop();
    }
    let cwd = c.cwd.to_string();
    match super::test::eval(&args, c.os, &cwd) {
        Ok(b) => (!b) as i32,
        Err(e) => {
            let style = if c.gnu() { super::test::ErrStyle::Gnu } else { super::test::ErrStyle::Busybox };
            c.err(&e.message(style));
            2
        }
    }
}

pub(crate) fn date(c: &mut Ctx) -> i32 {
    let mut fmt: Option<String> = None;
    let mut when: Option<i64> = None;
    let now_ms = c.os.unix_time_ms();
    let now = (now_ms / 1000) as i64;
    let nanos = ((now_ms % 1000) * 1_000_000) as u32;
    let args = c.args.clone();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if let Some(f) = a.strip_prefix('+') {
            fmt = Some(f.to_string());
        } else if a == "-u" || a == "--utc" || a == "--universal" {
        } else if a == "-R" || a == "--rfc-2822" || a == "--rfc-email" {
            fmt = Some("%a, %d %b %Y %H:%M:%S +0000".into());
        } else if let Some(spec) = a.strip_prefix("-I").or_else(|| a.strip_prefix("--iso-8601").map(|s| s.trim_start_matches('='))) {
            fmt = Some(
                match spec {
                    "" | "date" => "%Y-%m-%d",
                    "hours" => "%Y-%m-%dT%H+00:00",
                    "minutes" => "%Y-%m-%dT%H:%M+00:00",
                    "seconds" => "%Y-%m-%dT%H:%M:%S+00:00",
                    "ns" => "%Y-%m-%dT%H:%M:%S,%N+00:00",
                    _ => {
                        c.err(&format!("invalid argument '{spec}' for '--iso-8601'"));
                        return 1;
                    }
                }
                .into(),
            );
        } else if a == "-d" || a == "--date" {
            i += 1;
            let Some(d) = args.get(i) else {
                c.err("option requires an argument -- 'd'");
                return 1;
            };
            match crate::time::parse_date(d, now) {
                Some(t) => when = Some(t),
                None => {
                    if c.gnu() {
                        c.err(&format!("invalid date '{d}'"));
                    } else {
                        c.err(&format!("invalid date '{d}'"));
                    }
                    return 1;
                }
            }
        } else if let Some(d) = a.strip_prefix("--date=") {
            when = crate::time::parse_date(d, now);
        } else if a.starts_with('-') {
            return c.bad_option(a);
        } else {
            // Setting the date is not permitted in a container.
            c.err("cannot set date: Operation not permitted");
            return 1;
        }
        i += 1;
    }
    let t = when.unwrap_or(now);
    let f = fmt.unwrap_or_else(|| "%a %b %e %H:%M:%S %Z %Y".into());
    c.outs(&format!("{}\n", crate::time::strftime(&f, t, if when.is_some() { 0 } else { nanos })));
    0
}

pub(crate) fn hostname(c: &mut Ctx) -> i32 {
    let h = c.os.hostname();
    match c.args.first().map(String::as_str) {
        None | Some("-s") | Some("--short") => {
            let s = if c.args.is_empty() { h } else { h.split('.').next().unwrap_or("").to_string() };
            c.outs(&format!("{s}\n"));
            0
        }
        Some("-f") | Some("--fqdn") | Some("--long") => {
            c.outs(&format!("{h}\n"));
            0
        }
        Some("-i") | Some("--ip-address") | Some("-I") | Some("--all-ip-addresses") => {
            let hosts = c.os.fs_ref().read("/etc/hosts").unwrap_or_default();
            let text = String::from_utf8_lossy(&hosts);
            let ip = text
                .lines()
                .find(|l| l.split_whitespace().skip(1).any(|n| n == h))
                .and_then(|l| l.split_whitespace().next())
                .unwrap_or("127.0.0.1")
                .to_string();
            c.outs(&format!("{ip}{}\n", if c.args[0].contains('I') || c.args[0] == "--all-ip-addresses" { " " } else { "" }));
            0
        }
        Some(_) => {
            c.err("you must be root to change the host name");
            1
        }
    }
}

pub(crate) fn env(c: &mut Ctx) -> i32 {
    if c.name == "printenv" {
        let names: Vec<String> = c.args.iter().filter(|a| !a.starts_with('-')).cloned().collect();
        if names.is_empty() {
            let mut out = String::new();
            for (k, v) in c.env.iter() {
                out.push_str(&format!("{k}={v}\n"));
            }
            c.outs(&out);
            return 0;
        }
        let mut st = 0;
        let mut out = String::new();
        for n in names {
            match c.env.get(&n) {
                Some(v) => {
                    out.push_str(v);
                    out.push('\n');
                }
                None => st = 1,
            }
        }
        c.outs(&out);
        return st;
    }
    // `env` without a command (the registry runs `env ... cmd` directly).
    let mut vars = if c.args.iter().any(|a| a == "-i" || a == "-") { std::collections::BTreeMap::new() } else { c.env.clone() };
    let mut null = false;
    for a in c.args.clone() {
        if a == "-0" {
            null = true;
        } else if let Some(n) = a.strip_prefix("-u") {
            vars.remove(n);
        } else if let Some((k, v)) = a.split_once('=') {
            vars.insert(k.into(), v.into());
        }
    }
    let mut out = String::new();
    for (k, v) in vars {
        out.push_str(&format!("{k}={v}{}", if null { '\0' } else { '\n' }));
    }
    c.outs(&out);
    0
}

pub(crate) fn id(c: &mut Ctx) -> i32 {
    let cr = c.os.creds();
    let (opts, _) = match getopt(&c.args, "ugGnr", "") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let has = |ch: char| opts.iter().any(|(o, _)| *o == ch);
    let uname = super::files::user_name(c, cr.uid);
    let gname = super::files::group_name(c, cr.gid);
    if has('u') {
        let s = if has('n') { uname } else { cr.uid.to_string() };
        c.outs(&format!("{s}\n"));
        return 0;
    }
    if has('g') {
        let s = if has('n') { gname } else { cr.gid.to_string() };
        c.outs(&format!("{s}\n"));
        return 0;
    }
    if has('G') {
        let gs: Vec<String> = cr.groups.iter().map(|g| if has('n') { super::files::group_name(c, *g) } else { g.to_string() }).collect();
        c.outs(&format!("{}\n", gs.join(" ")));
        return 0;
    }
    let fmt_id = |id: u32, name: &str| if name == id.to_string() { id.to_string() } else { format!("{id}({name})") };
    let mut s = format!("uid={} gid={}", fmt_id(cr.uid, &uname), fmt_id(cr.gid, &gname));
    let groups: Vec<String> = cr.groups.clone().iter().map(|g| fmt_id(*g, &super::files::group_name(c, *g))).collect();
    if c.gnu() || cr.groups.iter().any(|g| *g != cr.gid) {
        s.push_str(&format!(" groups={}", groups.join(",")));
    }
    c.outs(&format!("{s}\n"));
    0
}

pub(crate) fn whoami(c: &mut Ctx) -> i32 {
    let uid = c.os.creds().uid;
    let n = super::files::user_name(c, uid);
    if n == uid.to_string() {
        c.err(&format!("cannot find name for user ID {uid}"));
        return 1;
    }
    c.outs(&format!("{n}\n"));
    0
}

pub(crate) fn uname(c: &mut Ctx) -> i32 {
    let u = c.os.uname();
    let host = c.os.hostname();
    let (opts, _) = match getopt(&c.args, "asnrvmpio", "") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let has = |ch: char| opts.iter().any(|(o, _)| *o == ch);
    let all = has('a');
    let mut parts = Vec::new();
    if has('s') || opts.is_empty() || all {
        parts.push(u.sysname.clone());
    }
    if has('n') || all {
        parts.push(host);
    }
    if has('r') || all {
        parts.push(u.release.clone());
    }
    if has('v') || all {
        parts.push(u.version.clone());
    }
    if has('m') || all {
        parts.push(u.machine.clone());
    }
    if has('p') && !all {
        parts.push(if c.gnu() { "unknown".into() } else { u.machine.clone() });
    }
    if has('i') && !all {
        parts.push(if c.gnu() { "unknown".into() } else { u.machine.clone() });
    }
    if has('o') || all {
        parts.push("GNU/Linux".into());
    }
    c.outs(&format!("{}\n", parts.join(" ")));
    0
}

fn cpu_time(ms: u64) -> String {
    let s = ms / 1000;
    format!("{}:{:02}", s / 60, s % 60)
}

pub(crate) fn ps(c: &mut Ctx) -> i32 {
    struct Row {
        pid: u32,
        ppid: u32,
        user: String,
        cpu_ms: u64,
        cmdline: String,
        rss_bytes: u64,
        state: char,
    }
    // User names come from the viewer's /etc/passwd (a uid it does not know prints as a number).
    let procs: Vec<Row> =
        c.os.processes()
            .into_iter()
            .map(|p| Row {
                pid: p.pid,
                ppid: p.ppid,
                user: super::files::user_name(c, p.uid),
                cpu_ms: p.cpu_ms,
                cmdline: p.cmdline,
                rss_bytes: p.rss_bytes,
                state: p.state,
            })
            .collect();
    let mut out = String::new();
    if c.gnu() {
        let full = c.args.iter().any(|a| a == "-ef" || a == "-f" || a == "-eF");
        let aux = c.args.iter().any(|a| a == "aux" || a == "-aux" || a == "axu");
        if aux {
            out.push_str("USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n");
            for p in &procs {
                let t = cpu_time(p.cpu_ms);
                out.push_str(&format!(
                    "{:<8} {:>7}  0.0  0.0 {:>6} {:>5} ?        {:<4} 00:00 {:>6} {}\n",
                    p.user,
                    p.pid,
                    p.rss_bytes / 1024 + 1024,
                    p.rss_bytes / 1024,
                    p.state,
                    t,
                    p.cmdline
                ));
            }
        } else if full {
            out.push_str("UID          PID    PPID  C STIME TTY          TIME CMD\n");
            for p in &procs {
                let s = p.cpu_ms / 1000;
                out.push_str(&format!(
                    "{:<8} {:>7} {:>7}  0 00:00 ?        {:02}:{:02}:{:02} {}\n",
                    p.user,
                    p.pid,
                    p.ppid,
                    s / 3600,
                    s / 60 % 60,
                    s % 60,
                    p.cmdline
                ));
            }
        } else {
            out.push_str("    PID TTY          TIME CMD\n");
            for p in &procs {
                let s = p.cpu_ms / 1000;
                let comm = crate::fs::basename(p.cmdline.split(' ').next().unwrap_or(""));
                out.push_str(&format!("{:>7} ?        {:02}:{:02}:{:02} {}\n", p.pid, s / 3600, s / 60 % 60, s % 60, comm));
            }
        }
    } else {
        out.push_str("PID   USER     TIME  COMMAND\n");
        for p in &procs {
            out.push_str(&format!("{:>5} {:<8} {:>5} {}\n", p.pid, p.user, cpu_time(p.cpu_ms), p.cmdline));
        }
    }
    c.outs(&out);
    0
}

/// `kill -l [n]` output.
pub fn kill_list(arg: Option<&str>) -> String {
    const NAMES: [&str; 31] = [
        "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP",
        "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "POLL", "PWR", "SYS",
    ];
    match arg {
        Some(a) => {
            if let Ok(n) = a.parse::<usize>() {
                let n = if n > 128 { n - 128 } else { n };
                NAMES.get(n.wrapping_sub(1)).map(|s| format!("{s}\n")).unwrap_or_default()
            } else {
                let up = a.to_ascii_uppercase();
                let name = up.strip_prefix("SIG").unwrap_or(&up);
                NAMES.iter().position(|s| *s == name).map(|i| format!("{}\n", i + 1)).unwrap_or_default()
            }
        }
        None => NAMES.iter().enumerate().map(|(i, s)| format!("{:>2}) {s}\n", i + 1)).collect(),
    }
}

fn parse_sig(s: &str) -> Result<Option<Signal>, ()> {
    if s == "0" {
        return Ok(None);
    }
    Signal::parse(s).map(Some).ok_or(())
}

pub(crate) fn kill(c: &mut Ctx) -> i32 {
    let args = c.args.clone();
    if args.first().map(String::as_str) == Some("-l") || args.first().map(String::as_str) == Some("-L") {
        let t = kill_list(args.get(1).map(String::as_str));
        c.outs(&t);
        return 0;
    }
    let mut sig = Some(Signal::Term);
    let mut i = 0;
    if let Some(a) = args.first() {
        if a == "-s" || a == "-n" {
            match args.get(1).map(|s| parse_sig(s)) {
                Some(Ok(s)) => sig = s,
                _ => {
                    c.err(&format!("bad signal name '{}'", args.get(1).cloned().unwrap_or_default()));
                    return 1;
                }
            }
            i = 2;
        } else if let Some(s) = a.strip_prefix('-') {
            if !s.is_empty() && !s.starts_with('-') {
                match parse_sig(s) {
                    Ok(s) => sig = s,
                    Err(()) => {
                        c.err(&format!("bad signal name '{s}'"));
                        return 1;
                    }
                }
                i = 1;
            }
        }
    }
    let pids = &args[i..];
    if pids.is_empty() {
        c.err_raw("Usage: kill [-l] [-SIG] PID...\n");
        return 1;
    }
    let mut st = 0;
    for p in pids {
        match p.parse::<u32>() {
            Ok(pid) => {
                if let Err(e) = c.os.kill(pid, sig) {
                    if c.gnu() {
                        c.err(&format!("({pid}): {}", e.strerror()));
                    } else {
                        c.err(&format!("can't kill pid {pid}: {}", e.strerror()));
                    }
                    st = 1;
                }
            }
            Err(_) => {
                c.err(&format!("invalid number '{p}'"));
                st = 1;
            }
        }
    }
    st
}

fn matching_pids(c: &mut Ctx, name: &str) -> Vec<u32> {
    let me = c.os.pid();
    c.os.processes()
        .iter()
        .filter(|p| {
            let argv0 = p.cmdline.split(' ').next().unwrap_or("");
            p.pid != me && (crate::fs::basename(argv0) == name || argv0 == name)
        })
        .map(|p| p.pid)
        .collect()
}

pub(crate) fn killall(c: &mut Ctx) -> i32 {
    let mut sig = Some(Signal::Term);
    let mut names = Vec::new();
    let mut quiet = false;
    for a in c.args.clone() {
        if a == "-q" {
            quiet = true;
        } else if let Some(s) = a.strip_prefix('-') {
            match parse_sig(s) {
                Ok(s) => sig = s,
                Err(()) => {
                    c.err(&format!("bad signal name '{s}'"));
                    return 1;
                }
            }
        } else {
            names.push(a);
        }
    }
    let mut st = 0;
    for n in names {
        let pids = matching_pids(c, &n);
        if pids.is_empty() {
            if !quiet {
                if c.gnu() {
                    c.err_raw(&format!("{n}: no process found\n"));
                } else {
                    c.err(&format!("{n}: no process killed"));
                }
            }
            st = 1;
            continue;
        }
        for p in pids {
            let _ = c.os.kill(p, sig);
        }
    }
    st
}

pub(crate) fn pidof(c: &mut Ctx) -> i32 {
    let mut all = Vec::new();
    for n in c.args.clone().iter().filter(|a| !a.starts_with('-')) {
        let mut p = matching_pids(c, n);
        p.reverse();
        all.extend(p);
    }
    if all.is_empty() {
        return 1;
    }
    let s: Vec<String> = all.iter().map(u32::to_string).collect();
    c.outs(&format!("{}\n", s.join(" ")));
    0
}

pub(crate) fn nproc(c: &mut Ctx) -> i32 {
    let n = c.os.cpu_count();
    c.outs(&format!("{n}\n"));
    0
}

pub(crate) fn free(c: &mut Ctx) -> i32 {
    let m = c.os.mem_info();
    let (opts, _) = match getopt(&c.args, "bkmghtlw", "") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let div = match opts.iter().map(|(o, _)| *o).next_back() {
        Some('b') => 1,
        Some('m') => 1 << 20,
        Some('g') => 1 << 30,
        _ => 1024,
    };
    let human_ = opts.iter().any(|(o, _)| *o == 'h');
    let used = m.total - m.free;
    let f = |v: u64| if human_ { super::files::human(v).replace('K', "Ki").replace('M', "Mi").replace('G', "Gi") } else { (v / div).to_string() };
    let out = if c.gnu() {
        format!(
            "               total        used        free      shared  buff/cache   available\nMem:     {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}\nSwap:    {:>11} {:>11} {:>11}\n",
            f(m.total),
            f(used),
            f(m.free),
            f(0),
            f(0),
            f(m.available),
            f(0),
            f(0),
            f(0)
        )
    } else {
        format!(
            "              total        used        free      shared  buff/cache   available\nMem:    {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}\nSwap:   {:>11} {:>11} {:>11}\n",
            f(m.total),
            f(used),
            f(m.free),
            f(0),
            f(0),
            f(m.available),
            f(0),
            f(0),
            f(0)
        )
    };
    c.outs(&out);
    0
}

pub(crate) fn uptime(c: &mut Ctx) -> i32 {
    let now = c.os.unix_time() as i64;
    let up = c.os.uptime_ms() / 1000;
    let clock = crate::time::strftime("%H:%M:%S", now, 0);
    let mins = up / 60;
    let upstr = if mins < 60 { format!("{mins} min") } else { format!("{}:{:02}", mins / 60, mins % 60) };
    c.outs(&format!(" {clock} up {upstr},  0 users,  load average: 0.00, 0.00, 0.00\n"));
    0
}

pub(crate) fn which(c: &mut Ctx) -> i32 {
    let path = c.env("PATH").unwrap_or(crate::registry::DEFAULT_PATH).to_string();
    let all = c.args.iter().any(|a| a == "-a");
    let mut st = 0;
    for n in c.args.clone().iter().filter(|a| !a.starts_with('-')) {
        let mut found = false;
        let cands: Vec<String> = if n.contains('/') { vec![c.path(n)] } else { path.split(':').map(|d| crate::fs::join(d, n)).collect() };
        for p in cands {
            if c.os.fs_ref().stat(&p).is_ok_and(|m| m.is_file() && m.mode & 0o111 != 0) {
                c.outs(&format!("{}\n", if n.contains('/') { n.clone() } else { p }));
                found = true;
                if !all {
                    break;
                }
            }
        }
        if !found {
            st = 1;
        }
    }
    st
}

pub(crate) fn pwd(c: &mut Ctx) -> i32 {
    let cwd = c.cwd.to_string();
    c.outs(&format!("{cwd}\n"));
    0
}

/// busybox `ip [-4|-6] addr|link [show [dev] IFACE]` (networking/libiproute/ipaddress.c's
/// print_linkinfo and print_addrinfo): the namespace's interfaces from [`crate::program::Os::interfaces`].
pub(crate) fn ip(c: &mut Ctx) -> i32 {
    let mut family = None;
    let mut words = Vec::new();
    for a in c.args.clone() {
        match a.as_str() {
            "-4" => family = Some(4),
            "-6" => family = Some(6),
            "-0" => family = Some(0),
            _ => words.push(a),
        }
    }
    let object = words.first().cloned().unwrap_or_default();
    let addresses = matches!(object.as_str(), "a" | "ad" | "add" | "addr" | "addre" | "addres" | "address");
    let links = matches!(object.as_str(), "l" | "li" | "lin" | "link");
    if !addresses && !links {
        c.err_raw("kubesim: this ip models `ip addr` and `ip link` only\n");
        return 1;
    }
    let mut rest: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    if rest.first().is_some_and(|w| matches!(*w, "s" | "sh" | "sho" | "show" | "list" | "lst")) {
        rest.remove(0);
    }
    if rest.first() == Some(&"dev") {
        rest.remove(0);
    }
    let only = rest.first().map(|s| s.to_string());
    let interfaces = c.os.interfaces();
    if let Some(name) = &only {
        if !interfaces.iter().any(|i| &i.name == name) {
            c.err_raw(&format!("ip: can't find device '{name}'\n"));
            return 1;
        }
    }
    let mut out = String::new();
    for i in interfaces.iter().filter(|i| only.as_ref().is_none_or(|n| &i.name == n)) {
        let name = match i.peer {
            Some(peer) => format!("{}@if{peer}", i.name),
            None => i.name.clone(),
        };
        out.push_str(&format!("{}: {name}: <{}> mtu {} qdisc noqueue \n", i.index, i.flags, i.mtu));
        if family.is_none() || family == Some(0) || links {
            out.push_str(&format!("    link/{} {} brd {}\n", i.link_type, i.mac, i.brd));
        }
        if links {
            continue;
        }
        if let Some((ip, prefix, brd)) = i.inet.as_ref().filter(|_| family.is_none() || family == Some(4)) {
            let brd = brd.as_ref().map(|b| format!("brd {b} ")).unwrap_or_default();
            out.push_str(&format!("    inet {ip}/{prefix} {brd}scope {} {}\n       valid_lft forever preferred_lft forever\n", i.scope, i.name));
        }
        if let Some((ip, prefix)) = i.inet6.as_ref().filter(|_| family.is_none() || family == Some(6)) {
            let scope = if ip.starts_with("fe80:") { "link" } else { "host" };
            out.push_str(&format!("    inet6 {ip}/{prefix} scope {scope} \n       valid_lft forever preferred_lft forever\n"));
        }
    }
    c.out(out.as_bytes());
    0
}
