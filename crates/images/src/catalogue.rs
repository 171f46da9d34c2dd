//! The catalogue's data model and the parser of its text format (see `data/README` in the crate
//! README for the format). The data is embedded with `include_str!` and parsed once, lazily.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// The embedded data files, in load order (later blocks for the same repository extend earlier ones).
const SOURCES: &[(&str, &str)] = &[
    ("official.txt", include_str!("../data/official.txt")),
    ("catalogue.txt", include_str!("../data/catalogue.txt")),
    ("programs.txt", include_str!("../data/programs.txt")),
];

/// Notable file contents, referenced from the data as `@name`.
pub(crate) const BLOBS: &[(&str, &str)] = crate::blobs::BLOBS;

pub(crate) fn catalogue() -> &'static Catalogue {
    static CATALOGUE: OnceLock<Catalogue> = OnceLock::new();
    CATALOGUE.get_or_init(|| match Catalogue::parse(SOURCES) {
        Ok(c) => c,
        Err(e) => panic!("kubesim-images: bad embedded catalogue: {e}"),
    })
}

#[derive(Debug, Default)]
pub(crate) struct Catalogue {
    pub snapshot: String,
    pub repos: Vec<Repo>,
    pub by_name: BTreeMap<String, usize>,
    pub bases: BTreeMap<String, Base>,
    pub progsets: BTreeMap<String, Vec<ProgOp>>,
}

#[derive(Debug, Default)]
pub(crate) struct Repo {
    pub name: String,
    pub summary: String,
    pub source: Vec<String>,
    pub notes: Vec<String>,
    pub hidden: bool,
    /// Another repository this name redirects to (`k8s.gcr.io/pause` → `registry.k8s.io/pause`).
    pub same: Option<String>,
    /// Full versions, sorted.
    pub versions: Vec<String>,
    pub version_index: BTreeMap<String, usize>,
    pub tag_lines: Vec<TagLine>,
    /// Tags that are their own build (no version in them): `v13`, `edge`, `sid`.
    pub words: BTreeSet<String>,
    /// Floating word tags and the full version they point at (`latest` → `1.29.1`).
    pub alias: BTreeMap<String, String>,
    /// Word tags whose build the shortest-prefix rule does not find.
    pub word_exc: BTreeMap<String, String>,
    /// Partial version tags that do not point at the highest matching version.
    pub partial_exc: BTreeMap<String, String>,
    pub groups: Vec<Group>,
    pub rules: Vec<Rule>,
    pub digests: BTreeMap<String, DigestEntry>,
}

#[derive(Debug, Default, Clone)]
pub(crate) struct DigestEntry {
    pub index: Option<String>,
    pub id: Option<String>,
    pub size: Option<(u64, u64)>,
    pub note: Option<String>,
}

#[derive(Debug, Default)]
pub(crate) struct TagLine {
    pub patterns: Vec<String>,
    pub items: Vec<Sel>,
    pub plus: Vec<String>,
    pub minus: Vec<String>,
}

#[derive(Debug, Default)]
pub(crate) struct Group {
    pub patterns: Vec<String>,
    pub runs: Vec<Run>,
}

#[derive(Debug)]
pub(crate) struct Run {
    pub sel: Sel,
    pub ops: Vec<Op>,
}

#[derive(Debug)]
pub(crate) struct Rule {
    pub globs: Vec<String>,
    pub sel: Sel,
    pub ops: Vec<Op>,
}

/// Which versions a run, rule or tag line covers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Sel {
    All,
    Exact(String),
    /// Inclusive; an open end is unbounded.
    Span(Option<String>, Option<String>),
}

#[derive(Debug, Default, Clone)]
pub(crate) struct Base {
    pub id: String,
    pub flavour: String,
    pub name: String,
    pub version: String,
    pub codename: String,
    pub libc: String,
    pub usrmerge: bool,
    pub ops: Vec<Op>,
}

