//! The docs suite's harness: the page format, the run of a page's steps on a [`Driver`] (the
//! simulated world itself, or `kubesim serve` with real kubectl in the server crate's
//! `docs_serve` test), the comparison of outputs with what the page shows, and the STATUS
//! report. Included by `tests/docs.rs` and by `crates/server/tests/docs_serve.rs`.
#![allow(dead_code)]

use regex::Regex;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use kubesim_sim::world::CommandRecord;

// ---------------------------------------------------------------------------------------------
// The page format
// ---------------------------------------------------------------------------------------------

/// One documentation page.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Page {
    /// The page's title.
    pub title: String,
    /// Its kubernetes.io address (attribution).
    pub url: String,
    /// Its source in kubernetes/website (attribution).
    pub source: String,
    /// The seed (default 1).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Node objects replacing the default three-node cluster (YAML, applied at t=0 before any
    /// step). Without it: kubesim's default cluster (`node-1`..`node-3`).
    #[serde(default)]
    pub cluster: Option<String>,
    /// Files the steps read (`-f`, `--from-file`), by the exact path the command line uses:
    /// manifests the page inlines, local files the page asks you to create, edited copies, and
    /// `https://k8s.io/examples/...` files missing from the corpus.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Example files the page has you download to a local path ("save it to a file named
    /// web.yaml"): local path → path in the corpus.
    #[serde(default)]
    pub copies: BTreeMap<String, String>,
    /// Node names the page's outputs show, mapped to the kubesim node the page's steps make
    /// them (the node a page labels or taints): replaced in expected outputs and then compared
    /// literally. Every other node name becomes `<node>` on both sides.
    #[serde(default)]
    pub nodes: BTreeMap<String, String>,
    /// Further node names of the page's cluster (besides minikube, kind-*, docker-desktop) that
    /// stand for whichever node kubesim picks: they become `<node>`.
    #[serde(default)]
    pub node_aliases: Vec<String>,
    /// Text replacements applied to every expected output before normalisation, for outputs
    /// that legitimately differ from what this page's own manifests produce (each with a `why`).
    #[serde(default)]
    pub substitute: Vec<Substitution>,
    /// How long the run lasts after the last step (default 1s).
    #[serde(default)]
    pub tail: Option<String>,
    /// The steps, in the order the page gives them (times must not decrease).
    pub steps: Vec<Step>,
    /// `pass` or `fail`: what the suite currently expects of this page.
    pub status: String,
    /// For `fail`: the first divergence and its cause.
    #[serde(default)]
    pub reason: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Substitution {
    pub from: String,
    pub to: String,
    #[allow(dead_code)]
    pub why: String,
}

/// One command the page has you run.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Virtual time since the start (`0s`, `30s`, `2m`, `1m30s`, `500ms`).
    pub at: String,
    /// The command line (`kubectl ...` or a kubesim `fault ...`).
    pub run: String,
    /// The output the page shows (verbatim).
    #[serde(default)]
    pub expect: Option<String>,
    /// tolerant (default) | contains | fragments | lines-contain | lines-unordered | exit-code-only.
    #[serde(default)]
    pub r#match: Option<String>,
    /// The expected exit status (default 0).
    #[serde(default)]
    pub exit: Option<i32>,
    /// Replacements in this step's expected output (after the page's), each with a `why`.
    #[serde(default)]
    pub substitute: Vec<Substitution>,
    /// For "repeat the command until ..." instructions: run the command again every 2 s (virtual)
    /// until its output matches, for at most this long (`2m`). Later steps run no earlier
    /// than the last repetition.
    #[serde(default)]
    pub repeat: Option<String>,
    /// For a command the page runs in a second terminal while the next steps run in the
    /// first (`kubectl get pods -w` left watching): the time it is stopped (Ctrl-C) and its
    /// output compared. Later steps run meanwhile.
    #[serde(default)]
    pub until: Option<String>,
    /// Files the page has you write just before this step (`cat <<EOF >./kustomization.yaml`),
    /// by path; registered for `-f`/`-k` at this step's time (a later step may overwrite them).
    #[serde(default)]
    pub write: BTreeMap<String, String>,
    /// Set when the step cannot be run in kubesim at all (host commands such as `curl`,
    /// `minikube service`, interactive sessions): the reason. The step is counted as skipped.
    #[serde(default)]
    pub skip: Option<String>,
    /// A comment shown in verbose output.
    #[serde(default)]
    #[allow(dead_code)]
    pub note: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Locations
// ---------------------------------------------------------------------------------------------

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn pages_dir() -> PathBuf {
    repo_root().join("tests/docs/pages")
}

/// The example manifests: `KUBESIM_DOCS_CORPUS`, or `shared/corpus/k8s-docs-examples` next to
/// the checkout (`../../../shared` from this crate in /work/main, one more level up in a
/// worktree under /work/wt).
pub fn corpus_dir() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("KUBESIM_DOCS_CORPUS") {
        return Some(PathBuf::from(dir)).filter(|p| p.is_dir());
    }
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    ["../../../shared/corpus/k8s-docs-examples", "../../../../shared/corpus/k8s-docs-examples"].iter().map(|r| base.join(r)).find(|p| p.is_dir())
}

pub const EXAMPLE_PREFIXES: &[&str] =
    &["https://k8s.io/examples/", "https://kubernetes.io/examples/", "https://raw.githubusercontent.com/kubernetes/website/main/content/en/examples/"];

// ---------------------------------------------------------------------------------------------
// Running a page
// ---------------------------------------------------------------------------------------------

pub fn parse_duration(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t == "0" {
        return Ok(0);
    }
    let mut total = 0u64;
    let mut number = String::new();
    let mut chars = t.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let n: u64 = number.parse().map_err(|_| format!("bad duration {text:?}"))?;
        number.clear();
        let unit = match c {
            'h' => 3_600_000,
            'm' if chars.peek() == Some(&'s') => {
                chars.next();
                1
            }
            'm' => 60_000,
            's' => 1_000,
            _ => return Err(format!("bad duration {text:?}")),
        };
        total += n * unit;
        any = true;
    }
    if !number.is_empty() || !any {
        return Err(format!("bad duration {text:?} (units: h, m, s, ms)"));
    }
    Ok(total)
}

