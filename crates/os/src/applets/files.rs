//! File applets: cat, ls, mkdir, rmdir, touch, rm, cp, mv, ln, chmod, chown, stat, du, df,
//! find, readlink, realpath, basename, dirname, tee, dd.

use super::{getopt, Ctx};
use crate::fs::{self, DirEntry, Errno, FileType, Metadata, WriteMode};

/// `name` for a uid from /etc/passwd (or the number).
pub fn user_name(c: &mut Ctx, uid: u32) -> String {
    id_name(c, "/etc/passwd", uid)
}

/// `name` for a gid from /etc/group (or the number).
pub fn group_name(c: &mut Ctx, gid: u32) -> String {
    id_name(c, "/etc/group", gid)
}

fn id_name(c: &mut Ctx, file: &str, id: u32) -> String {
    if let Ok(d) = c.os.fs_ref().read(file) {
        for l in String::from_utf8_lossy(&d).lines() {
            let f: Vec<&str> = l.split(':').collect();
            if f.len() >= 3 && f[2].parse::<u32>().ok() == Some(id) {
                return f[0].to_string();
            }
        }
    }
    id.to_string()
}

/// Id for a user/group name (or a number).
pub fn name_id(c: &mut Ctx, file: &str, name: &str) -> Option<u32> {
    if let Ok(n) = name.parse() {
        return Some(n);
    }
    let d = c.os.fs_ref().read(file).ok()?;
    String::from_utf8_lossy(&d).lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() >= 3 && f[0] == name).then(|| f[2].parse().ok()).flatten()
    })
}

pub(crate) fn cat(c: &mut Ctx) -> i32 {
    let (opts, files) = match getopt(&c.args, "nubevAsET", "") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let number = opts.iter().any(|(o, _)| *o == 'n');
    let files = if files.is_empty() { vec!["-".to_string()] } else { files };
    let mut status = 0;
    let mut line_no = 1;
    for f in &files {
        match c.read(f) {
            Ok(d) => {
                if number {
                    let mut out = Vec::new();
                    for l in d.split_inclusive(|&b| b == b'\n') {
                        out.extend(format!("{line_no:>6}\t").bytes());
                        out.extend_from_slice(l);
                        line_no += 1;
                    }
                    if !c.out(&out) {
                        return 1;
                    }
                } else if !c.out(&d) {
                    return 1;
                }
            }
            Err(e) => {
                c.open_err(f, e);
                status = 1;
            }
        }
    }
    status
}

/// Human-readable size like `ls -h` / `du -h` (GNU rounding: up, one decimal below 10).
pub fn human(n: u64) -> String {
    if n < 1024 {
        return n.to_string();
    }
    let units = ["K", "M", "G", "T", "P"];
    let mut v = n as f64;
    let mut u = 0;
    v /= 1024.0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if v < 10.0 {
        let r = (v * 10.0).ceil() / 10.0;
        if r >= 10.0 {
            format!("{}{}", r.ceil() as u64, units[u])
        } else {
            format!("{r:.1}{}", units[u])
        }
    } else {
        format!("{}{}", v.ceil() as u64, units[u])
    }
}

/// busybox `make_human_readable_str`: one decimal, rounded half up (`3.8K`).
pub fn bb_human_size(n: u64) -> String {
    if n == 0 {
        return "0".into();
    }
    if n < 1024 {
        return n.to_string();
    }
    let units = ['K', 'M', 'G', 'T', 'P', 'E'];
    let mut val = n;
    let mut frac = 0;
    let mut u = 0;
    let mut first = true;
    while val >= 1024 && u < units.len() {
        if !first {
            u += 1;
        }
        first = false;
        frac = ((val % 1024) * 10 + 512) / 1024;
        val /= 1024;
    }
    if frac >= 10 {
        val += 1;
        frac = 0;
    }
    format!("{val}.{frac}{}", units[u.min(units.len() - 1)])
}

/// 1K blocks a file occupies (4 KiB allocation units).
pub fn blocks_1k(m: &Metadata) -> u64 {
    match m.ftype {
        FileType::File => m.size.div_ceil(4096) * 4,
        FileType::Dir => 4,
        _ => 0,
    }
}

fn time_col(c: &Ctx, mtime_ms: u64, gnu: bool) -> String {
    let now = c.os.unix_time() as i64;
    let t = (mtime_ms / 1000) as i64;
    let age = now - t;
    let recent = if gnu { age < 31_556_952 / 2 && age >= 0 } else { age < 3600 * 24 * 365 / 2 && age > -15 * 60 };
    if recent {
        crate::time::strftime("%b %e %H:%M", t, 0)
    } else {
        crate::time::strftime("%b %e  %Y", t, 0)
    }
}

struct LsOpts {
    long: bool,
    all: bool,
    almost: bool,
    recursive: bool,
    human: bool,
    dir_itself: bool,
    classify: bool,
    slash: bool,
    numeric: bool,
    sort_time: bool,
    sort_size: bool,
    reverse: bool,
    inode: bool,
    unsorted: bool,
}