#[derive(Debug, Clone)]
pub(crate) enum ProgOp {
    Add(String, String),
    Remove(String),
    Include(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    From,
    Entrypoint,
    Cmd,
    Expose,
    Volume,
    Stop,
    Workdir,
    User,
    Os,
}

#[derive(Debug, Clone)]
pub(crate) enum Op {
    Set(Field, Val),
    Unset(Field),
    EnvAll(Vec<(String, String)>),
    EnvSet(String, String),
    EnvUnset(String),
    Progs(Vec<String>),
    Prog(String, String),
    UnProg(String),
    File(String, FileSrc),
    Mode(String, u32),
    UnFile(String),
    Size(u64, u64),
    Layer(u64, u64),
    Note(String),
    Generic,
    ClearProgs,
}

#[derive(Debug, Clone)]
pub(crate) enum Val {
    Str(String),
    List(Vec<String>),
}

#[derive(Debug, Clone)]
pub(crate) enum FileSrc {
    Blob(String),
    Inline(String),
}

/// Compares versions component-wise, numerically where both components are numbers.
pub(crate) fn cmp_version(a: &str, b: &str) -> Ordering {
    let mut ai = a.split('.');
    let mut bi = b.split('.');
    loop {
        match (ai.next(), bi.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let o = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(p), Ok(q)) => p.cmp(&q),
                    _ => x.cmp(y),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
    }
}

/// True for a dotted numeric version (`1.14.2`, `24.04`).
pub(crate) fn is_version(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Splits a tag into (version, pattern) the way the generator does:
/// `^((?:[a-z]+-)*)(\d+(?:\.\d+)*)((?:-.+)?)$` → (`1.14.2`, `@-alpine`) for `1.14.2-alpine`,
/// (`2.8`, `cli-@-php8.1`) for `cli-2.8-php8.1`, (`5.0.1`, `v@`) for `v5.0.1`. Tags without a version give `None`.
pub(crate) fn split_tag(tag: &str) -> Option<(String, String)> {
    let b = tag.as_bytes();
    let mut i = 0;
    // greedy (?:[a-z]+-)*
    loop {
        let mut j = i;
        while j < b.len() && b[j].is_ascii_lowercase() {
            j += 1;
        }
        if j > i && j < b.len() && b[j] == b'-' {
            i = j + 1;
        } else {
            break;
        }
    }
    // a `v` directly before the version (`v5.0.1`, `v1.4`) belongs to the pattern
    if i + 1 < b.len() && b[i] == b'v' && b[i + 1].is_ascii_digit() {
        i += 1;
    }
    let prefix = &tag[..i];
    let start = i;
    let mut j = i;
    let mut end = None;
    loop {
        let d0 = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j == d0 {
            break;
        }
        end = Some(j);
        if j < b.len() && b[j] == b'.' && j + 1 < b.len() && b[j + 1].is_ascii_digit() {
            j += 1;
        } else {
            break;
        }
    }
    let end = end?;
    let rest = &tag[end..];
    if !(rest.is_empty() || (rest.starts_with('-') && rest.len() > 1)) {
        return None;
    }
    Some((tag[start..end].to_string(), format!("{prefix}@{rest}")))
}

/// Expands a version-set item, brace-expansion style: `1.7.{1,5..12}`, `{5,7..8}`, `13.{10,04}`,
/// `2.{5..9}.{0..2}` (every combination), `2.6`.
fn expand_vset_item(item: &str) -> Result<Vec<String>, String> {
    let Some(open) = item.find('{') else { return Ok(vec![item.to_string()]) };
    let close = item[open..].find('}').map(|i| open + i).ok_or_else(|| format!("bad version set item {item:?}"))?;
    let (prefix, inner, rest) = (&item[..open], &item[open + 1..close], &item[close + 1..]);
    let tails = expand_vset_item(rest)?;
    let mut out = Vec::new();
    for part in inner.split(',') {
        let heads: Vec<String> = if let Some((a, b)) = part.split_once("..") {
            let (a, b): (u64, u64) = (a.parse().map_err(|_| format!("bad range {part:?}"))?, b.parse().map_err(|_| format!("bad range {part:?}"))?);
            (a..=b).map(|n| n.to_string()).collect()
        } else {
            vec![part.to_string()]
        };
        for h in heads {
            for t in &tails {
                out.push(format!("{prefix}{h}{t}"));
            }
        }
    }
    Ok(out)
}

fn parse_sel(s: &str) -> Sel {
    if s == "*" {
        return Sel::All;
    }
    match s.split_once("..") {
        Some((a, b)) => Sel::Span((!a.is_empty()).then(|| a.to_string()), (!b.is_empty()).then(|| b.to_string())),
        None => Sel::Exact(s.to_string()),
    }
}

/// Splits a line into tokens; `key=value` values may be JSON strings or arrays containing spaces.
fn tokenize(line: &str) -> Result<Vec<String>, String> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && b[i] == b' ' {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let start = i;
        let mut depth = 0i32;
        let mut in_str = false;
        while i < b.len() {
            let c = b[i];
            if in_str {
                if c == b'\\' {
                    i += 1;
                } else if c == b'"' {
                    in_str = false;
                }
            } else if c == b'"' {
                in_str = true;
            } else if c == b'[' {
                depth += 1;
            } else if c == b']' {
                depth -= 1;
            } else if c == b' ' && depth == 0 {
                break;
            }
            i += 1;
        }
        if in_str || depth != 0 {
            return Err(format!("unbalanced quotes or brackets in {line:?}"));
        }
        out.push(line[start..i].to_string());
    }
    Ok(out)
}

fn json_str(v: &str) -> Result<String, String> {
    if v.starts_with('"') {
        serde_json::from_str::<String>(v).map_err(|e| format!("bad JSON string {v}: {e}"))
    } else {
        Ok(v.to_string())
    }
}

fn json_list(v: &str) -> Result<Vec<String>, String> {
    serde_json::from_str::<Vec<String>>(v).map_err(|e| format!("bad JSON list {v}: {e}"))
}

fn size_pair(v: &str) -> Result<(u64, u64), String> {
    let (a, b) = v.split_once('/').unwrap_or((v, "0"));
    let n = |s: &str| s.replace('_', "").parse::<u64>().map_err(|_| format!("bad size {v:?}"));
    Ok((n(a)?, n(b)?))
}

fn parse_op(tok: &str) -> Result<Op, String> {
    let field = |k: &str| -> Option<Field> {
        Some(match k {
            "from" => Field::From,
            "entrypoint" => Field::Entrypoint,
            "cmd" => Field::Cmd,
            "expose" => Field::Expose,
            "volume" => Field::Volume,
            "stop" => Field::Stop,
            "workdir" => Field::Workdir,
            "user" => Field::User,
            "os" => Field::Os,
            _ => return None,
        })
    };
    if tok == "generic" {
        return Ok(Op::Generic);
    }
    if tok == "-progs" {
        return Ok(Op::ClearProgs);
    }
    if let Some(k) = tok.strip_prefix('-') {
        if let Some(f) = field(k) {
            return Ok(Op::Unset(f));
        }
        if let Some(name) = k.strip_prefix("env.") {
            return Ok(Op::EnvUnset(name.to_string()));
        }
        if let Some(path) = k.strip_prefix("prog.") {
            return Ok(Op::UnProg(path.to_string()));
        }
        if let Some(path) = k.strip_prefix("file.") {
            return Ok(Op::UnFile(path.to_string()));
        }
        return Err(format!("unknown removal {tok:?}"));
    }
    let (k, v) = tok.split_once('=').ok_or_else(|| format!("expected key=value, got {tok:?}"))?;
    if let Some(f) = field(k) {
        return Ok(match f {
            Field::Entrypoint | Field::Cmd | Field::Volume => Op::Set(f, Val::List(json_list(v)?)),
            Field::Expose => Op::Set(f, Val::List(v.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect())),
            _ => Op::Set(f, Val::Str(json_str(v)?)),
        });
    }
    if k == "env" {
        let mut env = Vec::new();
        for kv in json_list(v)? {
            let (a, b) = kv.split_once('=').unwrap_or((kv.as_str(), ""));
            env.push((a.to_string(), b.to_string()));
        }
        return Ok(Op::EnvAll(env));
    }
    if let Some(name) = k.strip_prefix("env.") {
        return Ok(Op::EnvSet(name.to_string(), json_str(v)?));
    }
    if let Some(path) = k.strip_prefix("prog.") {
        return Ok(Op::Prog(path.to_string(), v.to_string()));
    }
    if let Some(path) = k.strip_prefix("file.") {
        let src = match v.strip_prefix('@') {
            Some(name) => FileSrc::Blob(name.to_string()),
            None => FileSrc::Inline(json_str(v)?),
        };
        return Ok(Op::File(path.to_string(), src));
    }
    if let Some(path) = k.strip_prefix("mode.") {
        return Ok(Op::Mode(path.to_string(), u32::from_str_radix(v, 8).map_err(|_| format!("bad mode {v:?}"))?));
    }
    match k {
        "progs" => Ok(Op::Progs(v.split(',').map(str::to_string).collect())),
        "size" => size_pair(v).map(|(a, b)| Op::Size(a, b)),
        "layer" => size_pair(v).map(|(a, b)| Op::Layer(a, b)),
        "note" => Ok(Op::Note(json_str(v)?)),
        _ => Err(format!("unknown key {k:?} in {tok:?}")),
    }
}

fn parse_ops(tokens: &[String]) -> Result<Vec<Op>, String> {
    tokens.iter().map(|t| parse_op(t)).collect()
}

enum Block {
    None,
    Repo(usize),
    Base(String),
    Progset(String),
}

impl Catalogue {
    pub(crate) fn parse(sources: &[(&str, &str)]) -> Result<Catalogue, String> {
        let mut cat = Catalogue::default();
        let mut pending_versions: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        for (file, text) in sources {
            let mut block = Block::None;
            for (n, raw) in text.lines().enumerate() {
                let at = |e: String| format!("{file}:{}: {e}", n + 1);
                let line = raw.trim_end();
                if line.trim_start().starts_with('#') || line.trim().is_empty() {
                    continue;
                }
                let indent = line.len() - line.trim_start().len();
                let body = line.trim_start();
                let (kw, rest) = body.split_once(' ').unwrap_or((body, ""));
                if indent == 0 {
                    block = match kw {
                        "snapshot" => {
                            cat.snapshot = rest.to_string();
                            Block::None
                        }
                        "repo" => {
                            let idx = match cat.by_name.get(rest) {
                                Some(&i) => i,
                                None => {
                                    cat.repos.push(Repo { name: rest.to_string(), ..Repo::default() });
                                    cat.by_name.insert(rest.to_string(), cat.repos.len() - 1);
                                    cat.repos.len() - 1
                                }
                            };
                            Block::Repo(idx)
                        }
                        "base" => {
                            cat.bases.insert(rest.to_string(), Base { id: rest.to_string(), ..Base::default() });
                            Block::Base(rest.to_string())
                        }
                        "progset" => {
                            cat.progsets.entry(rest.to_string()).or_default();
                            Block::Progset(rest.to_string())
                        }
                        _ => return Err(at(format!("unknown block {kw:?}"))),
                    };
                    continue;
                }
                match &block {
                    Block::None => return Err(at("indented line outside a block".into())),
                    Block::Progset(name) => {
                        let set = cat.progsets.get_mut(name).expect("progset exists");
                        let toks: Vec<&str> = body.split_whitespace().collect();
                        match toks.as_slice() {
                            ["include", names @ ..] => set.extend(names.iter().map(|s| ProgOp::Include(s.to_string()))),
                            ["remove", paths @ ..] => set.extend(paths.iter().map(|s| ProgOp::Remove(s.to_string()))),
                            [imp, dir, names @ ..] if dir.starts_with('/') && !names.is_empty() => {
                                for name in names {
                                    let path = if dir.ends_with('/') { format!("{dir}{name}") } else { format!("{dir}/{name}") };
                                    set.push(ProgOp::Add(path, imp.to_string()));
                                }
                            }
                            _ => return Err(at(format!("bad progset line {body:?}"))),
                        }
                    }
                    Block::Base(id) => {
                        let base = cat.bases.get_mut(id).expect("base exists");
                        match kw {
                            "flavour" => base.flavour = rest.to_string(),
                            "name" => base.name = rest.to_string(),
                            "version" => base.version = rest.to_string(),
                            "codename" => base.codename = rest.to_string(),
                            "libc" => base.libc = rest.to_string(),
                            "usrmerge" => base.usrmerge = true,
                            "set" => base.ops.extend(parse_ops(&tokenize(rest).map_err(at)?).map_err(at)?),
                            _ => return Err(at(format!("unknown base key {kw:?}"))),
                        }
                    }
                    Block::Repo(idx) => {
                        let idx = *idx;
                        let repo = &mut cat.repos[idx];
                        if indent >= 4 {
                            if kw != "run" {
                                return Err(at(format!("expected run, got {kw:?}")));
                            }
                            let toks = tokenize(rest).map_err(at)?;
                            let (sel, ops) = toks.split_first().ok_or_else(|| at("run without a version".into()))?;
                            let ops = parse_ops(ops).map_err(at)?;
                            let group = repo.groups.last_mut().ok_or_else(|| at("run outside a group".into()))?;
                            group.runs.push(Run { sel: parse_sel(sel), ops });
                            continue;
                        }
                        match kw {
                            "summary" => repo.summary = rest.to_string(),
                            "source" => repo.source.push(rest.to_string()),
                            "note" => repo.notes.push(rest.to_string()),
                            "hidden" => repo.hidden = true,
                            "same" => repo.same = Some(rest.to_string()),
                            "versions" => {
                                let set = pending_versions.entry(idx).or_default();
                                for item in rest.split_whitespace() {
                                    set.extend(expand_vset_item(item).map_err(at)?);
                                }
                            }
                            "tags" => {
                                let (pats, items) = rest.split_once(" : ").ok_or_else(|| at("tags line without ' : '".into()))?;
                                let mut tl = TagLine { patterns: pats.split_whitespace().map(str::to_string).collect(), ..TagLine::default() };
                                for item in items.split_whitespace() {
                                    if let Some(p) = item.strip_prefix('+') {
                                        tl.plus.push(p.to_string());
                                    } else if let Some(m) = item.strip_prefix('-') {
                                        tl.minus.push(m.to_string());
                                    } else {
                                        tl.items.push(parse_sel(item));
                                    }
                                }
                                repo.tag_lines.push(tl);
                            }
                            "alias" => {
                                let mut it = rest.split_whitespace();
                                let v = it.next().ok_or_else(|| at("alias without version".into()))?.to_string();
                                for w in it {
                                    repo.alias.insert(w.to_string(), v.clone());
                                }
                            }
                            "words" => repo.words.extend(rest.split_whitespace().map(str::to_string)),
                            "word" | "partial" => {
                                for kv in rest.split_whitespace() {
                                    let (a, b) = kv.split_once('=').ok_or_else(|| at(format!("expected tag=tag, got {kv:?}")))?;
                                    let map = if kw == "word" { &mut repo.word_exc } else { &mut repo.partial_exc };
                                    map.insert(a.to_string(), b.to_string());
                                }
                            }
                            "group" => repo.groups.push(Group { patterns: rest.split_whitespace().map(str::to_string).collect(), runs: Vec::new() }),
                            "rule" => {
                                let toks = tokenize(rest).map_err(at)?;
                                if toks.len() < 2 {
                                    return Err(at("rule needs patterns and versions".into()));
                                }
                                let globs = toks[0].split(',').map(str::to_string).collect();
                                let ops = parse_ops(&toks[2..]).map_err(at)?;
                                repo.rules.push(Rule { globs, sel: parse_sel(&toks[1]), ops });
                            }
                            "digest" => {
                                let toks = tokenize(rest).map_err(at)?;
                                let (tag, more) = toks.split_first().ok_or_else(|| at("digest without tag".into()))?;
                                let mut e = repo.digests.get(tag.as_str()).cloned().unwrap_or_default();
                                for t in more {
                                    if let Some(d) = t.strip_prefix("id=") {
                                        e.id = Some(d.to_string());
                                    } else if let Some(s) = t.strip_prefix("size=") {
                                        e.size = Some(size_pair(s).map_err(at)?);
                                    } else if let Some(s) = t.strip_prefix("note=") {
                                        e.note = Some(json_str(s).map_err(at)?);
                                    } else if t.starts_with("sha256:") {
                                        e.index = Some(t.to_string());
                                    } else {
                                        return Err(at(format!("bad digest field {t:?}")));
                                    }
                                }
                                repo.digests.insert(tag.to_string(), e);
                            }
                            _ => return Err(at(format!("unknown repo key {kw:?}"))),
                        }
                    }
                }
            }
        }
        for (idx, set) in pending_versions {
            let repo = &mut cat.repos[idx];
            let mut all: Vec<String> = repo.versions.drain(..).chain(set).collect::<BTreeSet<_>>().into_iter().collect();
            all.sort_by(|a, b| cmp_version(a, b));
            repo.version_index = all.iter().enumerate().map(|(i, v)| (v.clone(), i)).collect();
            repo.versions = all;
        }
        cat.check()?;
        Ok(cat)
    }