/// Shell-style words (single and double quotes), enough to find `-f` arguments.
pub fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            None => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// Paths a command line reads through kubectl's file view.
pub fn file_args(line: &str) -> Vec<String> {
    let w = words(line);
    let mut paths = Vec::new();
    let mut i = 0;
    while i < w.len() {
        let a = &w[i];
        let value = if a == "-f" || a == "--filename" || a == "-k" || a == "--kustomize" {
            i += 1;
            w.get(i).cloned()
        } else if let Some(v) = a.strip_prefix("-f=").or_else(|| a.strip_prefix("--filename=")).or_else(|| a.strip_prefix("--kustomize=")) {
            Some(v.to_string())
        } else if let Some(v) = a.strip_prefix("--from-file=") {
            Some(v.split_once('=').map(|(_, p)| p.to_string()).unwrap_or_else(|| v.to_string()))
        } else {
            a.strip_prefix("--from-env-file=").map(str::to_string)
        };
        if let Some(v) = value {
            paths.extend(v.split(',').filter(|p| !p.is_empty() && *p != "-").map(str::to_string));
        }
        i += 1;
    }
    paths
}

/// One step's result.
pub struct StepResult {
    pub at: String,
    pub run: String,
    pub skipped: Option<String>,
    pub passed: bool,
    /// Why it failed: the first divergence, short.
    pub divergence: Option<String>,
    pub stdout: String,
    pub stderr: String,
    pub exit_code: i32,
    pub expected: Option<String>,
}

pub struct PageResult {
    pub slug: String,
    pub title: String,
    pub url: String,
    pub reason: Option<String>,
    pub steps: Vec<StepResult>,
    /// A problem with the page file itself (unresolvable file, bad duration).
    pub error: Option<String>,
}

impl PageResult {
    pub fn passed(&self) -> bool {
        self.error.is_none() && self.steps.iter().all(|s| s.passed || s.skipped.is_some())
    }
    pub fn counts(&self) -> (usize, usize, usize) {
        let skipped = self.steps.iter().filter(|s| s.skipped.is_some()).count();
        let passed = self.steps.iter().filter(|s| s.skipped.is_none() && s.passed).count();
        (passed, self.steps.len() - skipped - passed, skipped)
    }
    pub fn first_failure(&self) -> Option<&StepResult> {
        self.steps.iter().find(|s| s.skipped.is_none() && !s.passed)
    }
}

/// The world a page runs in: the one loader (`kubesim_sim::loader::load`) with the page's
/// Nodes (or the default cluster) at t=0, and the page's files registered for `-f`
/// (`World::add_file`, not applied). Each step then advances the clock to its time
/// (`World::run_until`) and runs its command there (`World::run_command`), so a command can
/// use an earlier command's output (`kubectl logs $pods`).
pub fn new_world(seed: u64, cluster: Option<&str>, files: &BTreeMap<String, String>) -> kubesim_sim::World {
    use kubesim_sim::scenario::InputFile;
    let cluster_files: Vec<InputFile> = cluster.map(|text| vec![InputFile { name: "cluster.yaml".into(), text: text.into() }]).unwrap_or_default();
    let (mut world, outcomes, errors) = kubesim_sim::loader::load(kubesim_sim::world::WorldConfig::seeded(seed), &cluster_files);
    let errors: Vec<String> = errors.into_iter().chain(outcomes.into_iter().flat_map(|o| o.errors.into_iter().map(|e| e.message))).collect();
    assert!(errors.is_empty(), "the page's cluster does not load: {errors:?}");
    for (path, text) in files {
        world.add_file(path, text);
    }
    world
}

/// `$NAME` and `${NAME}` from earlier `NAME=$(...)` steps.
pub fn expand(line: &str, vars: &BTreeMap<String, String>) -> String {
    let mut out = line.to_string();
    let mut names: Vec<&String> = vars.keys().collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    for name in names {
        out = out.replace(&format!("${{{name}}}"), &vars[name]).replace(&format!("${name}"), &vars[name]);
    }
    out
}

/// The host's `grep [-i] [-C N] PATTERN` at the end of a pipeline (fixed strings).
pub struct Grep {
    pub pattern: String,
    pub context: usize,
    pub ignore_case: bool,
}

impl Grep {
    pub fn apply(&self, text: &str) -> String {
        let lines: Vec<&str> = text.lines().collect();
        let hit = |l: &str| if self.ignore_case { l.to_lowercase().contains(&self.pattern.to_lowercase()) } else { l.contains(&self.pattern) };
        let mut keep = vec![false; lines.len()];
        for (i, l) in lines.iter().enumerate() {
            if hit(l) {
                for k in keep.iter_mut().take((i + self.context + 1).min(lines.len())).skip(i.saturating_sub(self.context)) {
                    *k = true;
                }
            }
        }
        lines.iter().zip(keep).filter(|(_, k)| *k).map(|(l, _)| format!("{l}\n")).collect()
    }
}

pub fn host_grep(line: &str) -> Option<(String, Grep)> {
    // The last `|` outside quotes.
    let mut quote = None;
    let mut split = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, '|') => split = Some(i),
            _ => {}
        }
    }
    let at = split?;
    let (command, pipe) = (line[..at].trim_end(), &line[at + 1..]);
    let w = words(pipe);
    if w.first().map(String::as_str) != Some("grep") {
        return None;
    }
    let (mut context, mut ignore_case, mut pattern) = (0, false, None);
    let mut i = 1;
    while i < w.len() {
        match w[i].as_str() {
            "-C" => {
                context = w.get(i + 1)?.parse().ok()?;
                i += 1;
            }
            "-i" => ignore_case = true,
            p if pattern.is_none() => pattern = Some(p.to_string()),
            _ => return None,
        }
        i += 1;
    }
    Some((command.to_string(), Grep { pattern: pattern?, context, ignore_case }))
}