pub(crate) fn ls(c: &mut Ctx) -> i32 {
    let (opts, operands) = match getopt(&c.args, "lRaAhd1tSrFpnciogLHCxsUfe", "") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let has = |ch: char| opts.iter().any(|(o, _)| *o == ch);
    let o = LsOpts {
        long: has('l') || has('n') || has('o') || has('g'),
        all: has('a') || has('f'),
        almost: has('A'),
        recursive: has('R'),
        human: has('h'),
        dir_itself: has('d'),
        classify: has('F'),
        slash: has('p'),
        numeric: has('n'),
        sort_time: has('t'),
        sort_size: has('S'),
        reverse: has('r'),
        inode: has('i'),
        unsorted: has('U') || has('f'),
    };
    let operands = if operands.is_empty() { vec![".".to_string()] } else { operands };
    let gnu = c.gnu();
    let mut status = 0;
    let mut files: Vec<(String, Metadata, String)> = Vec::new();
    let mut dirs: Vec<String> = Vec::new();
    for op in &operands {
        let p = c.path(op);
        match c.os.fs_ref().lstat(&p) {
            Ok(m) => {
                let target_dir = m.is_dir() || (m.is_symlink() && !o.long && c.os.fs_ref().stat(&p).is_ok_and(|t| t.is_dir()));
                if target_dir && !o.dir_itself {
                    dirs.push(op.clone());
                } else {
                    files.push((op.clone(), m, p));
                }
            }
            Err(e) => {
                if gnu {
                    c.err(&format!("cannot access '{op}': {}", e.strerror()));
                    status = 2;
                } else {
                    c.err(&format!("{op}: {}", e.strerror()));
                    status = 1;
                }
            }
        }
    }
    let multi = operands.len() > 1 || o.recursive;
    let mut first_block = true;
    if !files.is_empty() {
        sort_entries(&mut files, &o);
        let lines = ls_render(c, &files, &o, gnu);
        c.outs(&lines);
        first_block = false;
    }
    dirs.sort();
    let mut queue: std::collections::VecDeque<String> = dirs.into();
    let mut count = 0;
    while let Some(d) = queue.pop_front() {
        count += 1;
        if count > 10_000 {
            break;
        }
        let p = c.path(&d);
        let entries = match c.os.fs_ref().read_dir(&p) {
            Ok(e) => e,
            Err(e) => {
                if gnu {
                    c.err(&format!("cannot open directory '{d}': {}", e.strerror()));
                    status = 2;
                } else {
                    c.err(&format!("{d}: {}", e.strerror()));
                    status = 1;
                }
                continue;
            }
        };
        if !first_block {
            c.outs("\n");
        }
        first_block = false;
        if multi {
            c.outs(&format!("{d}:\n"));
        }
        let mut list: Vec<(String, Metadata, String)> = Vec::new();
        if o.all {
            if let Ok(m) = c.os.fs_ref().stat(&p) {
                list.push((".".into(), m, p.clone()));
            }
            let parent = fs::normalize(&fs::join(&p, ".."));
            if let Ok(m) = c.os.fs_ref().stat(&parent) {
                list.push(("..".into(), m, parent));
            }
        }
        for DirEntry { name, meta } in entries {
            if name.starts_with('.') && !o.all && !o.almost {
                continue;
            }
            let full = fs::join(&p, &name);
            list.push((name, meta, full));
        }
        sort_entries(&mut list, &o);
        if o.long {
            let total: u64 = list.iter().map(|(_, m, _)| blocks_1k(m)).sum();
            let t = if o.human { human(total * 1024) } else { total.to_string() };
            c.outs(&format!("total {t}\n"));
        }
        let text = ls_render(c, &list, &o, gnu);
        if !c.outs(&text) {
            return status;
        }
        if o.recursive {
            let mut subs: Vec<String> = list
                .iter()
                .filter(|(n, m, _)| m.is_dir() && n != "." && n != "..")
                .map(|(n, _, _)| if d.ends_with('/') { format!("{d}{n}") } else { format!("{d}/{n}") })
                .collect();
            subs.reverse();
            for s in subs {
                queue.push_front(s);
            }
        }
    }
    status
}

fn sort_entries(list: &mut [(String, Metadata, String)], o: &LsOpts) {
    if o.unsorted {
        return;
    }
    if o.sort_time {
        list.sort_by(|a, b| b.1.mtime_ms.cmp(&a.1.mtime_ms).then(a.0.cmp(&b.0)));
    } else if o.sort_size {
        list.sort_by(|a, b| b.1.size.cmp(&a.1.size).then(a.0.cmp(&b.0)));
    } else {
        list.sort_by(|a, b| a.0.cmp(&b.0));
    }
    if o.reverse {
        list.reverse();
    }
}

fn suffix(m: &Metadata, o: &LsOpts) -> &'static str {
    if o.classify {
        match m.ftype {
            FileType::Dir => "/",
            FileType::Symlink => "@",
            FileType::File if m.mode & 0o111 != 0 => "*",
            _ => "",
        }
    } else if o.slash && m.is_dir() {
        "/"
    } else {
        ""
    }
}

fn ls_render(c: &mut Ctx, list: &[(String, Metadata, String)], o: &LsOpts, gnu: bool) -> String {
    let mut out = String::new();
    if !o.long {
        for (n, m, _) in list {
            if o.inode {
                out.push_str(&format!("{:>7} ", inode_of(n)));
            }
            out.push_str(n);
            out.push_str(suffix(m, o));
            out.push('\n');
        }
        return out;
    }
    struct Row {
        mode: String,
        links: String,
        user: String,
        group: String,
        size: String,
        time: String,
        name: String,
    }
    let mut rows = Vec::new();
    for (n, m, full) in list {
        let user = if o.numeric { m.uid.to_string() } else { user_name(c, m.uid) };
        let group = if o.numeric { m.gid.to_string() } else { group_name(c, m.gid) };
        let size = if m.ftype == FileType::CharDev {
            format!("{}, {}", m.rdev.0, m.rdev.1)
        } else if o.human && !gnu {
            bb_human_size(m.size)
        } else if o.human {
            human(m.size)
        } else {
            m.size.to_string()
        };
        let mut name = format!("{n}{}", suffix(m, o));
        if m.is_symlink() {
            if let Ok(t) = c.os.fs_ref().readlink(full) {
                name = format!("{n} -> {t}");
            }
        }
        rows.push(Row { mode: m.mode_string(), links: m.nlink.to_string(), user, group, size, time: time_col(c, m.mtime_ms, gnu), name });
    }
    if gnu {
        let wl = rows.iter().map(|r| r.links.len()).max().unwrap_or(1);
        let wu = rows.iter().map(|r| r.user.len()).max().unwrap_or(1);
        let wg = rows.iter().map(|r| r.group.len()).max().unwrap_or(1);
        let ws = rows.iter().map(|r| r.size.len()).max().unwrap_or(1);
        for r in rows {
            out.push_str(&format!("{} {:>wl$} {:<wu$} {:<wg$} {:>ws$} {} {}\n", r.mode, r.links, r.user, r.group, r.size, r.time, r.name));
        }
    } else {
        let w = if o.human { 7 } else { 9 };
        for r in rows {
            out.push_str(&format!("{:<10} {:>4} {:<8} {:<8} {:>w$} {} {}\n", r.mode, r.links, r.user, r.group, r.size, r.time, r.name));
        }
    }
    out
}

fn inode_of(name: &str) -> u64 {
    // A stable pseudo inode number (FNV-1a of the name).
    let mut h: u64 = 0xcbf29ce484222325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h % 10_000_000 + 1000
}

fn q(c: &Ctx, s: &str) -> String {
    let _ = c;
    format!("'{s}'")
}

pub(crate) fn mkdir(c: &mut Ctx) -> i32 {
    let (opts, dirs) = match getopt(&c.args, "pv", "m") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let parents = opts.iter().any(|(o, _)| *o == 'p');
    let mode = opts.iter().find(|(o, _)| *o == 'm').and_then(|(_, v)| u32::from_str_radix(v, 8).ok()).unwrap_or(0o755);
    if dirs.is_empty() {
        c.err("missing operand");
        return 1;
    }
    let mut st = 0;
    for d in dirs {
        let p = c.path(&d);
        let r = c.os.fs().mkdir(&p, mode, parents);
        if let Err(e) = r {
            let qd = q(c, &d);
            if c.gnu() {
                c.err(&format!("cannot create directory {qd}: {}", e.strerror()));
            } else {
                c.err(&format!("can't create directory {qd}: {}", e.strerror()));
            }
            st = 1;
        }
    }
    st
}

