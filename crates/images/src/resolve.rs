//! Tag resolution and image assembly: a tag becomes a concrete build (version + tag pattern), the
//! build's layer is folded from its group's runs and the repository's rules, and its `from` image is
//! resolved recursively and merged the way `docker build` merges a child config onto its parent.

use std::collections::BTreeMap;

use crate::catalogue::{cmp_version, split_tag, Catalogue, Field, FileSrc, Op, Repo, Val, BLOBS};
use crate::{ImageConfig, ImageFile, OsInfo};

/// A tag resolved to the build it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Concrete {
    /// The full version (`1.29.1`) or, for word builds, the word itself (`v13`).
    pub version: String,
    /// The tag pattern (`@`, `@-alpine`, `cli-@-php8.1`).
    pub pattern: String,
}

impl Concrete {
    pub(crate) fn tag(&self) -> String {
        self.pattern.replace('@', &self.version)
    }
}

/// Resolves a tag of `repo` to the build it names, or `None` when the tag does not exist.
pub(crate) fn concrete(repo: &Repo, tag: &str) -> Option<Concrete> {
    if repo.words.contains(tag) {
        return Some(Concrete { version: tag.to_string(), pattern: "@".into() });
    }
    if let Some(v) = repo.alias.get(tag) {
        if let Some(t) = repo.word_exc.get(tag) {
            let (version, pattern) = split_tag(t)?;
            return Some(Concrete { version, pattern });
        }
        let segs: Vec<&str> = tag.split('-').collect();
        for i in 0..=segs.len() {
            let rest = segs[i..].join("-");
            let pattern = if rest.is_empty() { "@".to_string() } else { format!("@-{rest}") };
            if repo.tag_exists(v, &pattern) {
                return Some(Concrete { version: v.clone(), pattern });
            }
        }
        return Some(Concrete { version: v.clone(), pattern: "@".into() });
    }
    let (version, pattern) = split_tag(tag)?;
    if !repo.tag_exists(&version, &pattern) {
        return None;
    }
    if repo.is_full_version(&version) {
        return Some(Concrete { version, pattern });
    }
    if let Some(t) = repo.partial_exc.get(tag) {
        let (version, pattern) = split_tag(t)?;
        return Some(Concrete { version, pattern });
    }
    // A partial tag whose builds were all pre-releases (not catalogued) takes the highest
    // release of any variant with that prefix.
    let prefix = format!("{version}.");
    let full = repo.highest_with_prefix(&version, &pattern).or_else(|| repo.versions.iter().rev().find(|v| v.starts_with(&prefix)).cloned())?;
    Some(Concrete { version: full, pattern })
}

/// One image's own layer: what its Dockerfile (or the catalogue's rules) set.
#[derive(Debug, Default, Clone)]
pub(crate) struct Layer {
    pub from: Option<String>,
    pub os: Option<String>,
    pub entrypoint: Option<Vec<String>>,
    pub cmd: Option<Vec<String>>,
    pub env: Vec<(String, String)>,
    pub expose: Option<Vec<String>>,
    pub volume: Option<Vec<String>>,
    pub stop: Option<String>,
    pub workdir: Option<String>,
    pub user: Option<String>,
    pub files_ops: Vec<Op>,
    pub prog_ops: Vec<Op>,
    pub size: Option<(u64, u64)>,
    pub layer: Option<(u64, u64)>,
    pub notes: Vec<String>,
    pub generic: bool,
}

const DEBIAN_CODENAMES: &[&str] = &["wheezy", "jessie", "stretch", "buster", "bullseye", "bookworm", "trixie", "forky", "sid"];
const UBUNTU_CODENAMES: &[&str] = &["trusty", "xenial", "bionic", "focal", "jammy", "noble", "oracular", "plucky", "questing"];