/// `NAME=$(COMMAND)`: (NAME, COMMAND).
pub fn assignment(line: &str) -> Option<(String, String)> {
    let (name, rest) = line.split_once("=$(")?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    Some((name.to_string(), rest.trim_end().strip_suffix(')')?.to_string()))
}

/// What a page's steps run on: the simulated world itself, or (in the server crate's
/// `docs_serve` test) `kubesim serve` with real kubectl sending the page's kubectl commands.
pub trait Driver {
    /// The virtual time.
    fn now(&self) -> u64;
    /// Runs the world until `t`.
    fn run_until(&mut self, t: u64);
    /// Registers a file for `-f`.
    fn add_file(&mut self, path: &str, text: &str);
    /// Runs one command line; one still running at `until` is stopped there (Ctrl-C).
    fn run_command_for(&mut self, line: &str, until: u64) -> CommandRecord;
    /// Starts a command in a second terminal.
    fn start_background(&mut self, line: &str) -> usize;
    /// Stops a second terminal's command (Ctrl-C) and returns what it printed.
    fn finish_background(&mut self, handle: usize) -> Option<CommandRecord>;
}

impl Driver for kubesim_sim::World {
    fn now(&self) -> u64 {
        kubesim_sim::World::now(self)
    }
    fn run_until(&mut self, t: u64) {
        kubesim_sim::World::run_until(self, t)
    }
    fn add_file(&mut self, path: &str, text: &str) {
        kubesim_sim::World::add_file(self, path, text)
    }
    fn run_command_for(&mut self, line: &str, until: u64) -> CommandRecord {
        kubesim_sim::World::run_command_for(self, line, until)
    }
    fn start_background(&mut self, line: &str) -> usize {
        kubesim_sim::World::start_background(self, line)
    }
    fn finish_background(&mut self, handle: usize) -> Option<CommandRecord> {
        kubesim_sim::World::finish_background(self, handle)
    }
}

/// Runs a page on the simulated world.
pub fn run_page(slug: &str, page: &Page, corpus: &Path) -> PageResult {
    run_page_on(slug, page, corpus, &mut |seed, cluster, files| Box::new(new_world(seed, cluster, files)))
}

/// The page's files: its own, its downloads, and the example URLs its steps read (from the
/// corpus), each local one also under its `./` name.
pub type MakeDriver<'a> = dyn FnMut(u64, Option<&str>, &BTreeMap<String, String>) -> Box<dyn Driver> + 'a;

/// Runs a page on the driver `make` builds from the page's seed, cluster and files.
pub fn run_page_on(slug: &str, page: &Page, corpus: &Path, make: &mut MakeDriver) -> PageResult {
    let mut result =
        PageResult { slug: slug.into(), title: page.title.clone(), url: page.url.clone(), reason: page.reason.clone(), steps: Vec::new(), error: None };
    // Files: the page's own, its downloads, then example URLs from the corpus.
    let mut files = page.files.clone();
    for (local, rel) in &page.copies {
        match std::fs::read_to_string(corpus.join(rel)) {
            Ok(text) => {
                files.insert(local.clone(), text);
            }
            Err(_) => {
                result.error = Some(format!("copies: {rel} is not in the corpus"));
                return result;
            }
        }
    }
    let mut times = Vec::new();
    let mut last = 0;
    for step in &page.steps {
        let at = match parse_duration(&step.at) {
            Ok(t) => t,
            Err(e) => {
                result.error = Some(e);
                return result;
            }
        };
        if at < last {
            result.error = Some(format!("step {:?} at {} runs before the previous step", step.run, step.at));
            return result;
        }
        last = at;
        times.push(at);
        if step.skip.is_some() {
            continue;
        }
        for path in file_args(&step.run) {
            let path = path.strip_prefix("./").map(str::to_string).filter(|p| files.contains_key(p)).map(|_| path.clone()).unwrap_or(path);
            if files.contains_key(path.trim_start_matches("./")) {
                continue;
            }
            let dir = format!("{}/", path.trim_end_matches('/'));
            let written = page.steps.iter().any(|s| s.write.keys().any(|k| *k == path || k.starts_with(&dir)));
            if files.contains_key(&path) || files.keys().any(|k| k.starts_with(&dir)) || written {
                continue;
            }
            let Some(rel) = EXAMPLE_PREFIXES.iter().find_map(|p| path.strip_prefix(p)) else {
                result.error = Some(format!("step {:?} reads {path:?}: not in the page's files and not a k8s.io/examples URL", step.run));
                return result;
            };
            match std::fs::read_to_string(corpus.join(rel)) {
                Ok(text) => {
                    files.insert(path.clone(), text);
                }
                Err(_) => {
                    result.error = Some(format!("step {:?} reads {path:?}: {rel} is not in the corpus; inline it in the page's files", step.run));
                    return result;
                }
            }
        }
    }
    // A local file is the same with or without "./".
    let aliases: Vec<(String, String)> = files
        .iter()
        .filter(|(k, _)| !k.contains("://") && !k.starts_with('/'))
        .map(|(k, v)| (k.strip_prefix("./").map(str::to_string).unwrap_or_else(|| format!("./{k}")), v.clone()))
        .collect();
    for (k, v) in aliases {
        files.entry(k).or_insert(v);
    }
    let tail = match page.tail.as_deref().map(parse_duration).transpose() {
        Ok(t) => t.unwrap_or(1_000),
        Err(e) => {
            result.error = Some(e);
            return result;
        }
    };
    let mut driver = make(page.seed.unwrap_or(1), page.cluster.as_deref(), &files);
    let world: &mut dyn Driver = driver.as_mut();
    let nodes = node_names(page);
    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    // When the user types the next command: a command still running then (a watch, a
    // rollout status that has not returned) was stopped with Ctrl-C.
    let next_times: Vec<u64> = (0..page.steps.len())
        .map(|i| page.steps.iter().zip(&times).skip(i + 1).find(|(s, _)| s.skip.is_none() && s.until.is_none()).map_or(last + tail, |(_, t)| *t))
        .collect();
    // Commands running in the second terminal: (stop time, world handle, index in result.steps).
    let mut background: Vec<(u64, usize, usize)> = Vec::new();
    let finish_background = |world: &mut dyn Driver, result: &mut PageResult, background: &mut Vec<(u64, usize, usize)>, before: u64| {
        background.sort();
        while let Some(&(until, handle, index)) = background.first().filter(|b| b.0 <= before) {
            background.remove(0);
            world.run_until(until.max(world.now()));
            let Some(record) = world.finish_background(handle) else { continue };
            // One result per step, in step order: the result's index is the step's.
            let step = &page.steps[index];
            let exit_code = if record.interrupted && step.exit.is_none() { 0 } else { record.exit_code };
            let r = &mut result.steps[index];
            r.divergence = check_step(page, step, &nodes, &record.stdout, &record.stderr, exit_code);
            r.passed = r.divergence.is_none();
            r.stdout = record.stdout;
            r.stderr = record.stderr;
            r.exit_code = exit_code;
        }
    };
    for ((step, at), next_at) in page.steps.iter().zip(times).zip(next_times) {
        finish_background(world, &mut result, &mut background, at);
        let expected = step.expect.clone();
        let mut step_result = StepResult {
            at: step.at.clone(),
            run: step.run.clone(),
            skipped: step.skip.clone(),
            passed: false,
            divergence: None,
            stdout: String::new(),
            stderr: String::new(),
            exit_code: 0,
            expected,
        };
        if step.skip.is_some() {
            result.steps.push(step_result);
            continue;
        }
        let mut at = at.max(world.now());
        world.run_until(at);
        for (path, text) in &step.write {
            world.add_file(path, text);
        }
        if let Some(until) = step.until.as_deref() {
            let until = match parse_duration(until) {
                Ok(t) => t,
                Err(e) => {
                    result.error = Some(e);
                    return result;
                }
            };
            let handle = world.start_background(step.run.trim());
            step_result.at = format!("{} (second terminal until {}s)", step.at, until / 1000);
            background.push((until, handle, result.steps.len()));
            result.steps.push(step_result);
            continue;
        }
        let repeat_until = match step.repeat.as_deref().map(parse_duration).transpose() {
            Ok(r) => r.map(|r| at + r),
            Err(e) => {
                result.error = Some(e);
                return result;
            }
        };
        let line = step.run.trim();
        loop {
            let (stdout, stderr, exit_code, interrupted) = run_line(world, line, next_at, &mut vars);
            // An interrupted command's exit status is not what the page shows (Ctrl-C).
            let exit_code = if interrupted && step.exit.is_none() { 0 } else { exit_code };
            let divergence = check_step(page, step, &nodes, &stdout, &stderr, exit_code);
            let again = divergence.is_some() && repeat_until.is_some_and(|until| at + 2_000 <= until);
            if !again {
                step_result.divergence = divergence;
                step_result.passed = step_result.divergence.is_none();
                step_result.stdout = stdout;
                step_result.stderr = stderr;
                step_result.exit_code = exit_code;
                if step.repeat.is_some() {
                    step_result.at = format!("{} (repeated until {}s)", step.at, at / 1000);
                }
                break;
            }
            at += 2_000;
            world.run_until(at);
        }
        result.steps.push(step_result);
    }
    finish_background(world, &mut result, &mut background, u64::MAX);
    world.run_until(last.max(world.now()) + tail);
    result
}

