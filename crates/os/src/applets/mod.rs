//! busybox applets and GNU coreutils (plus the usual Debian tools), with their flag sets and
//! output formats. Most applets are synchronous: they run to completion in their first
//! `resume`. The blocking ones (sleep, timeout, tail -f, xargs, network clients) are state
//! machines of their own.

pub mod awk;
pub mod echo;
pub mod files;
pub mod hash;
pub mod misc;
pub mod printf;
pub mod sed;
pub mod stress;
pub mod test;
pub mod text;
pub mod wait;

use crate::fs::Errno;
use crate::program::{Os, Program, Spawn, Step, Wake};
use std::collections::BTreeMap;

/// Which implementation family an applet mirrors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// busybox 1.36.
    Busybox,
    /// GNU coreutils 9.x (and the Debian tools: grep, sed, findutils, procps...).
    Gnu,
}

/// What a synchronous applet sees.
pub struct Ctx<'a> {
    /// Host services.
    pub os: &'a mut dyn Os,
    /// Arguments without argv[0].
    pub args: Vec<String>,
    /// The applet name (basename of argv[0]).
    pub name: String,
    /// Environment.
    pub env: &'a BTreeMap<String, String>,
    /// Working directory.
    pub cwd: &'a str,
    /// Standard input.
    pub stdin: &'a [u8],
    /// Implementation family.
    pub family: Family,
    /// A write failed (EPIPE): stop producing output.
    pub broken: bool,
    /// Bytes written to stdout so far (the applet's output costs CPU time: [`OUTPUT_BYTES_PER_CPU_MS`]).
    pub written: u64,
}

/// How much output a synchronous applet produces per millisecond of CPU (about 1 GB/s, what
/// `seq` and `yes` manage): an applet that writes more than this spends the time it takes
/// before it exits, so a loop of big writers cannot print without bound in an instant (the
/// shell fuzzer found `seq 2147483647` writing 76 MB in no time).
pub const OUTPUT_BYTES_PER_CPU_MS: u64 = 1 << 20;

impl Ctx<'_> {
    /// Writes to stdout; `false` once the reader is gone.
    pub fn out(&mut self, d: &[u8]) -> bool {
        if self.broken {
            return false;
        }
        if self.os.write_stdout(d).is_err() {
            self.broken = true;
            return false;
        }
        self.written += d.len() as u64;
        true
    }

    /// Writes a string to stdout.
    pub fn outs(&mut self, s: &str) -> bool {
        self.out(s.as_bytes())
    }

    /// `name: msg` on stderr.
    pub fn err(&mut self, msg: &str) {
        let line = format!("{}: {msg}\n", self.name);
        let _ = self.os.write_stderr(line.as_bytes());
    }

    /// Raw stderr.
    pub fn err_raw(&mut self, msg: &str) {
        let _ = self.os.write_stderr(msg.as_bytes());
    }

    /// GNU family.
    pub fn gnu(&self) -> bool {
        self.family == Family::Gnu
    }

    /// Absolute path of an operand.
    pub fn path(&self, p: &str) -> String {
        crate::fs::join(self.cwd, p)
    }

    /// Reads an operand (`-` = stdin).
    pub fn read(&mut self, p: &str) -> Result<Vec<u8>, Errno> {
        if p == "-" {
            return Ok(self.stdin.to_vec());
        }
        let full = self.path(p);
        crate::sys::read_file(self.os, &full)
    }

    /// The "can't open" error in the family's words (`cat: can't open 'x': ...` /
    /// `cat: x: ...`).
    pub fn open_err(&mut self, p: &str, e: Errno) {
        if self.gnu() {
            self.err(&format!("{p}: {}", e.strerror()));
        } else {
            self.err(&format!("can't open '{p}': {}", e.strerror()));
        }
    }

    /// Reads every operand (or stdin when there are none), reporting failures; returns the
    /// concatenated data and whether all reads succeeded.
    pub fn read_inputs(&mut self, files: &[String]) -> (Vec<u8>, bool) {
        if files.is_empty() {
            return (self.stdin.to_vec(), true);
        }
        let mut all = Vec::new();
        let mut ok = true;
        for f in files {
            match self.read(f) {
                Ok(d) => all.extend(d),
                Err(e) => {
                    self.open_err(f, e);
                    ok = false;
                }
            }
        }
        (all, ok)
    }

    /// Environment variable.
    pub fn env(&self, k: &str) -> Option<&str> {
        self.env.get(k).map(String::as_str)
    }

    /// The standard "invalid option" complaint and exit code.
    pub fn bad_option(&mut self, opt: &str) -> i32 {
        if self.gnu() {
            let o = opt.trim_start_matches('-');
            if opt.starts_with("--") {
                self.err(&format!("unrecognized option '{opt}'"));
            } else {
                self.err(&format!("invalid option -- '{}'", o.chars().next().unwrap_or('?')));
            }
            let n = self.name.clone();
            self.err_raw(&format!("Try '{n} --help' for more information.\n"));
            if self.name == "ls" {
                2
            } else {
                1
            }
        } else {
            let o = opt.trim_start_matches('-');
            self.err(&format!("unrecognized option: {}", o.chars().next().unwrap_or('?')));
            1
        }
    }
}

/// A synchronous applet's entry point.
pub type AppletFn = fn(&mut Ctx) -> i32;

/// A synchronous applet as a [`Program`].
#[derive(Clone, Debug)]
pub struct SyncApplet {
    spawn: Spawn,
    name: String,
    family: Family,
    f: AppletFn,
    /// Ran, and spends the CPU time of its output before exiting with this code.
    exiting: Option<i32>,
}