pub(crate) fn rmdir(c: &mut Ctx) -> i32 {
    let (_, dirs) = match getopt(&c.args, "pv", "") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let mut st = 0;
    for d in dirs {
        let p = c.path(&d);
        if let Err(e) = c.os.fs().remove_dir(&p) {
            let qd = q(c, &d);
            if c.gnu() {
                c.err(&format!("failed to remove {qd}: {}", e.strerror()));
            } else {
                c.err(&format!("{qd}: {}", e.strerror()));
            }
            st = 1;
        }
    }
    st
}

pub(crate) fn touch(c: &mut Ctx) -> i32 {
    let (opts, files) = match getopt(&c.args, "cam", "dtr") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let no_create = opts.iter().any(|(o, _)| *o == 'c');
    let now = c.os.unix_time_ms();
    let t = opts.iter().find(|(o, _)| *o == 'd').and_then(|(_, v)| crate::time::parse_date(v, (now / 1000) as i64)).map(|s| s as u64 * 1000).unwrap_or(now);
    if files.is_empty() {
        c.err("missing file operand");
        return 1;
    }
    let mut st = 0;
    for f in files {
        let p = c.path(&f);
        let exists = c.os.fs_ref().stat(&p).is_ok();
        let r = if exists {
            c.os.fs().set_mtime(&p, t)
        } else if no_create {
            Ok(())
        } else {
            crate::sys::write_file(c.os, &p, b"", WriteMode::Append).and_then(|_| c.os.fs().set_mtime(&p, t))
        };
        if let Err(e) = r {
            let qf = q(c, &f);
            if c.gnu() {
                c.err(&format!("cannot touch {qf}: {}", e.strerror()));
            } else {
                c.err(&format!("{f}: {}", e.strerror()));
            }
            st = 1;
        }
    }
    st
}

pub(crate) fn rm(c: &mut Ctx) -> i32 {
    let (opts, files) = match getopt(&c.args, "rRfivd", "") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let rec = opts.iter().any(|(o, _)| *o == 'r' || *o == 'R');
    let force = opts.iter().any(|(o, _)| *o == 'f');
    let verbose = opts.iter().any(|(o, _)| *o == 'v');
    if files.is_empty() && !force {
        c.err("missing operand");
        return 1;
    }
    let mut st = 0;
    for f in files {
        let p = c.path(&f);
        let m = match c.os.fs_ref().lstat(&p) {
            Ok(m) => m,
            Err(e) => {
                if !force {
                    let qf = q(c, &f);
                    if c.gnu() {
                        c.err(&format!("cannot remove {qf}: {}", e.strerror()));
                    } else {
                        c.err(&format!("can't remove {qf}: {}", e.strerror()));
                    }
                    st = 1;
                }
                continue;
            }
        };
        let r = if m.is_dir() {
            if !rec {
                let qf = q(c, &f);
                if c.gnu() {
                    c.err(&format!("cannot remove {qf}: Is a directory"));
                } else {
                    c.err(&format!("{qf} is a directory"));
                }
                st = 1;
                continue;
            }
            c.os.fs().remove_all(&p)
        } else {
            c.os.fs().remove_file(&p)
        };
        match r {
            Ok(()) => {
                if verbose {
                    let qf = q(c, &f);
                    c.outs(&format!("removed {qf}\n"));
                }
            }
            Err(e) => {
                let qf = q(c, &f);
                if c.gnu() {
                    c.err(&format!("cannot remove {qf}: {}", e.strerror()));
                } else {
                    c.err(&format!("can't remove {qf}: {}", e.strerror()));
                }
                st = 1;
            }
        }
    }
    st
}

fn copy_tree(c: &mut Ctx, src: &str, dst: &str, depth: usize, follow: bool) -> Result<(), Errno> {
    if depth > 64 {
        return Err(Errno::ELOOP);
    }
    let m = if follow { c.os.fs_ref().stat(src)? } else { c.os.fs_ref().lstat(src)? };
    match m.ftype {
        FileType::Dir => {
            match c.os.fs().mkdir(dst, m.mode, false) {
                Ok(()) | Err(Errno::EEXIST) => {}
                Err(e) => return Err(e),
            }
            for e in c.os.fs_ref().read_dir(src)? {
                copy_tree(c, &fs::join(src, &e.name), &fs::join(dst, &e.name), depth + 1, false)?;
            }
            Ok(())
        }
        FileType::Symlink => {
            let t = c.os.fs_ref().readlink(src)?;
            let _ = c.os.fs().remove_file(dst);
            c.os.fs().symlink(&t, dst)
        }
        _ => {
            let d = crate::sys::read_file(c.os, src)?;
            crate::sys::write_file(c.os, dst, &d, WriteMode::Truncate)?;
            let _ = c.os.fs().chmod(dst, m.mode);
            Ok(())
        }
    }
}

pub(crate) fn cp(c: &mut Ctx) -> i32 {
    let (opts, mut ops) = match getopt(&c.args, "rRapfvdLPHnuT", "") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let rec = opts.iter().any(|(o, _)| matches!(o, 'r' | 'R' | 'a'));
    let verbose = opts.iter().any(|(o, _)| *o == 'v');
    if ops.len() < 2 {
        if ops.is_empty() {
            c.err("missing file operand");
        } else {
            let qf = q(c, &ops[0]);
            c.err(&format!("missing destination file operand after {qf}"));
        }
        return 1;
    }
    let dst = ops.pop().unwrap_or_default();
    let dp = c.path(&dst);
    let dst_is_dir = c.os.fs_ref().stat(&dp).is_ok_and(|m| m.is_dir());
    if ops.len() > 1 && !dst_is_dir {
        let qd = q(c, &dst);
        c.err(&format!("target {qd} is not a directory"));
        return 1;
    }
    let mut st = 0;
    for s in ops {
        let sp = c.path(&s);
        let sm = match c.os.fs_ref().stat(&sp) {
            Ok(m) => m,
            Err(e) => {
                let qs = q(c, &s);
                if c.gnu() {
                    c.err(&format!("cannot stat {qs}: {}", e.strerror()));
                } else {
                    c.err(&format!("can't stat {qs}: {}", e.strerror()));
                }
                st = 1;
                continue;
            }
        };
        if sm.is_dir() && !rec {
            let qs = q(c, &s);
            if c.gnu() {
                c.err(&format!("-r not specified; omitting directory {qs}"));
            } else {
                c.err(&format!("omitting directory {qs}"));
            }
            st = 1;
            continue;
        }
        let target = if dst_is_dir { fs::join(&dp, &fs::basename(&s)) } else { dp.clone() };
        let follow = !rec || opts.iter().any(|(o, _)| matches!(o, 'L' | 'H'));
        if let Err(e) = copy_tree(c, &sp, &target, 0, follow) {
            let qt = q(c, &dst);
            if c.gnu() {
                c.err(&format!("cannot create regular file {qt}: {}", e.strerror()));
            } else {
                c.err(&format!("can't create {qt}: {}", e.strerror()));
            }
            st = 1;
        } else if verbose {
            let line = format!("'{s}' -> '{}'\n", if dst_is_dir { fs::join(&dst, &fs::basename(&s)) } else { dst.clone() });
            c.outs(&line);
        }
    }
    st
}