/// Runs one step's line: `NAME=$(kubectl ...)` and `echo` are the shell's, the rest kubesim's.
/// A command still running at `until` (the next step's time) is stopped there, as the user
/// would stop it with Ctrl-C to type the next command: (stdout, stderr, exit code, interrupted).
pub fn run_line(world: &mut dyn Driver, line: &str, until: u64, vars: &mut BTreeMap<String, String>) -> (String, String, i32, bool) {
    let until = until.max(world.now());
    if let Some((name, command)) = assignment(line) {
        // NAME=$(kubectl ...): the shell keeps the output (without trailing newlines) and
        // prints nothing but the command's errors.
        let record = world.run_command_for(&expand(&command, vars), until);
        vars.insert(name, record.stdout.trim_end_matches('\n').to_string());
        (String::new(), record.stderr, record.exit_code, record.interrupted)
    } else if let Some(rest) = line.strip_prefix("echo ").or((line == "echo").then_some("")) {
        // The shell's echo of variables (word splitting joins the words with spaces).
        (format!("{}\n", words(&expand(rest, vars)).join(" ")), String::new(), 0, false)
    } else if let Some((command, filter)) = host_grep(line) {
        // `kubectl ... | grep [-C N] PATTERN`: the host's grep over kubectl's stdout.
        let record = world.run_command_for(&expand(&command, vars), until);
        (filter.apply(&record.stdout), record.stderr, record.exit_code, record.interrupted)
    } else {
        let record = world.run_command_for(&expand(line, vars), until);
        (record.stdout, record.stderr, record.exit_code, record.interrupted)
    }
}

/// Every node name that becomes `<node>`: the page's cluster (or the default one), the docs'
/// usual names, and the names the page maps.
pub fn node_names(page: &Page) -> Vec<String> {
    let mut names: Vec<String> = vec!["node-1".into(), "node-2".into(), "node-3".into()];
    if let Some(cluster) = &page.cluster {
        for doc in serde_yaml::Deserializer::from_str(cluster) {
            if let Ok(value) = serde_yaml::Value::deserialize(doc) {
                if let Some(name) = value.get("metadata").and_then(|m| m.get("name")).and_then(|n| n.as_str()) {
                    names.push(name.to_string());
                }
            }
        }
    }
    names.extend(page.node_aliases.iter().cloned());
    names.extend(
        ["minikube", "minikube-m02", "minikube-m03", "kind-control-plane", "kind-worker", "kind-worker2", "kind-worker3", "docker-desktop"].map(String::from),
    );
    // Pinned names stay literal.
    names.retain(|n| !page.nodes.values().any(|pinned| pinned == n));
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    names.dedup();
    names
}

// ---------------------------------------------------------------------------------------------
// Comparing outputs
// ---------------------------------------------------------------------------------------------