    /// Cross-reference checks: progsets, bases and blobs named in the data exist.
    fn check(&self) -> Result<(), String> {
        let blob = |name: &str| BLOBS.iter().any(|(n, _)| *n == name);
        let check_ops = |ops: &[Op], ctx: &str| -> Result<(), String> {
            for op in ops {
                match op {
                    Op::Progs(sets) => {
                        for s in sets {
                            if !self.progsets.contains_key(s) {
                                return Err(format!("{ctx}: unknown progset {s:?}"));
                            }
                        }
                    }
                    Op::File(_, FileSrc::Blob(b)) if !blob(b) => return Err(format!("{ctx}: unknown file blob @{b}")),
                    Op::Set(Field::Os, Val::Str(b)) if !self.bases.contains_key(b) => return Err(format!("{ctx}: unknown base {b:?}")),
                    _ => {}
                }
            }
            Ok(())
        };
        for (name, ops) in &self.progsets {
            for op in ops {
                if let ProgOp::Include(s) = op {
                    if !self.progsets.contains_key(s) {
                        return Err(format!("progset {name}: unknown include {s:?}"));
                    }
                }
            }
        }
        for base in self.bases.values() {
            check_ops(&base.ops, &format!("base {}", base.id))?;
        }
        for repo in &self.repos {
            if let Some(t) = &repo.same {
                if !self.by_name.contains_key(t) {
                    return Err(format!("repo {}: same {t:?} is not a repository", repo.name));
                }
            }
            for g in &repo.groups {
                for r in &g.runs {
                    check_ops(&r.ops, &format!("repo {}", repo.name))?;
                }
            }
            for r in &repo.rules {
                check_ops(&r.ops, &format!("repo {} rule", repo.name))?;
            }
        }
        Ok(())
    }