pub(crate) fn mv(c: &mut Ctx) -> i32 {
    let (_, mut ops) = match getopt(&c.args, "fivnuT", "") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    if ops.len() < 2 {
        c.err("missing file operand");
        return 1;
    }
    let dst = ops.pop().unwrap_or_default();
    let dp = c.path(&dst);
    let dst_is_dir = c.os.fs_ref().stat(&dp).is_ok_and(|m| m.is_dir());
    let mut st = 0;
    for s in ops {
        let sp = c.path(&s);
        let target = if dst_is_dir { fs::join(&dp, &fs::basename(&s)) } else { dp.clone() };
        let r = match c.os.fs().rename(&sp, &target) {
            Err(Errno::EXDEV) => copy_tree(c, &sp, &target, 0, false).and_then(|_| c.os.fs().remove_all(&sp)),
            other => other,
        };
        if let Err(e) = r {
            let qs = q(c, &s);
            if c.gnu() {
                if e == Errno::ENOENT && c.os.fs_ref().lstat(&sp).is_err() {
                    c.err(&format!("cannot stat {qs}: {}", e.strerror()));
                } else {
                    let qt = q(c, &dst);
                    c.err(&format!("cannot move {qs} to {qt}: {}", e.strerror()));
                }
            } else {
                c.err(&format!("can't rename {qs}: {}", e.strerror()));
            }
            st = 1;
        }
    }
    st
}

pub(crate) fn ln(c: &mut Ctx) -> i32 {
    let (opts, ops) = match getopt(&c.args, "sfnvT", "") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let sym = opts.iter().any(|(o, _)| *o == 's');
    let force = opts.iter().any(|(o, _)| *o == 'f');
    let no_deref = opts.iter().any(|(o, _)| *o == 'n');
    if ops.is_empty() {
        c.err("missing file operand");
        return 1;
    }
    let (target, link) = if ops.len() == 1 { (ops[0].clone(), fs::basename(&ops[0])) } else { (ops[0].clone(), ops[1].clone()) };
    let mut lp = c.path(&link);
    if !no_deref && c.os.fs_ref().stat(&lp).is_ok_and(|m| m.is_dir()) {
        lp = fs::join(&lp, &fs::basename(&target));
    }
    if force {
        let _ = c.os.fs().remove_file(&lp);
    }
    let r = if sym {
        c.os.fs().symlink(&target, &lp)
    } else {
        let tp = c.path(&target);
        crate::sys::read_file(c.os, &tp).and_then(|d| c.os.fs().write(&lp, &d, WriteMode::CreateNew))
    };
    if let Err(e) = r {
        let ql = q(c, &link);
        if c.gnu() {
            c.err(&format!("failed to create {}link {ql}: {}", if sym { "symbolic " } else { "hard " }, e.strerror()));
        } else {
            c.err(&format!("{link}: {}", e.strerror()));
        }
        return 1;
    }
    0
}

fn parse_mode(spec: &str, cur: u32, is_dir: bool) -> Option<u32> {
    if !spec.is_empty() && spec.chars().all(|c| c.is_digit(8)) {
        return u32::from_str_radix(spec, 8).ok();
    }
    let mut mode = cur;
    for clause in spec.split(',') {
        let whoend = clause.find(['+', '-', '=']).unwrap_or(clause.len());
        let who = &clause[..whoend];
        let mut mask = 0u32;
        for w in who.chars() {
            mask |= match w {
                'u' => 0o4700,
                'g' => 0o2070,
                'o' => 0o1007,
                'a' => 0o7777,
                _ => return None,
            };
        }
        let all = who.is_empty();
        if all {
            mask = 0o7777;
        }
        let mut rest = &clause[whoend..];
        while let Some(op) = rest.chars().next() {
            rest = &rest[1..];
            let permend = rest.find(['+', '-', '=']).unwrap_or(rest.len());
            let perms = &rest[..permend];
            rest = &rest[permend..];
            let mut bits = 0u32;
            for p in perms.chars() {
                bits |= match p {
                    'r' => 0o444,
                    'w' => 0o222,
                    'x' => 0o111,
                    'X' => {
                        if is_dir || cur & 0o111 != 0 {
                            0o111
                        } else {
                            0
                        }
                    }
                    's' => 0o6000,
                    't' => 0o1000,
                    _ => return None,
                };
            }
            let b = bits & mask;
            match op {
                '+' => mode |= b,
                '-' => mode &= !b,
                '=' => mode = (mode & !mask) | b,
                _ => return None,
            }
        }
    }
    Some(mode)
}

pub(crate) fn chmod(c: &mut Ctx) -> i32 {
    let mut args = c.args.clone();
    let rec = args.first().is_some_and(|a| a == "-R");
    if rec {
        args.remove(0);
    }
    if args.len() < 2 {
        c.err("missing operand");
        return 1;
    }
    let spec = args.remove(0);
    let mut st = 0;
    for f in args {
        let p = c.path(&f);
        let mut todo = vec![p.clone()];
        let mut n = 0;
        while let Some(x) = todo.pop() {
            n += 1;
            if n > 100_000 {
                break;
            }
            let m = match c.os.fs_ref().stat(&x) {
                Ok(m) => m,
                Err(e) => {
                    let qf = q(c, &f);
                    if c.gnu() {
                        c.err(&format!("cannot access {qf}: {}", e.strerror()));
                    } else {
                        c.err(&format!("{f}: {}", e.strerror()));
                    }
                    st = 1;
                    continue;
                }
            };
            let Some(mode) = parse_mode(&spec, m.mode, m.is_dir()) else {
                let qs = q(c, &spec);
                c.err(&format!("invalid mode: {qs}"));
                return 1;
            };
            if let Err(e) = c.os.fs().chmod(&x, mode) {
                let qf = q(c, &f);
                c.err(&format!("changing permissions of {qf}: {}", e.strerror()));
                st = 1;
            }
            if rec && m.is_dir() {
                if let Ok(es) = c.os.fs_ref().read_dir(&x) {
                    for e in es {
                        todo.push(fs::join(&x, &e.name));
                    }
                }
            }
        }
    }
    st
}