pub fn check_step(page: &Page, step: &Step, nodes: &[String], stdout: &str, stderr: &str, exit_code: i32) -> Option<String> {
    let want_exit = step.exit.unwrap_or(0);
    let first_err = stderr.lines().next().unwrap_or("").trim();
    let exit_problem = (exit_code != want_exit).then(|| {
        if exit_code != 0 && !first_err.is_empty() {
            format!("exit {exit_code} (want {want_exit}): {first_err}")
        } else {
            format!("exit {exit_code} (want {want_exit})")
        }
    });
    let mode = step.r#match.as_deref().unwrap_or(if step.expect.is_some() { "tolerant" } else { "exit-code-only" });
    let output_problem = match (&step.expect, mode) {
        (_, "exit-code-only") | (None, _) => None,
        (Some(expect), mode) => {
            let mut expect = expect.clone();
            for s in page.substitute.iter().chain(&step.substitute) {
                expect = expect.replace(&s.from, &s.to);
            }
            for (docs, sim) in &page.nodes {
                expect = replace_word(&expect, docs, sim);
            }
            let want = normalise(&expect, nodes);
            // The terminal shows both streams; warnings come first on stderr.
            // kubectl's notice of the container it picked (`Defaulted container "x" out of:
            // ...`) goes to stderr, and pages showing a command's output leave it out.
            let notices_only = !stderr.is_empty() && stderr.lines().all(|l| l.starts_with("Defaulted container "));
            let mut candidates = vec![join_streams(stdout, stderr), join_streams(stderr, stdout)];
            if notices_only {
                candidates.push(stdout.to_string());
            }
            let mut first = None;
            for actual in &candidates {
                match compare(mode, &want, &normalise(actual, nodes)) {
                    Ok(()) => {
                        first = None;
                        break;
                    }
                    Err(e) => {
                        first.get_or_insert(e);
                    }
                }
            }
            first
        }
    };
    match (output_problem, exit_problem) {
        (None, None) => None,
        (Some(o), None) => Some(o),
        (None, Some(e)) => Some(e),
        (Some(o), Some(e)) => Some(format!("{e}; {o}")),
    }
}

pub fn join_streams(a: &str, b: &str) -> String {
    let mut s = a.to_string();
    if !s.is_empty() && !s.ends_with('\n') {
        s.push('\n');
    }
    s.push_str(b);
    s
}

/// Normalised output: one entry per non-blank line, cells separated by single spaces.
pub fn lines(text: &str) -> Vec<String> {
    text.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).filter(|l| !l.is_empty()).collect()
}

/// Two long lines shown around their first difference.
pub fn around_difference(a: &str, b: &str) -> (String, String) {
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let cut = |s: &str| {
        let chars: Vec<char> = s.chars().collect();
        let start = common.saturating_sub(50);
        let end = (common + 70).min(chars.len());
        let text: String = chars[start..end].iter().collect();
        format!("{}{text}{}", if start > 0 { "…" } else { "" }, if end < chars.len() { "…" } else { "" })
    };
    (cut(a), cut(b))
}

/// Two normalised lines are equal cell by cell; the page's `<something>` placeholder (a
/// measured value the page does not give) matches any one cell.
pub fn line_eq(want: &str, got: &str) -> bool {
    if !want.contains("<something>") {
        return want == got;
    }
    let (w, g): (Vec<&str>, Vec<&str>) = (want.split(' ').collect(), got.split(' ').collect());
    w.len() == g.len() && w.iter().zip(&g).all(|(a, b)| *a == "<something>" || a == b)
}

/// A line that only marks an elision in the page's output (`...`, `<...>`).
pub fn is_elision(line: &str) -> bool {
    matches!(line, "..." | "<...>" | "[...]" | "…")
}