    /// A repository by name, following `same` redirects.
    pub(crate) fn repo(&self, name: &str) -> Option<&Repo> {
        let mut repo = self.by_name.get(name).map(|&i| &self.repos[i])?;
        for _ in 0..4 {
            match &repo.same {
                Some(target) => repo = self.by_name.get(target.as_str()).map(|&i| &self.repos[i])?,
                None => break,
            }
        }
        Some(repo)
    }

    /// The program map of a progset, includes expanded.
    pub(crate) fn expand_progset(&self, name: &str, out: &mut BTreeMap<String, String>, depth: usize) {
        let Some(ops) = self.progsets.get(name) else { return };
        if depth > 16 {
            return;
        }
        for op in ops {
            match op {
                ProgOp::Add(p, i) => {
                    out.insert(p.clone(), i.clone());
                }
                ProgOp::Remove(p) => {
                    out.remove(p);
                }
                ProgOp::Include(s) => self.expand_progset(s, out, depth + 1),
            }
        }
    }
}

impl Repo {
    pub(crate) fn is_full_version(&self, v: &str) -> bool {
        self.version_index.contains_key(v)
    }

    /// Whether `sel` covers `v` (a full version of this repository, or a word build).
    pub(crate) fn sel_covers(&self, sel: &Sel, v: &str) -> bool {
        match sel {
            Sel::All => true,
            Sel::Exact(x) => x == v,
            Sel::Span(a, b) => {
                if !is_version(v) {
                    return false;
                }
                let ge = a.as_ref().is_none_or(|a| self.cmp(v, a) != Ordering::Less);
                let le = b.as_ref().is_none_or(|b| self.cmp(v, b) != Ordering::Greater);
                ge && le
            }
        }
    }