/// What a pinned tag pattern falls back to when it has no group of its own, with the `from`
/// substitution that keeps its base right (mirrors `unpin` in tools/official.py).
fn unpin(pattern: &str) -> Vec<(String, Vec<(String, String)>)> {
    let segs: Vec<&str> = pattern.split('-').collect();
    let mut out: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let mut push = |p: String, subs: Vec<(String, String)>| {
        if p != pattern && !out.iter().any(|(q, _)| *q == p) {
            out.push((p, subs));
        }
    };
    let codename = segs.iter().find(|s| DEBIAN_CODENAMES.contains(s) || UBUNTU_CODENAMES.contains(s)).map(|s| s.to_string());
    let alpine = segs.iter().find_map(|s| s.strip_prefix("alpine").filter(|v| !v.is_empty() && v.starts_with('3')).map(str::to_string));
    let php = segs.iter().find_map(|s| s.strip_prefix("php").filter(|v| v.contains('.')).map(str::to_string));
    let mut subs = Vec::new();
    if let Some(c) = &codename {
        subs.push(("codename".to_string(), c.clone()));
    }
    if let Some(a) = &alpine {
        subs.push(("alpine".to_string(), a.clone()));
    }
    if let Some(p) = &php {
        subs.push(("php".to_string(), p.clone()));
    }
    let no_code: Vec<&str> = segs.iter().copied().filter(|s| Some(s.to_string()) != codename).collect();
    let q = no_code.join("-");
    let a: Vec<String> =
        no_code.iter().map(|s| if alpine.as_deref().is_some_and(|v| *s == format!("alpine{v}")) { "alpine".to_string() } else { s.to_string() }).collect();
    let b: Vec<&str> = no_code.iter().copied().filter(|s| alpine.as_deref().is_none_or(|v| *s != format!("alpine{v}"))).collect();
    let c: Vec<&str> = segs.iter().copied().filter(|s| php.as_deref().is_none_or(|v| *s != format!("php{v}"))).collect();
    push(q, subs.clone());
    push(a.join("-"), subs.clone());
    push(b.join("-"), subs.clone());
    push(c.join("-"), subs.clone());
    let mut cut = segs.clone();
    while cut.len() > 1 {
        cut.pop();
        push(cut.join("-"), Vec::new());
    }
    out
}

/// The patterns a pinned pattern falls back to, in order.
pub(crate) fn unpin_patterns(pattern: &str) -> Vec<String> {
    unpin(pattern).into_iter().map(|(p, _)| p).collect()
}