pub fn compare(mode: &str, want: &str, got: &str) -> Result<(), String> {
    let (w, g) = (lines(want), lines(got));
    let show = |s: &str| if s.len() > 150 { format!("{}…", &s[..s.char_indices().nth(150).map(|(i, _)| i).unwrap_or(s.len())]) } else { s.to_string() };
    match mode {
        "tolerant" => {
            if w.len() == g.len() && w.iter().zip(&g).all(|(a, b)| line_eq(a, b)) {
                return Ok(());
            }
            // Rows of a table whose names are random (generated suffixes, hashes, the uids in
            // provisioned volumes' pvc-<uid> names) sort in a random order: compare the rows as
            // a multiset when the header matches.
            if (want.contains("<sfx>") || want.contains("<hash>") || want.contains("<uid>")) && w.len() == g.len() && w.first() == g.first() {
                let (mut ws, mut gs) = (w[1..].to_vec(), g[1..].to_vec());
                ws.sort();
                gs.sort();
                if ws.iter().zip(&gs).all(|(a, b)| line_eq(a, b)) {
                    return Ok(());
                }
                // The first expected row kubesim does not have (and the first extra row).
                let mut extra = gs.clone();
                let mut missing = None;
                for row in &ws {
                    match extra.iter().position(|x| line_eq(row, x)) {
                        Some(i) => {
                            extra.remove(i);
                        }
                        None => missing = missing.or(Some(row.clone())),
                    }
                }
                if let (Some(m), Some(e)) = (missing, extra.first()) {
                    return Err(format!("(rows in any order) want row `{}`, kubesim has `{}`", show(&m), show(e)));
                }
            }
            for i in 0..w.len().max(g.len()) {
                match (w.get(i), g.get(i)) {
                    (Some(a), Some(b)) if line_eq(a, b) => continue,
                    (Some(a), Some(b)) => {
                        let (a, b) = around_difference(a, b);
                        return Err(format!("line {}: want `{a}` got `{b}`", i + 1));
                    }
                    (Some(a), None) => return Err(format!("line {}: want `{}` got end of output", i + 1, show(a))),
                    (None, Some(b)) => return Err(format!("line {}: want end of output got `{}`", i + 1, show(b))),
                    (None, None) => unreachable!(),
                }
            }
            Ok(())
        }
        "contains" => {
            let (w1, g1) = (w.join("\n"), g.join("\n"));
            if g1.contains(&w1) {
                Ok(())
            } else {
                Err(format!("`{}` not in output (starts `{}`)", show(&w.join(" ⏎ ")), show(&g.iter().take(3).cloned().collect::<Vec<_>>().join(" ⏎ "))))
            }
        }
        "fragments" => {
            // Each expected line is part of a kubesim line, in order (the next fragment may
            // follow on the same line).
            let (mut row, mut col) = (0, 0);
            'fragments: for line in w.iter().filter(|l| !is_elision(l)) {
                while row < g.len() {
                    if let Some(p) = g[row].get(col..).and_then(|rest| rest.find(line.as_str())) {
                        col += p + line.len();
                        continue 'fragments;
                    }
                    row += 1;
                    col = 0;
                }
                return Err(format!("no line containing `{}` (output starts `{}`)", show(line), show(g.first().map(String::as_str).unwrap_or(""))));
            }
            Ok(())
        }
        "lines-unordered" => {
            for line in w.iter().filter(|l| !is_elision(l)) {
                if !g.iter().any(|x| line_eq(line, x)) {
                    return Err(format!("missing line `{}` (output starts `{}`)", show(line), show(g.first().map(String::as_str).unwrap_or(""))));
                }
            }
            Ok(())
        }
        "lines-contain" => {
            // Every expected line, in order, among kubesim's lines: the longest common
            // subsequence must hold them all. On failure, the first expected line left out of
            // the best alignment, and what kubesim has in its place.
            let want: Vec<&String> = w.iter().filter(|l| !is_elision(l)).collect();
            let (n, m) = (want.len(), g.len());
            let mut lcs = vec![vec![0u32; m + 1]; n + 1];
            for i in (0..n).rev() {
                for j in (0..m).rev() {
                    lcs[i][j] = if line_eq(want[i], &g[j]) { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
                }
            }
            if lcs[0][0] as usize == n {
                return Ok(());
            }
            let (mut i, mut j) = (0, 0);
            while i < n {
                if j < m && line_eq(want[i], &g[j]) && lcs[i][j] == lcs[i + 1][j + 1] + 1 {
                    i += 1;
                    j += 1;
                } else if j >= m || lcs[i + 1][j] >= lcs[i][j + 1] {
                    break;
                } else {
                    j += 1;
                }
            }
            // want[i] is not matched; kubesim's line at this point of the alignment:
            let there = g.get(j).map(|x| format!("kubesim has `{}` there", show(x))).unwrap_or_else(|| "kubesim's output ends".into());
            let elsewhere = if g[..j].iter().any(|x| line_eq(want[i], x)) { " (it appears earlier, out of order)" } else { "" };
            Err(format!("missing line `{}`{elsewhere}; {there}", show(want[i])))
        }
        other => Err(format!("unknown match mode {other:?}")),
    }
}

// ---------------------------------------------------------------------------------------------
// Normalisation: tolerant only of random names, IPs, ages, timestamps, UIDs, resourceVersions,
// container IDs/digests, node names and column padding.
// ---------------------------------------------------------------------------------------------

pub struct Rules {
    pub timestamps: Vec<Regex>,
    pub uid: Regex,
    pub container_id: Regex,
    pub exec_id: Regex,
    pub digest: Regex,
    pub ip: Regex,
    pub resource_version: Regex,
    pub hash_label: Regex,
    pub minutes_context: Regex,
    pub restart_age: Regex,
    pub name: Regex,
    pub duration: Regex,
}