pub(crate) fn chown(c: &mut Ctx) -> i32 {
    let mut args = c.args.clone();
    let rec = args.first().is_some_and(|a| a == "-R");
    if rec {
        args.remove(0);
    }
    if args.len() < 2 {
        c.err("missing operand");
        return 1;
    }
    let spec = args.remove(0);
    let group_only = c.name == "chgrp";
    let (u, g) = if group_only {
        (None, Some(spec.as_str()))
    } else {
        match spec.split_once([':', '.']) {
            Some((u, g)) => (Some(u), if g.is_empty() { None } else { Some(g) }),
            None => (Some(spec.as_str()), None),
        }
    };
    let uid = match u.filter(|u| !u.is_empty()) {
        Some(u) => match name_id(c, "/etc/passwd", u) {
            Some(x) => Some(x),
            None => {
                c.err(&format!("invalid user: '{spec}'"));
                return 1;
            }
        },
        None => None,
    };
    let gid = match g {
        Some(g) => match name_id(c, "/etc/group", g) {
            Some(x) => Some(x),
            None => {
                c.err(&format!("invalid group: '{spec}'"));
                return 1;
            }
        },
        None => None,
    };
    let mut st = 0;
    for f in args {
        let mut todo = vec![c.path(&f)];
        while let Some(x) = todo.pop() {
            let m = match c.os.fs_ref().stat(&x) {
                Ok(m) => m,
                Err(e) => {
                    let qf = q(c, &f);
                    c.err(&format!("cannot access {qf}: {}", e.strerror()));
                    st = 1;
                    continue;
                }
            };
            if let Err(e) = c.os.fs().chown(&x, uid.unwrap_or(m.uid), gid.unwrap_or(m.gid)) {
                let qf = q(c, &f);
                c.err(&format!("changing ownership of {qf}: {}", e.strerror()));
                st = 1;
            }
            if rec && m.is_dir() {
                if let Ok(es) = c.os.fs_ref().read_dir(&x) {
                    todo.extend(es.into_iter().map(|e| fs::join(&x, &e.name)));
                }
            }
        }
    }
    st
}

fn ftype_name(m: &Metadata) -> &'static str {
    match m.ftype {
        FileType::File if m.size == 0 => "regular empty file",
        FileType::File => "regular file",
        FileType::Dir => "directory",
        FileType::Symlink => "symbolic link",
        FileType::CharDev => "character special file",
    }
}

pub(crate) fn stat(c: &mut Ctx) -> i32 {
    let (opts, files) = match getopt(&c.args, "LtfF", "c") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let follow = opts.iter().any(|(o, _)| *o == 'L');
    let fmt = opts.iter().find(|(o, _)| *o == 'c').map(|(_, v)| v.clone());
    if files.is_empty() {
        c.err("missing operand");
        return 1;
    }
    let mut st = 0;
    for f in files {
        let p = c.path(&f);
        let r = if follow { c.os.fs_ref().stat(&p) } else { c.os.fs_ref().lstat(&p) };
        let m = match r {
            Ok(m) => m,
            Err(e) => {
                let qf = q(c, &f);
                if c.gnu() {
                    c.err(&format!("cannot statx {qf}: {}", e.strerror()));
                } else {
                    c.err(&format!("can't stat {qf}: {}", e.strerror()));
                }
                st = 1;
                continue;
            }
        };
        let user = user_name(c, m.uid);
        let group = group_name(c, m.gid);
        let ts = |ms: u64| format!("{}.{:09} +0000", crate::time::strftime("%Y-%m-%d %H:%M:%S", (ms / 1000) as i64, 0), (ms % 1000) * 1_000_000);
        if let Some(fmt) = &fmt {
            let mut out = String::new();
            let mut it = fmt.chars();
            while let Some(ch) = it.next() {
                if ch != '%' {
                    out.push(ch);
                    continue;
                }
                match it.next() {
                    Some('n') => out.push_str(&f),
                    Some('N') => {
                        out.push_str(&format!("'{f}'"));
                        if m.is_symlink() {
                            if let Ok(t) = c.os.fs_ref().readlink(&p) {
                                out.push_str(&format!(" -> '{t}'"));
                            }
                        }
                    }
                    Some('s') => out.push_str(&m.size.to_string()),
                    Some('a') => out.push_str(&format!("{:o}", m.mode)),
                    Some('A') => out.push_str(&m.mode_string()),
                    Some('U') => out.push_str(&user),
                    Some('G') => out.push_str(&group),
                    Some('u') => out.push_str(&m.uid.to_string()),
                    Some('g') => out.push_str(&m.gid.to_string()),
                    Some('F') => out.push_str(ftype_name(&m)),
                    Some('h') => out.push_str(&m.nlink.to_string()),
                    Some('Y') | Some('X') | Some('Z') => out.push_str(&(m.mtime_ms / 1000).to_string()),
                    Some('y') | Some('x') | Some('z') => out.push_str(&ts(m.mtime_ms)),
                    Some('b') => out.push_str(&(blocks_1k(&m) * 2).to_string()),
                    Some('i') => out.push_str(&inode_of(&p).to_string()),
                    Some('%') => out.push('%'),
                    Some(o) => {
                        out.push('%');
                        out.push(o);
                    }
                    None => out.push('%'),
                }
            }
            out.push('\n');
            c.outs(&out);
            continue;
        }
        let mut name = f.clone();
        if m.is_symlink() {
            if let Ok(t) = c.os.fs_ref().readlink(&p) {
                name = format!("{f} -> {t}");
            }
        }
        let blocks = blocks_1k(&m) * 2;
        let text = if c.gnu() {
            format!(
                "  File: {name}\n  Size: {:<10}\tBlocks: {:<10} IO Block: 4096   {}\nDevice: 0,52\tInode: {:<11} Links: {}\nAccess: ({:04o}/{})  Uid: ({:>5}/{:>8})   Gid: ({:>5}/{:>8})\nAccess: {}\nModify: {}\nChange: {}\n Birth: -\n",
                m.size,
                blocks,
                ftype_name(&m),
                inode_of(&p),
                m.nlink,
                m.mode,
                m.mode_string(),
                m.uid,
                user,
                m.gid,
                group,
                ts(m.mtime_ms),
                ts(m.mtime_ms),
                ts(m.mtime_ms)
            )
        } else {
            format!(
                "  File: {name}\n  Size: {:<10}\tBlocks: {:<10} IO Block: 4096   {}\nDevice: 34h/52d\tInode: {:<11} Links: {}\nAccess: ({:04o}/{})  Uid: ({:>5}/{:>8})   Gid: ({:>5}/{:>8})\nAccess: {}\nModify: {}\nChange: {}\n",
                m.size,
                blocks,
                ftype_name(&m),
                inode_of(&p),
                m.nlink,
                m.mode,
                m.mode_string(),
                m.uid,
                user,
                m.gid,
                group,
                ts(m.mtime_ms),
                ts(m.mtime_ms),
                ts(m.mtime_ms)
            )
        };
        c.outs(&text);
    }
    st
}