    fn cmp(&self, a: &str, b: &str) -> Ordering {
        match (self.version_index.get(a), self.version_index.get(b)) {
            (Some(x), Some(y)) => x.cmp(y),
            _ => cmp_version(a, b),
        }
    }

    /// The start of a selection, for "the last run that starts at or before v".
    pub(crate) fn sel_starts_at_or_before(&self, sel: &Sel, v: &str) -> bool {
        match sel {
            Sel::All => true,
            Sel::Exact(x) => is_version(x) && is_version(v) && self.cmp(x, v) != Ordering::Greater,
            Sel::Span(a, _) => a.as_ref().is_none_or(|a| is_version(v) && self.cmp(a, v) != Ordering::Greater),
        }
    }

    /// Full versions a tag line lists for its patterns.
    fn line_full_versions<'a>(&'a self, line: &'a TagLine) -> impl Iterator<Item = &'a String> + 'a {
        self.versions.iter().filter(move |v| line.items.iter().any(|sel| self.sel_covers(sel, v)))
    }

    /// Whether the tag `pattern` with `version` substituted exists.
    pub(crate) fn tag_exists(&self, version: &str, pattern: &str) -> bool {
        for line in self.tag_lines.iter().filter(|l| l.patterns.iter().any(|p| p == pattern)) {
            if line.plus.iter().any(|p| p == version) {
                return true;
            }
            if line.minus.iter().any(|m| m == version) {
                return false;
            }
            if self.is_full_version(version) {
                if line.items.iter().any(|sel| self.sel_covers(sel, version)) {
                    return true;
                }
            } else {
                let prefix = format!("{version}.");
                if self.line_full_versions(line).any(|v| v.starts_with(&prefix)) {
                    return true;
                }
            }
        }
        false
    }