pub fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| {
        let day = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
        let month = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
        Rules {
            timestamps: vec![
                // RFC 3339 and Go's time.Time String(): 2026-01-01T10:56:25Z, 2026-01-01 10:56:25.123 +0000 UTC
                Regex::new(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?(?: [+-]\d{4})?(?: [A-Z]{3,4}\b)?").unwrap(),
                // RFC 1123 (describe): Mon, 01 Jan 2026 10:56:25 +0000
                Regex::new(&format!(r"{day}, \d{{1,2}} {month} \d{{4}} \d{{2}}:\d{{2}}:\d{{2}}(?: [+-]\d{{4}}| [A-Z]{{3,4}}\b)?")).unwrap(),
                // date(1): Mon Jan  1 10:56:25 UTC 2026
                Regex::new(&format!(r"{day} {month} [ \d]\d \d{{2}}:\d{{2}}:\d{{2}}(?: [A-Z]{{3,4}})? \d{{4}}")).unwrap(),
            ],
            uid: Regex::new(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b").unwrap(),
            container_id: Regex::new(r"\b(containerd|docker|cri-o)://[0-9a-f]{12,64}\b").unwrap(),
            exec_id: Regex::new(r#"failed to start exec "[0-9a-f]{64}""#).unwrap(),
            digest: Regex::new(r"\bsha256:[0-9a-f]{12,64}\b").unwrap(),
            ip: Regex::new(r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b").unwrap(),
            resource_version: Regex::new(r#"("?resourceVersion"?:\s*)"?\d+"?"#).unwrap(),
            hash_label: Regex::new(r#"((?:pod-template-hash|controller-revision-hash)(?:=|:\s*)"?)[a-z0-9-]+"#).unwrap(),
            restart_age: Regex::new(r"(\b\d+) \(<dur> ago\)").unwrap(),
            minutes_context: Regex::new(r"(\(|over )\d+m(\)| ago\))").unwrap(),
            name: Regex::new(r"[A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9]").unwrap(),
            duration: Regex::new(r"(?:<invalid>|\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h|d|y)(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h|d))*)").unwrap(),
        }
    })
}

/// The alphabet of generated names (k8s.io/apimachinery/pkg/util/rand: no vowels, no 0 1 3).
pub fn safe_alphabet(s: &str) -> bool {
    s.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c))
}

/// A pod-template-hash, ControllerRevision hash or CronJob schedule suffix.
pub fn is_hash(s: &str) -> bool {
    let n = s.len();
    let digit = s.chars().any(|c| c.is_ascii_digit());
    (6..=10).contains(&n)
        && ((safe_alphabet(s) && (digit || n >= 8))
            || s.chars().all(|c| c.is_ascii_digit())
            || (digit && n >= 8 && s.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())))
}

/// A generateName suffix (5 characters).
pub fn is_suffix(s: &str, after_hash: bool) -> bool {
    s.len() == 5
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && (after_hash || safe_alphabet(s) || (s.chars().any(|c| c.is_ascii_digit()) && s.chars().any(|c| c.is_ascii_lowercase())))
}

pub fn generated_name(word: &str) -> Option<String> {
    let parts: Vec<&str> = word.split('-').collect();
    let n = parts.len();
    if n >= 3 && is_hash(parts[n - 2]) && is_suffix(parts[n - 1], true) {
        return Some(format!("{}-<hash>-<sfx>", parts[..n - 2].join("-")));
    }
    if n >= 2 && !parts[n - 2].is_empty() && is_hash(parts[n - 1]) {
        return Some(format!("{}-<hash>", parts[..n - 1].join("-")));
    }
    if n >= 2 && !parts[n - 2].is_empty() && is_suffix(parts[n - 1], false) {
        return Some(format!("{}-<sfx>", parts[..n - 1].join("-")));
    }
    None
}

/// Replaces whole words (not part of a longer name) equal to `from`.
pub fn replace_word(text: &str, from: &str, to: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let mut prev: Option<char> = None;
    while let Some(i) = rest.find(from) {
        let before = rest[..i].chars().last().or(prev);
        let after = rest[i + from.len()..].chars().next();
        let whole = !before.is_some_and(|c| is_name_char(c) || c == '.') && !after.is_some_and(is_name_char);
        out.push_str(&rest[..i]);
        out.push_str(if whole { to } else { from });
        prev = from.chars().last();
        rest = &rest[i + from.len()..];
    }
    out.push_str(rest);
    out
}

/// Column headers whose cells are ages or durations.
pub const AGE_HEADERS: &[&str] = &["AGE", "Age", "DURATION", "LAST SEEN", "LAST SCHEDULE", "SINCE"];

/// A bare minute count (`7m`) is also how CPU quantities look (`500m`): it is an age only in an
/// age column of a table (found by the header's position, or as the last cell when the age
/// column is the last one) or in `(7m ago)` / `over 7m)`. This marks those on the raw text,
/// before anything shifts the columns.
pub fn mark_age_cells(text: &str) -> String {
    let mut out = Vec::new();
    let mut columns: Vec<(usize, Option<usize>)> = Vec::new();
    let mut last_is_age = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            columns.clear();
            last_is_age = false;
            out.push(line.to_string());
            continue;
        }
        // A header: the first cell is upper case (NAME, NAMESPACE, LAST SEEN, TYPE) or Type,
        // and an age header is among the cells (separated by two spaces or more).
        let cells: Vec<(usize, &str)> = header_cells(line);
        let first = cells.first().map(|c| c.1).unwrap_or("");
        if (first.chars().all(|c| c.is_ascii_uppercase() || c == ' ' || c == '-') || first == "Type")
            && cells.iter().any(|c| AGE_HEADERS.contains(&c.1))
            && cells.len() >= 2
        {
            columns = cells.iter().enumerate().filter(|(_, c)| AGE_HEADERS.contains(&c.1)).map(|(i, c)| (c.0, cells.get(i + 1).map(|n| n.0))).collect();
            last_is_age = cells.last().is_some_and(|c| AGE_HEADERS.contains(&c.1));
            out.push(line.to_string());
            continue;
        }
        let mut row = line.to_string();
        if !columns.is_empty() {
            let mut done_last = false;
            if last_is_age {
                // The last cell, whatever the alignment (pages often realign by hand).
                if let Some(pos) = row.trim_end().rfind(char::is_whitespace) {
                    let cell = row[pos + 1..].trim_end().to_string();
                    if is_minutes(&cell) {
                        row = format!("{}<dur>", &row[..pos + 1]);
                    }
                }
                done_last = true;
            }
            for (start, end) in columns.iter().rev() {
                if done_last && end.is_none() {
                    continue;
                }
                if *start >= row.len() || !row.is_char_boundary(*start) {
                    continue;
                }
                let stop = end.filter(|e| *e <= row.len() && row.is_char_boundary(*e)).unwrap_or(row.len());
                let cell = &row[*start..stop];
                let token = cell.split_whitespace().next().unwrap_or("");
                if is_minutes(token) && cell.trim_start().starts_with(token) {
                    let at = *start + cell.find(token).unwrap_or(0);
                    row = format!("{}<dur>{}", &row[..at], &row[at + token.len()..]);
                }
            }
        }
        out.push(row);
    }
    let mut s = out.join("\n");
    if text.ends_with('\n') {
        s.push('\n');
    }
    // (7m ago), (x2 over 7m)
    let r = rules();
    s = r.minutes_context.replace_all(&s, "${1}<dur>${2}").into_owned();
    s
}

/// The cells of a table header: (byte offset, text), cells separated by 2+ spaces.
pub fn header_cells(line: &str) -> Vec<(usize, &str)> {
    let mut cells = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && bytes[i] == b' ' {
            i += 1;
        }
        if i >= bytes.len() {
            break;
        }
        let start = i;
        while i < bytes.len() && !(bytes[i] == b' ' && (i + 1 >= bytes.len() || bytes[i + 1] == b' ')) {
            i += 1;
        }
        cells.push((start, &line[start..i]));
    }
    cells
}

pub fn is_minutes(s: &str) -> bool {
    s.len() >= 2 && s.ends_with('m') && s[..s.len() - 1].chars().all(|c| c.is_ascii_digit())
}