impl SyncApplet {
    /// Wraps an applet function.
    pub fn new(spawn: Spawn, name: &str, family: Family, f: AppletFn) -> SyncApplet {
        SyncApplet { spawn, name: name.to_string(), family, f, exiting: None }
    }
}

impl Program for SyncApplet {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if let Wake::Signal(s) = wake {
            return Step::Exit(s.exit_code());
        }
        if let Some(code) = self.exiting {
            return Step::Exit(code);
        }
        let mut ctx = Ctx {
            os,
            args: self.spawn.argv.iter().skip(1).cloned().collect(),
            name: self.name.clone(),
            env: &self.spawn.env,
            cwd: &self.spawn.cwd,
            stdin: &self.spawn.stdin,
            family: self.family,
            broken: false,
            written: 0,
        };
        let code = (self.f)(&mut ctx);
        let cpu_ms = ctx.written / OUTPUT_BYTES_PER_CPU_MS;
        if cpu_ms > 0 {
            self.exiting = Some(code);
            return Step::Compute { cpu_ms, threads: 1 };
        }
        Step::Exit(code)
    }

    fn memory_bytes(&self) -> u64 {
        600_000 + self.spawn.stdin.len() as u64
    }
}

/// Splits arguments into flag characters and operands (`-abc` → a,b,c; `--` ends flags).
/// Flags that take a value (listed in `with_value`) consume the rest of the argument or the
/// next one. Returns (flags with values, operands) or the bad option.
pub fn getopt(args: &[String], flags: &str, with_value: &str) -> Result<(Vec<(char, String)>, Vec<String>), String> {
    let mut opts = Vec::new();
    let mut rest = Vec::new();
    let mut i = 0;
    let mut done = false;
    while i < args.len() {
        let a = &args[i];
        if done || !a.starts_with('-') || a == "-" {
            rest.push(a.clone());
            i += 1;
            continue;
        }
        if a == "--" {
            done = true;
            i += 1;
            continue;
        }
        if a.starts_with("--") {
            rest.push(a.clone());
            i += 1;
            continue;
        }
        let chars: Vec<char> = a[1..].chars().collect();
        let mut k = 0;
        while k < chars.len() {
            let c = chars[k];
            if with_value.contains(c) {
                let v: String = if k + 1 < chars.len() {
                    chars[k + 1..].iter().collect()
                } else {
                    i += 1;
                    match args.get(i) {
                        Some(v) => v.clone(),
                        None => return Err(format!("-{c}")),
                    }
                };
                opts.push((c, v));
                break;
            }
            if flags.contains(c) || c.is_ascii_digit() && flags.contains('#') {
                opts.push((c, String::new()));
            } else {
                return Err(format!("-{c}"));
            }
            k += 1;
        }
        i += 1;
    }
    Ok((opts, rest))
}

/// Looks up a synchronous applet.
pub fn sync_applet(name: &str) -> Option<AppletFn> {
    Some(match name {
        "true" => |_| 0,
        "false" => |_| 1,
        "echo" => misc::echo,
        "printf" => misc::printf,
        "test" | "[" | "[[" => misc::test,
        "cat" => files::cat,
        "ls" => files::ls,
        "mkdir" => files::mkdir,
        "rmdir" => files::rmdir,
        "touch" => files::touch,
        "rm" => files::rm,
        "cp" => files::cp,
        "mv" => files::mv,
        "ln" => files::ln,
        "chmod" => files::chmod,
        "chown" | "chgrp" => files::chown,
        "stat" => files::stat,
        "du" => files::du,
        "df" => files::df,
        "mount" => files::mount,
        "find" => files::find,
        "readlink" => files::readlink,
        "realpath" => files::realpath,
        "basename" => files::basename,
        "dirname" => files::dirname,
        "tee" => files::tee,
        "dd" => files::dd,
        "head" => text::head,
        "tail" => text::tail,
        "wc" => text::wc,
        "grep" | "egrep" | "fgrep" => text::grep,
        "sed" => sed::sed,
        "awk" | "gawk" | "mawk" => awk::awk,
        "cut" => text::cut,
        "tr" => text::tr,
        "sort" => text::sort,
        "uniq" => text::uniq,
        "rev" => text::rev,
        "seq" => text::seq,
        "expr" => text::expr,
        "base64" => text::base64,
        "md5sum" => text::md5sum,
        "sha256sum" => text::sha256sum,
        "yes" => text::yes,
        "nl" => text::nl,
        "tac" => text::tac,
        "paste" => text::paste,
        "fold" => text::fold,
        "od" => text::od,
        "date" => misc::date,
        "hostname" => misc::hostname,
        "ip" => misc::ip,
        "env" | "printenv" => misc::env,
        "id" => misc::id,
        "whoami" => misc::whoami,
        "uname" => misc::uname,
        "ps" => misc::ps,
        "kill" => misc::kill,
        "killall" => misc::killall,
        "pidof" => misc::pidof,
        "nproc" => misc::nproc,
        "free" => misc::free,
        "uptime" => misc::uptime,
        "which" => misc::which,
        "pwd" => misc::pwd,
        "sync" => |_| 0,
        "clear" => |c| {
            c.outs("\x1b[H\x1b[J");
            0
        },
        "arch" => |c| {
            let m = c.os.uname().machine;
            c.outs(&format!("{m}\n"));
            0
        },
        "logger" => |_| 0,
        _ => return None,
    })
}