/// Applies a pin substitution to a `from` reference: `buildpack-deps:trixie` → `buildpack-deps:bullseye`,
/// `alpine:3.22` → `alpine:3.17`, `php:8.2-apache` → `php:7.4-apache`.
fn rebase_from(from: &str, subs: &[(String, String)]) -> String {
    let mut out = from.to_string();
    for (kind, val) in subs {
        match kind.as_str() {
            "codename" => {
                let family = if DEBIAN_CODENAMES.contains(&val.as_str()) { DEBIAN_CODENAMES } else { UBUNTU_CODENAMES };
                for c in family {
                    if let Some(pos) = find_token(&out, c) {
                        out.replace_range(pos..pos + c.len(), val);
                        break;
                    }
                }
                if family == UBUNTU_CODENAMES {
                    // `ubuntu:24.04`-style bases take the release number of the pinned codename.
                    let num = match val.as_str() {
                        "trusty" => "14.04",
                        "xenial" => "16.04",
                        "bionic" => "18.04",
                        "focal" => "20.04",
                        "jammy" => "22.04",
                        "noble" => "24.04",
                        _ => "",
                    };
                    if let Some(pos) = out.find("ubuntu:") {
                        let tail = &out[pos + 7..];
                        let end = tail.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(tail.len());
                        if end > 0 && !num.is_empty() {
                            out.replace_range(pos + 7..pos + 7 + end, num);
                        }
                    }
                }
            }
            "alpine" => {
                if let Some(pos) = out.find("alpine:") {
                    let tail = &out[pos + 7..];
                    let end = tail.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(tail.len());
                    if end > 0 {
                        out.replace_range(pos + 7..pos + 7 + end, val);
                    }
                } else if let Some(pos) = out.find("-alpine3.") {
                    let tail = &out[pos + 7..];
                    let end = tail.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(tail.len());
                    out.replace_range(pos + 7..pos + 7 + end, val);
                }
            }
            "php" => {
                if let Some(pos) = out.find("php:") {
                    let tail = &out[pos + 4..];
                    let end = tail.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(tail.len());
                    if end > 0 {
                        out.replace_range(pos + 4..pos + 4 + end, val);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The position of `word` in `s` as a whole token (delimited by start/end or `:-/`).
fn find_token(s: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = s[from..].find(word) {
        let pos = from + i;
        let before = pos == 0 || matches!(s.as_bytes()[pos - 1], b':' | b'-' | b'/');
        let end = pos + word.len();
        let after = end == s.len() || matches!(s.as_bytes()[end], b':' | b'-' | b'/');
        if before && after {
            return Some(pos);
        }
        from = pos + 1;
    }
    None
}

/// Renders `{v}`, `{vz}` (trailing `.0` dropped), `{v1}` (major) and `{v2}` (major.minor).
pub(crate) fn render(s: &str, v: &str) -> String {
    if !s.contains('{') {
        return s.to_string();
    }
    let parts: Vec<&str> = v.split('.').collect();
    let vz = if v.ends_with(".0") && parts.len() >= 3 { &v[..v.len() - 2] } else { v };
    let v2 = parts.iter().take(2).copied().collect::<Vec<_>>().join(".");
    s.replace("{vz}", vz).replace("{v2}", &v2).replace("{v1}", parts[0]).replace("{v}", v)
}

fn apply(layer: &mut Layer, op: &Op, v: &str) {
    let r = |s: &str| render(s, v);
    let rl = |l: &[String]| l.iter().map(|s| render(s, v)).collect::<Vec<_>>();
    match op {
        Op::Set(f, val) => {
            let (s, l) = match val {
                Val::Str(s) => (Some(r(s)), None),
                Val::List(l) => (None, Some(rl(l))),
            };
            match f {
                Field::From => layer.from = s,
                Field::Os => layer.os = s,
                Field::Entrypoint => layer.entrypoint = l,
                Field::Cmd => layer.cmd = l,
                Field::Expose => layer.expose = l,
                Field::Volume => layer.volume = l,
                Field::Stop => layer.stop = s,
                Field::Workdir => layer.workdir = s,
                Field::User => layer.user = s,
            }
        }
        Op::Unset(f) => match f {
            Field::From => layer.from = None,
            Field::Os => layer.os = None,
            Field::Entrypoint => layer.entrypoint = None,
            Field::Cmd => layer.cmd = None,
            Field::Expose => layer.expose = None,
            Field::Volume => layer.volume = None,
            Field::Stop => layer.stop = None,
            Field::Workdir => layer.workdir = None,
            Field::User => layer.user = None,
        },
        Op::EnvAll(env) => layer.env = env.iter().map(|(k, val)| (k.clone(), r(val))).collect(),
        Op::EnvSet(k, val) => {
            let val = r(val);
            match layer.env.iter_mut().find(|(a, _)| a == k) {
                Some(slot) => slot.1 = val,
                None => layer.env.push((k.clone(), val)),
            }
        }
        Op::EnvUnset(k) => layer.env.retain(|(a, _)| a != k),
        Op::Prog(p, i) => layer.prog_ops.push(Op::Prog(r(p), i.clone())),
        Op::UnProg(p) => layer.prog_ops.push(Op::UnProg(r(p))),
        Op::Progs(_) => layer.prog_ops.push(op.clone()),
        Op::ClearProgs => layer.prog_ops.clear(),
        Op::File(path, src) => {
            let src = match src {
                FileSrc::Inline(s) => FileSrc::Inline(r(s)),
                FileSrc::Blob(name) => FileSrc::Inline(r(BLOBS.iter().find(|(n, _)| n == name).map(|(_, d)| *d).unwrap_or_default())),
            };
            layer.files_ops.push(Op::File(r(path), src));
        }
        Op::Mode(..) | Op::UnFile(_) => layer.files_ops.push(op.clone()),
        Op::Size(a, b) => layer.size = Some((*a, *b)),
        Op::Layer(a, b) => layer.layer = Some((*a, *b)),
        Op::Note(n) => layer.notes.push(r(n)),
        Op::Generic => layer.generic = true,
    }
}

/// Folds a build's layer: its group's runs up to the one covering the version, then the rules.
pub(crate) fn layer(repo: &Repo, c: &Concrete) -> Layer {
    let mut l = Layer::default();
    let mut found: Option<(&crate::catalogue::Group, Vec<(String, String)>)> =
        repo.groups.iter().find(|g| g.patterns.contains(&c.pattern)).map(|g| (g, Vec::new()));
    if found.is_none() {
        for (p, subs) in unpin(&c.pattern) {
            if let Some(g) = repo.groups.iter().find(|g| g.patterns.contains(&p)) {
                found = Some((g, subs));
                break;
            }
        }
    }
    if found.is_none() {
        found = repo.groups.first().map(|g| (g, Vec::new()));
    }
    if let Some((group, subs)) = found {
        let v = c.version.as_str();
        let target = group
            .runs
            .iter()
            .position(|r| repo.sel_covers(&r.sel, v))
            .or_else(|| group.runs.iter().rposition(|r| repo.sel_starts_at_or_before(&r.sel, v)))
            .unwrap_or(0);
        for run in group.runs.iter().take(target + 1) {
            for op in &run.ops {
                apply(&mut l, op, v);
            }
        }
        if !subs.is_empty() {
            if let Some(f) = &l.from {
                l.from = Some(rebase_from(f, &subs));
            }
        }
    }
    let tag = c.tag();
    for rule in &repo.rules {
        if rule.globs.iter().any(|g| glob(g, &c.pattern) || glob(g, &tag)) && repo.sel_covers(&rule.sel, &c.version) {
            for op in &rule.ops {
                apply(&mut l, op, &c.version);
            }
        }
    }
    l
}

/// `*` matches any run of characters.
pub(crate) fn glob(pattern: &str, s: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == s;
    }
    let mut rest = s;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(pos) => rest = &rest[pos + part.len()..],
                None => return false,
            }
        }
    }
    true
}

/// An image assembled from its layers.
#[derive(Debug, Default, Clone)]
pub(crate) struct Built {
    pub config: ImageConfig,
    pub os: Option<OsInfo>,
    pub programs: BTreeMap<String, String>,
    pub files: BTreeMap<String, ImageFile>,
    pub size: (u64, u64),
    pub size_estimated: bool,
    pub notes: Vec<String>,
    pub generic: bool,
    /// The chain of images this one is built on, nearest first.
    pub bases: Vec<String>,
}

/// Expands `$VAR` and `${VAR}` against the environment built so far, as Dockerfile ENV does.
pub(crate) fn expand(s: &str, env: &[(String, String)]) -> String {
    if !s.contains('$') {
        return s.to_string();
    }
    let b = s.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() && b[i + 1] == b'$' {
            out.push('$');
            i += 2;
            continue;
        }
        if b[i] == b'$' && i + 1 < b.len() {
            let (name, next) = if b[i + 1] == b'{' {
                match s[i + 2..].find('}') {
                    Some(e) => (&s[i + 2..i + 2 + e], i + 3 + e),
                    None => ("", i + 1),
                }
            } else {
                let e = s[i + 1..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map(|e| i + 1 + e).unwrap_or(s.len());
                (&s[i + 1..e], e)
            };
            if !name.is_empty() {
                let name = name.split(":-").next().unwrap_or(name);
                if let Some((_, v)) = env.iter().rev().find(|(k, _)| k == name) {
                    out.push_str(v);
                }
                i = next;
                continue;
            }
        }
        let ch = s[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// Builds the image a repository's concrete build names, resolving `from` recursively.
pub(crate) fn build(cat: &Catalogue, repo: &Repo, c: &Concrete, depth: usize) -> Built {
    let l = layer(repo, c);
    let mut base = Built::default();
    if let Some(from) = l.from.as_deref().filter(|f| *f != "scratch") {
        let mut found = false;
        if depth < 12 {
            if let Ok(r) = crate::parse_reference(from) {
                let tag = r.tag().unwrap_or(crate::reference::DEFAULT_TAG).to_string();
                if let Some(brepo) = cat.repo(&r.name()) {
                    // A coarse release-line config can name a variant a patch never had
                    // (`node:6.10.3-stretch`): fall back to the plain version of that build.
                    let plain = split_tag(&tag).map(|(v, _)| v);
                    if let Some(bc) = concrete(brepo, &tag).or_else(|| plain.and_then(|v| concrete(brepo, &v))) {
                        base = build(cat, brepo, &bc, depth + 1);
                        base.bases.insert(0, format!("{}:{}", r.name(), bc.tag()));
                        found = true;
                    }
                }
            }
        }
        if !found {
            base.notes.push(format!("base image {from} is not in the catalogue; its contents are not modelled"));
            base.size_estimated = true;
        }
    }
    let mut out = base;
    // OS
    if let Some(os_id) = &l.os {
        if let Some(b) = cat.bases.get(os_id) {
            out.os = Some(OsInfo {
                id: b.id.clone(),
                flavour: b.flavour.clone(),
                name: render(&b.name, &c.version),
                version: render(&b.version, &c.version),
                codename: b.codename.clone(),
                libc: b.libc.clone(),
                merged_usr: b.usrmerge,
            });
            let mut bl = Layer::default();
            for op in &b.ops {
                apply(&mut bl, op, &c.version);
            }
            apply_programs(cat, &mut out.programs, &bl.prog_ops);
            apply_files(&mut out.files, &bl.files_ops);
        }
    }
    apply_programs(cat, &mut out.programs, &l.prog_ops);
    apply_files(&mut out.files, &l.files_ops);
    // config merge (docker build semantics)
    let cfg = &mut out.config;
    let mut env: Vec<(String, String)> =
        cfg.env.iter().map(|kv| kv.split_once('=').map(|(a, b)| (a.to_string(), b.to_string())).unwrap_or((kv.clone(), String::new()))).collect();
    for (k, v) in &l.env {
        let v = expand(v, &env);
        match env.iter_mut().find(|(a, _)| a == k) {
            Some(slot) => slot.1 = v,
            None => env.push((k.clone(), v)),
        }
    }
    cfg.env = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if let Some(e) = &l.entrypoint {
        cfg.entrypoint = e.clone();
    }
    if let Some(cmd) = &l.cmd {
        cfg.cmd = cmd.clone();
    }
    if let Some(ports) = &l.expose {
        for p in ports {
            let p = if p.contains('/') { p.clone() } else { format!("{p}/tcp") };
            if !cfg.exposed_ports.contains(&p) {
                cfg.exposed_ports.push(p);
            }
        }
    }
    if let Some(vols) = &l.volume {
        for v in vols {
            let v = expand(v, &env);
            if !cfg.volumes.contains(&v) {
                cfg.volumes.push(v);
            }
        }
    }
    if let Some(w) = &l.workdir {
        let w = expand(w, &env);
        cfg.working_dir = if w.starts_with('/') || cfg.working_dir.is_empty() { w } else { format!("{}/{w}", cfg.working_dir.trim_end_matches('/')) };
    }
    if let Some(u) = &l.user {
        cfg.user = u.clone();
    }
    if let Some(s) = &l.stop {
        cfg.stop_signal = Some(s.clone());
    }
    // size
    match (l.size, l.layer) {
        (Some(s), _) => {
            out.size = s;
            out.size_estimated = false;
        }
        (None, Some((a, b))) => {
            out.size = (out.size.0 + a, out.size.1 + b);
            out.size_estimated = true;
        }
        (None, None) => {
            if out.size == (0, 0) {
                out.size_estimated = true;
            }
        }
    }
    out.notes.extend(l.notes);
    out.generic |= l.generic;
    out
}

fn apply_programs(cat: &Catalogue, progs: &mut BTreeMap<String, String>, ops: &[Op]) {
    for op in ops {
        match op {
            Op::Progs(sets) => {
                for s in sets {
                    cat.expand_progset(s, progs, 0);
                }
            }
            Op::Prog(p, i) => {
                progs.insert(p.clone(), i.clone());
            }
            Op::UnProg(p) => {
                progs.remove(p);
            }
            _ => {}
        }
    }
}

fn apply_files(files: &mut BTreeMap<String, ImageFile>, ops: &[Op]) {
    for op in ops {
        match op {
            Op::File(path, src) => {
                let data = match src {
                    FileSrc::Inline(s) => s.clone(),
                    FileSrc::Blob(name) => BLOBS.iter().find(|(n, _)| n == name).map(|(_, d)| d.to_string()).unwrap_or_default(),
                };
                let mode = files.get(path).map(|f| f.mode).unwrap_or(0o644);
                files.insert(path.clone(), ImageFile { mode, data });
            }
            Op::Mode(path, m) => {
                if let Some(f) = files.get_mut(path) {
                    f.mode = *m;
                }
            }
            Op::UnFile(path) => {
                files.remove(path);
            }
            _ => {}
        }
    }
}

/// Sorts tags for display: versions descending, words first.
pub(crate) fn sort_tags(tags: &mut [String]) {
    tags.sort_by(|a, b| match (split_tag(a), split_tag(b)) {
        (None, None) => a.cmp(b),
        (None, Some(_)) => std::cmp::Ordering::Less,
        (Some(_), None) => std::cmp::Ordering::Greater,
        (Some((va, pa)), Some((vb, pb))) => cmp_version(&vb, &va).then(pa.cmp(&pb)),
    });
}