pub fn normalise(text: &str, nodes: &[String]) -> String {
    let r = rules();
    let top = text.contains("CPU(cores)");
    let mut s = text.replace('\t', "    ");
    if !top {
        s = mark_age_cells(&s);
    }
    for t in &r.timestamps {
        s = t.replace_all(&s, "<time>").into_owned();
    }
    s = r.uid.replace_all(&s, "<uid>").into_owned();
    s = r.container_id.replace_all(&s, "$1://<id>").into_owned();
    s = r.exec_id.replace_all(&s, "failed to start exec \"<id>\"").into_owned();
    s = r.digest.replace_all(&s, "sha256:<digest>").into_owned();
    s = r.ip.replace_all(&s, "<ip>").into_owned();
    s = r.resource_version.replace_all(&s, "${1}<rv>").into_owned();
    // YAML may or may not quote a timestamp.
    s = s.replace("\"<time>\"", "<time>").replace("'<time>'", "<time>");
    for node in nodes {
        s = replace_word(&s, node, "<node>");
    }
    s = r.hash_label.replace_all(&s, "${1}<hash>").into_owned();
    s = r.name.replace_all(&s, |c: &regex::Captures| generated_name(&c[0]).unwrap_or_else(|| c[0].to_string())).into_owned();
    // Durations with an unambiguous unit (5s, 2m10s, 3h, 4d, 1.2s, <invalid>) as whole cells
    // anywhere; bare minutes were marked above. Not in `kubectl top` output.
    if top {
        return s;
    }
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for m in r.duration.find_iter(&s.clone()) {
        let before = s[..m.start()].chars().last();
        let after = s[m.end()..].chars().next();
        let open = before.is_none_or(|c| c.is_whitespace() || c == '(' || c == '[');
        let close = after.is_none_or(|c| c.is_whitespace() || c == ')' || c == ']' || c == ',');
        out.push_str(&s[last..m.start()]);
        out.push_str(if open && close && !is_minutes(m.as_str()) { "<dur>" } else { m.as_str() });
        last = m.end();
    }
    out.push_str(&s[last..]);
    // RESTARTS: "1 (20s ago)" since v1.22 and "1" before are the same count; the time since
    // the last restart is an age.
    r.restart_age.replace_all(&out, "$1").into_owned()
}

// ---------------------------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------------------------

pub fn load_pages() -> Vec<(String, Page)> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(pages_dir())
        .expect("tests/docs/pages exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    entries.sort();
    entries
        .into_iter()
        .map(|path| {
            let slug = path.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            let page: Page = serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(page.url.starts_with("https://kubernetes.io/docs/"), "{slug}: url must be the kubernetes.io page (attribution)");
            assert!(page.source.starts_with("content/en/docs/"), "{slug}: source must be the page's path in kubernetes/website (attribution)");
            (slug, page)
        })
        .collect()
}

pub fn indent(text: &str, by: &str) -> String {
    text.lines().map(|l| format!("{by}{l}\n")).collect()
}

pub fn print_verbose(result: &PageResult) {
    println!("=== {} ({}) {}", result.title, result.slug, result.url);
    if let Some(e) = &result.error {
        println!("PAGE ERROR: {e}");
    }
    for s in &result.steps {
        let verdict = if s.skipped.is_some() {
            "SKIP"
        } else if s.passed {
            "ok"
        } else {
            "FAIL"
        };
        println!("--- [{}] $ {}   => {verdict}", s.at, s.run);
        if let Some(reason) = &s.skipped {
            println!("    skipped: {reason}");
            continue;
        }
        if let Some(e) = &s.expected {
            print!("    expected:\n{}", indent(e, "      | "));
        }
        print!("    kubesim (exit {}):\n{}", s.exit_code, indent(&join_streams(&s.stdout, &s.stderr), "      > "));
        if let Some(d) = &s.divergence {
            println!("    divergence: {d}");
        }
    }
}

pub fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub fn status_markdown(results: &[PageResult]) -> String {
    let mut md = String::new();
    let passing = results.iter().filter(|r| r.passed()).count();
    let (mut sp, mut sf, mut ss) = (0, 0, 0);
    for r in results {
        let (p, f, s) = r.counts();
        sp += p;
        sf += f;
        ss += s;
    }
    let _ = writeln!(md, "# Docs suite status\n");
    let _ = writeln!(md, "Generated by `KUBESIM_DOCS_WRITE_STATUS=1 cargo test -p kubesim-sim --test docs`; do not edit by hand.\n");
    let _ = writeln!(md, "**{passing} of {} pages pass**; steps: {sp} pass, {sf} fail, {ss} skipped (cannot run in kubesim).\n", results.len());
    let _ = writeln!(md, "| Page | Status | Steps ok/fail/skip | First divergence | Reason |");
    let _ = writeln!(md, "| --- | --- | --- | --- | --- |");
    for r in results {
        let (p, f, s) = r.counts();
        let first =
            r.first_failure().map(|s| format!("`{}` at {}: {}", s.run, s.at, s.divergence.clone().unwrap_or_default())).or(r.error.clone()).unwrap_or_default();
        let _ = writeln!(
            md,
            "| [{}]({}) ([page file](pages/{}.yaml)) | {} | {p}/{f}/{s} | {} | {} |",
            md_escape(&r.title),
            r.url,
            r.slug,
            if r.passed() { "pass" } else { "fail" },
            md_escape(&first),
            md_escape(r.reason.as_deref().unwrap_or(""))
        );
    }
    let _ = writeln!(md, "\n## Every failing step\n");
    for r in results.iter().filter(|r| !r.passed()) {
        let _ = writeln!(md, "### {} (`{}`)\n", r.title, r.slug);
        for s in r.steps.iter().filter(|s| s.skipped.is_none() && !s.passed) {
            let _ = writeln!(md, "- `{}` at {}: {}", s.run, s.at, md_escape(s.divergence.as_deref().unwrap_or("")));
        }
        let _ = writeln!(md);
    }
    let skipped: Vec<_> = results.iter().flat_map(|r| r.steps.iter().filter(|s| s.skipped.is_some()).map(move |s| (r, s))).collect();
    if !skipped.is_empty() {
        let _ = writeln!(md, "## Skipped steps (cannot be run in kubesim)\n");
        for (r, s) in skipped {
            let _ = writeln!(md, "- {} (`{}`): `{}`: {}", r.title, r.slug, s.run, md_escape(s.skipped.as_deref().unwrap_or("")));
        }
    }
    md
}