    /// The highest full version of `pattern` that starts with `partial.`.
    pub(crate) fn highest_with_prefix(&self, partial: &str, pattern: &str) -> Option<String> {
        let prefix = format!("{partial}.");
        self.versions.iter().rev().find(|v| v.starts_with(&prefix) && self.tag_exists(v, pattern)).cloned()
    }

    /// Every tag of the repository, expanded (thousands for the big official images).
    pub(crate) fn all_tags(&self) -> Vec<String> {
        let mut out: BTreeSet<String> = BTreeSet::new();
        for line in &self.tag_lines {
            let fulls: Vec<&String> = self.line_full_versions(line).collect();
            let mut partials: BTreeSet<String> = BTreeSet::new();
            for v in &fulls {
                let parts: Vec<&str> = v.split('.').collect();
                for k in 1..parts.len() {
                    partials.insert(parts[..k].join("."));
                }
            }
            for m in &line.minus {
                partials.remove(m);
            }
            partials.extend(line.plus.iter().cloned());
            for p in &line.patterns {
                for v in fulls.iter().map(|s| s.as_str()).chain(partials.iter().map(|s| s.as_str())) {
                    out.insert(p.replace('@', v));
                }
            }
        }
        out.extend(self.words.iter().cloned());
        out.extend(self.alias.keys().cloned());
        out.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_data_file_is_embedded() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data/files");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        on_disk.sort();
        let mut embedded: Vec<String> = BLOBS.iter().map(|(n, _)| n.to_string()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded, "src/blobs.rs must list every file under data/files");
    }