fn du_walk(c: &mut Ctx, p: &str, shown: &str, depth: usize, opts: &(bool, bool, bool, Option<usize>, bool), out: &mut String, budget: &mut usize) -> u64 {
    let (all, human_, summarize, maxd, bytes) = *opts;
    *budget = budget.saturating_sub(1);
    let Ok(m) = c.os.fs_ref().lstat(p) else { return 0 };
    let mut total = if bytes { m.size } else { blocks_1k(&m) };
    if m.is_dir() && *budget > 0 {
        if let Ok(es) = c.os.fs_ref().read_dir(p) {
            for e in es {
                let child = fs::join(p, &e.name);
                let cshown = if shown.ends_with('/') { format!("{shown}{}", e.name) } else { format!("{shown}/{}", e.name) };
                total += du_walk(c, &child, &cshown, depth + 1, opts, out, budget);
            }
        }
    }
    let show_this = if summarize { depth == 0 } else { (m.is_dir() || all || depth == 0) && maxd.is_none_or(|d| depth <= d) };
    if show_this {
        let size = if human_ { human(if bytes { total } else { total * 1024 }) } else { total.to_string() };
        out.push_str(&format!("{size}\t{shown}\n"));
    }
    total
}

pub(crate) fn du(c: &mut Ctx) -> i32 {
    let (opts, mut ops) = match getopt(&c.args, "ashkcmxLb", "d") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let has = |ch: char| opts.iter().any(|(o, _)| *o == ch);
    let maxd = opts.iter().find(|(o, _)| *o == 'd').and_then(|(_, v)| v.parse().ok());
    if ops.is_empty() {
        ops.push(".".into());
    }
    let mut st = 0;
    let mut grand = 0;
    for o in &ops {
        let p = c.path(o);
        if let Err(e) = c.os.fs_ref().lstat(&p) {
            let qo = q(c, o);
            if c.gnu() {
                c.err(&format!("cannot access {qo}: {}", e.strerror()));
            } else {
                c.err(&format!("{o}: {}", e.strerror()));
            }
            st = 1;
            continue;
        }
        let mut out = String::new();
        let mut budget = 100_000;
        grand += du_walk(c, &p, o, 0, &(has('a'), has('h'), has('s'), maxd, has('b')), &mut out, &mut budget);
        c.outs(&out);
    }
    if has('c') {
        let s = if has('h') { human(grand * 1024) } else { grand.to_string() };
        c.outs(&format!("{s}\ttotal\n"));
    }
    st
}

/// `mount`: with no operand the mount table (`-t TYPE` keeps that type's lines), as busybox
/// and util-linux print it from /proc/mounts; mounting anything in a container without
/// CAP_SYS_ADMIN is refused.
pub(crate) fn mount(c: &mut Ctx) -> i32 {
    let (opts, operands) = match getopt(&c.args, "arwnfvi", "toO") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    if !operands.is_empty() || opts.iter().any(|(o, _)| *o == 'a') {
        if c.gnu() {
            let target = operands.last().cloned().unwrap_or_default();
            c.err(&format!("{target}: must be superuser to use mount."));
            return 32;
        }
        c.err("permission denied (are you root?)");
        return 1;
    }
    let only = opts.iter().find(|(o, _)| *o == 't').map(|(_, t)| t.clone());
    let mut out = String::new();
    for m in crate::sys::mount_table(c.os) {
        if only.as_deref().is_none_or(|t| t == m.fs_type) {
            out.push_str(&format!("{} on {} type {} ({})\n", m.device, m.point, m.fs_type, m.options));
        }
    }
    c.outs(&out);
    0
}

pub(crate) fn df(c: &mut Ctx) -> i32 {
    let (opts, _) = match getopt(&c.args, "hkPTaim", "t") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let h = opts.iter().any(|(o, _)| *o == 'h');
    // The node's disk (the root overlay's upper layer and every disk-backed mount); a tmpfs
    // is as large as its `size=` option, else half the node's memory (the kernel's default).
    let total: u64 = 61_255_492;
    let used_root = 8_311_248u64;
    let half_memory = c.os.mem_info().total / 1024 / 2;
    let mut rows: Vec<(String, u64, u64, String)> = Vec::new();
    let mut seen_devs = Vec::new();
    for m in crate::sys::mount_table(&*c.os) {
        let (t, u) = match m.fs_type {
            "overlay" | "ext4" => (total, used_root),
            "tmpfs" => (m.options.split(',').find_map(|o| o.strip_prefix("size=")?.strip_suffix('k')?.parse().ok()).unwrap_or(half_memory), 0),
            _ => continue, // proc, sysfs, devpts, mqueue, cgroup2: no blocks
        };
        // GNU df shows each filesystem once (its first mount); busybox lists every mount.
        if c.gnu() && seen_devs.contains(&m.dev) {
            continue;
        }
        seen_devs.push(m.dev);
        rows.push((m.device.to_string(), t, u, m.point));
    }
    let mut out = String::new();
    if c.gnu() {
        out.push_str(if h { "Filesystem      Size  Used Avail Use% Mounted on\n" } else { "Filesystem     1K-blocks    Used Available Use% Mounted on\n" });
    } else {
        out.push_str(if h {
            "Filesystem                Size      Used Available Use% Mounted on\n"
        } else {
            "Filesystem           1K-blocks      Used Available Use% Mounted on\n"
        });
    }
    for (fsn, t, u, m) in rows {
        let avail = t - u;
        let pct = if t == 0 { 0 } else { (u * 100).div_ceil(t) };
        if c.gnu() {
            if h {
                out.push_str(&format!("{:<15} {:>4} {:>5} {:>5} {:>3}% {}\n", fsn, human(t * 1024), human(u * 1024), human(avail * 1024), pct, m));
            } else {
                out.push_str(&format!("{:<15} {:>9} {:>7} {:>9} {:>3}% {}\n", fsn, t, u, avail, pct, m));
            }
        } else if h {
            out.push_str(&format!("{:<20} {:>9} {:>9} {:>9} {:>3}% {}\n", fsn, human(t * 1024), human(u * 1024), human(avail * 1024), pct, m));
        } else {
            out.push_str(&format!("{:<20} {:>9} {:>9} {:>9} {:>3}% {}\n", fsn, t, u, avail, pct, m));
        }
    }
    c.outs(&out);
    0
}