    #[test]
    fn data_parses_and_cross_references_resolve() {
        let cat = Catalogue::parse(SOURCES).unwrap();
        assert_eq!(cat.snapshot, "2025-08-27");
        assert!(cat.repos.len() > 60);
    }

    #[test]
    fn tag_splitting() {
        let s = |t: &str| split_tag(t).map(|(v, p)| format!("{v} {p}"));
        assert_eq!(s("1.14.2").as_deref(), Some("1.14.2 @"));
        assert_eq!(s("1.28.0-alpine3.21-perl").as_deref(), Some("1.28.0 @-alpine3.21-perl"));
        assert_eq!(s("cli-2.8-php8.1").as_deref(), Some("2.8 cli-@-php8.1"));
        assert_eq!(s("v5.0.1").as_deref(), Some("5.0.1 v@"));
        assert_eq!(s("1.0-3.4.10").as_deref(), Some("1.0 @-3.4.10"));
        assert_eq!(s("latest"), None);
        assert_eq!(s("stable-alpine"), None);
        assert_eq!(s("3.14.0rc2"), None);
    }

    #[test]
    fn version_sets() {
        assert_eq!(expand_vset_item("1.7.{1,5..7}").unwrap(), ["1.7.1", "1.7.5", "1.7.6", "1.7.7"]);
        assert_eq!(expand_vset_item("2.{5..6}.{0..1}").unwrap(), ["2.5.0", "2.5.1", "2.6.0", "2.6.1"]);
        assert_eq!(expand_vset_item("13.{10,04}").unwrap(), ["13.10", "13.04"]);
        assert_eq!(cmp_version("1.9.15", "1.10.0"), Ordering::Less);
        assert_eq!(cmp_version("13.04", "13.10"), Ordering::Less);
    }
}