#[derive(Clone, Debug)]
enum Pred {
    Name(String, bool),
    Path(String),
    Type(char),
    Empty,
    Not(Box<Pred>),
    Or(Box<Pred>, Box<Pred>),
    And(Box<Pred>, Box<Pred>),
    True,
}

fn find_eval(c: &mut Ctx, p: &Pred, name: &str, shown: &str, m: &Metadata, full: &str) -> bool {
    match p {
        Pred::True => true,
        Pred::Name(pat, ci) => {
            if *ci {
                crate::pattern::matches(&pat.to_lowercase(), &name.to_lowercase())
            } else {
                crate::pattern::matches(pat, name)
            }
        }
        Pred::Path(pat) => crate::pattern::matches(pat, shown),
        Pred::Type(t) => match t {
            'f' => m.is_file(),
            'd' => m.is_dir(),
            'l' => m.is_symlink(),
            'c' => m.ftype == FileType::CharDev,
            _ => false,
        },
        Pred::Empty => {
            if m.is_dir() {
                c.os.fs_ref().read_dir(full).is_ok_and(|e| e.is_empty())
            } else {
                m.size == 0
            }
        }
        Pred::Not(x) => !find_eval(c, x, name, shown, m, full),
        Pred::And(a, b) => find_eval(c, a, name, shown, m, full) && find_eval(c, b, name, shown, m, full),
        Pred::Or(a, b) => find_eval(c, a, name, shown, m, full) || find_eval(c, b, name, shown, m, full),
    }
}

pub(crate) fn find(c: &mut Ctx) -> i32 {
    let args = c.args.clone();
    let mut i = 0;
    let mut roots = Vec::new();
    while i < args.len() && !args[i].starts_with('-') && args[i] != "!" && args[i] != "(" {
        roots.push(args[i].clone());
        i += 1;
    }
    if roots.is_empty() {
        roots.push(".".into());
    }
    let mut maxdepth = usize::MAX;
    let mut mindepth = 0;
    let mut delete = false;
    let mut terms: Vec<Pred> = Vec::new();
    let mut pending_or: Option<Pred> = None;
    let mut negate = false;
    while i < args.len() {
        let a = args[i].as_str();
        let val = args.get(i + 1).cloned();
        let mut pred = None;
        match a {
            "-name" | "-iname" | "-path" | "-wholename" | "-type" | "-maxdepth" | "-mindepth" => {
                let Some(v) = val else {
                    c.err(&format!("missing argument to '{a}'"));
                    return 1;
                };
                i += 1;
                match a {
                    "-name" => pred = Some(Pred::Name(v, false)),
                    "-iname" => pred = Some(Pred::Name(v, true)),
                    "-path" | "-wholename" => pred = Some(Pred::Path(v)),
                    "-type" => pred = Some(Pred::Type(v.chars().next().unwrap_or('f'))),
                    "-maxdepth" => maxdepth = v.parse().unwrap_or(usize::MAX),
                    _ => mindepth = v.parse().unwrap_or(0),
                }
            }
            "-print" | "-a" | "-and" | "-depth" | "-xdev" | "-follow" => {}
            "-delete" => delete = true,
            "-empty" => pred = Some(Pred::Empty),
            "!" | "-not" => negate = !negate,
            "-o" | "-or" => {
                let left = terms.drain(..).reduce(|x, y| Pred::And(Box::new(x), Box::new(y))).unwrap_or(Pred::True);
                pending_or = Some(match pending_or.take() {
                    Some(p) => Pred::Or(Box::new(p), Box::new(left)),
                    None => left,
                });
            }
            other => {
                if c.gnu() {
                    c.err(&format!("unknown predicate '{other}'"));
                } else {
                    c.err(&format!("unrecognized: {other}"));
                }
                return 1;
            }
        }
        if let Some(p) = pred {
            terms.push(if negate { Pred::Not(Box::new(p)) } else { p });
            negate = false;
        }
        i += 1;
    }
    let and = terms.into_iter().reduce(|x, y| Pred::And(Box::new(x), Box::new(y))).unwrap_or(Pred::True);
    let pred = match pending_or {
        Some(p) => Pred::Or(Box::new(p), Box::new(and)),
        None => and,
    };
    let mut st = 0;
    let mut out = String::new();
    let mut budget = 200_000usize;
    for r in roots {
        let full = c.path(&r);
        let mut stack = vec![(full, r.clone(), 0usize)];
        let mut to_delete = Vec::new();
        while let Some((full, shown, depth)) = stack.pop() {
            budget = budget.saturating_sub(1);
            if budget == 0 {
                break;
            }
            let m = match c.os.fs_ref().lstat(&full) {
                Ok(m) => m,
                Err(e) => {
                    c.err(&format!("'{shown}': {}", e.strerror()));
                    st = 1;
                    continue;
                }
            };
            let name = fs::basename(&shown);
            if depth >= mindepth && find_eval(c, &pred, &name, &shown, &m, &full) {
                if delete {
                    to_delete.push(full.clone());
                } else {
                    out.push_str(&shown);
                    out.push('\n');
                }
            }
            if m.is_dir() && depth < maxdepth {
                if let Ok(es) = c.os.fs_ref().read_dir(&full) {
                    for e in es.into_iter().rev() {
                        let cs = if shown.ends_with('/') { format!("{shown}{}", e.name) } else { format!("{shown}/{}", e.name) };
                        stack.push((fs::join(&full, &e.name), cs, depth + 1));
                    }
                }
            }
        }
        for d in to_delete.into_iter().rev() {
            let _ = c.os.fs().remove_all(&d);
        }
    }
    c.outs(&out);
    st
}

pub(crate) fn readlink(c: &mut Ctx) -> i32 {
    let (opts, files) = match getopt(&c.args, "fenqsvm", "") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let canon = opts.iter().any(|(o, _)| matches!(o, 'f' | 'e' | 'm'));
    let mut st = 0;
    for f in files {
        let p = c.path(&f);
        let r = if canon { c.os.fs_ref().realpath(&p) } else { c.os.fs_ref().readlink(&p) };
        match r {
            Ok(t) => {
                c.outs(&format!("{t}\n"));
            }
            Err(_) => st = 1,
        }
    }
    st
}

pub(crate) fn realpath(c: &mut Ctx) -> i32 {
    let mut st = 0;
    let files: Vec<String> = c.args.iter().filter(|a| !a.starts_with('-')).cloned().collect();
    for f in files {
        let p = c.path(&f);
        match c.os.fs_ref().realpath(&p) {
            Ok(t) => {
                c.outs(&format!("{t}\n"));
            }
            Err(e) => {
                c.err(&format!("{f}: {}", e.strerror()));
                st = 1;
            }
        }
    }
    st
}

pub(crate) fn basename(c: &mut Ctx) -> i32 {
    let args = c.args.clone();
    let Some(p) = args.first() else {
        c.err("missing operand");
        return 1;
    };
    let mut b = fs::basename(p);
    if let Some(suf) = args.get(1) {
        if b.len() > suf.len() && b.ends_with(suf.as_str()) {
            b.truncate(b.len() - suf.len());
        }
    }
    c.outs(&format!("{b}\n"));
    0
}

pub(crate) fn dirname(c: &mut Ctx) -> i32 {
    let args = c.args.clone();
    if args.is_empty() {
        c.err("missing operand");
        return 1;
    }
    for p in args {
        c.outs(&format!("{}\n", fs::dirname(&p)));
    }
    0
}

pub(crate) fn tee(c: &mut Ctx) -> i32 {
    let (opts, files) = match getopt(&c.args, "ai", "") {
        Ok(v) => v,
        Err(o) => return c.bad_option(&o),
    };
    let append = opts.iter().any(|(o, _)| *o == 'a');
    let data = c.stdin.to_vec();
    let mut st = 0;
    for f in &files {
        let p = c.path(f);
        if let Err(e) = crate::sys::write_file(c.os, &p, &data, if append { WriteMode::Append } else { WriteMode::Truncate }) {
            c.err(&format!("{f}: {}", e.strerror()));
            st = 1;
        }
    }
    c.out(&data);
    st
}

fn parse_size(s: &str) -> Option<u64> {
    let (num, mult) = match s.char_indices().find(|(_, ch)| !ch.is_ascii_digit()) {
        None => (s, 1u64),
        Some((i, _)) => {
            let m = match &s[i..] {
                "c" => 1,
                "w" => 2,
                "b" => 512,
                "k" | "K" | "KiB" => 1024,
                "kB" => 1000,
                "M" | "MiB" => 1 << 20,
                "MB" => 1_000_000,
                "G" | "GiB" => 1 << 30,
                "GB" => 1_000_000_000,
                _ => return None,
            };
            (&s[..i], m)
        }
    };
    num.parse::<u64>().ok().map(|n| n.saturating_mul(mult))
}

pub(crate) fn dd(c: &mut Ctx) -> i32 {
    let mut iff = None;
    let mut off = None;
    let mut bs = 512u64;
    let mut count: Option<u64> = None;
    let mut skip = 0u64;
    let mut seek = 0u64;
    let mut quiet = false;
    let mut notrunc = false;
    for a in c.args.clone() {
        let Some((k, v)) = a.split_once('=') else {
            c.err(&format!("unrecognized operand '{a}'"));
            return 1;
        };
        match k {
            "if" => iff = Some(v.to_string()),
            "of" => off = Some(v.to_string()),
            "bs" | "ibs" | "obs" => match parse_size(v) {
                Some(n) if n > 0 => bs = n,
                _ => {
                    c.err(&format!("invalid number: '{v}'"));
                    return 1;
                }
            },
            "count" => count = parse_size(v),
            "skip" => skip = parse_size(v).unwrap_or(0),
            "seek" => seek = parse_size(v).unwrap_or(0),
            "status" => quiet = v == "none",
            "conv" => notrunc = v.contains("notrunc"),
            "iflag" | "oflag" => {}
            _ => {
                c.err(&format!("unrecognized operand '{a}'"));
                return 1;
            }
        }
    }
    let want = count.map(|n| n.saturating_mul(bs)).unwrap_or(u64::MAX).min(256 << 20) as usize;
    let input = match &iff {
        None => c.stdin.to_vec(),
        Some(f) => {
            let p = c.path(f);
            let limit = (skip.saturating_mul(bs) as usize).saturating_add(want).min(256 << 20);
            match crate::sys::read_file_limited(c.os, &p, limit) {
                Ok(d) => d,
                Err(e) => {
                    if c.gnu() {
                        c.err(&format!("failed to open '{f}': {}", e.strerror()));
                    } else {
                        c.err(&format!("can't open '{f}': {}", e.strerror()));
                    }
                    return 1;
                }
            }
        }
    };
    let start = (skip.saturating_mul(bs) as usize).min(input.len());
    let data = &input[start..(start.saturating_add(want)).min(input.len())];
    let full = data.len() as u64 / bs;
    let partial = if data.len() as u64 % bs > 0 { 1 } else { 0 };
    match &off {
        None => {
            c.out(data);
        }
        Some(f) => {
            let p = c.path(f);
            let r = if seek > 0 || notrunc {
                let mut cur = crate::sys::read_file(c.os, &p).unwrap_or_default();
                let at = (seek.saturating_mul(bs) as usize).min(64 << 20);
                if cur.len() < at + data.len() {
                    cur.resize(at + data.len(), 0);
                }
                cur[at..at + data.len()].copy_from_slice(data);
                crate::sys::write_file(c.os, &p, &cur, WriteMode::Truncate)
            } else {
                crate::sys::write_file(c.os, &p, data, WriteMode::Truncate)
            };
            if let Err(e) = r {
                if c.gnu() {
                    c.err(&format!("failed to open '{f}': {}", e.strerror()));
                } else {
                    c.err(&format!("can't open '{f}': {}", e.strerror()));
                }
                return 1;
            }
        }
    }
    if !quiet {
        let n = data.len() as u64;
        // Simulated throughput: 1 GB/s.
        let secs = (n as f64 / 1e9).max(0.000_1);
        let stats = if c.gnu() {
            let size = if n >= 1000 { format!(" ({}, {})", si(n), iec(n)) } else { String::new() };
            format!(
                "{full}+{partial} records in\n{full}+{partial} records out\n{n} byte{}{size} copied, {:.5} s, {}/s\n",
                if n == 1 { "" } else { "s" },
                secs,
                si((n as f64 / secs) as u64)
            )
        } else {
            let size = if n >= 1024 { format!(" ({})", bb_human(n)) } else { String::new() };
            format!(
                "{full}+{partial} records in\n{full}+{partial} records out\n{n} bytes{size} copied, {:.6} seconds, {}/s\n",
                secs,
                bb_human((n as f64 / secs) as u64)
            )
        };
        c.err_raw(&stats);
    }
    0
}

fn si(n: u64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < units.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else if v < 10.0 {
        format!("{:.1} {}", v, units[u])
    } else {
        format!("{:.0} {}", v, units[u])
    }
}

fn iec(n: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if v < 10.0 && u > 0 {
        format!("{:.1} {}", v, units[u])
    } else {
        format!("{:.0} {}", v, units[u])
    }
}

fn bb_human(n: u64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{:.1}{}", v, units[u])
}
