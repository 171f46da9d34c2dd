#![cfg(not(target_arch = "wasm32"))]
//! The docs suite against `kubesim serve`: every page of `tests/docs/pages` followed again, its
//! `kubectl` commands sent by **real kubectl** (v1.32 on these machines) over HTTP to the page's
//! world behind the API server, instead of kubesim's own kubectl layer. A step that passes on
//! the layer must pass with real kubectl too: the docs' commands run unchanged against
//! `kubesim serve`.
//!
//! How a page runs here (the harness is the docs suite's, `crates/sim/tests/docs_harness`):
//! - The world is paused; steps move it to their times exactly as in the docs suite.
//! - A kubectl command runs with the world paused; if it has not finished after a moment of
//!   wall time it is waiting for the cluster (`rollout status`, `wait`, `delete` waiting for the
//!   pod to go, `get -w`), and the world then steps 200 ms of virtual time every 10 ms of wall
//!   time until the command exits or the next step's time comes (then it is stopped, Ctrl-C).
//! - The page's files are written to a scratch directory the commands run in;
//!   `https://k8s.io/examples/...` arguments point at local copies (no network here).
//! - Lines kubectl cannot run without a terminal (`-it`, `--stdin`, `attach`, `edit`), the
//!   shell lines of a `minikube ssh` session and the non-kubectl lines run on kubesim's layer
//!   in the same world, and are counted apart.
//!
//! Skips (with a message) when `kubectl` or the example corpus is absent.
//! `KUBESIM_DOCS_PAGE=<slug>` runs one page and prints every step.

#[path = "../../sim/tests/docs_harness/mod.rs"]
mod docs_harness;

use docs_harness::*;
use kubesim_server::{Config, Server};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Steps whose real-kubectl output differs from the page for a reason that is not a bug, with
/// that reason (the test fails if one starts passing, so the list stays honest).
const KNOWN_DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "debug-running-pod",
        "kubectl debug myapp --copy-to=myapp-debug --set-image=*=ubuntu",
        "kubesim serve decodes protobuf request bodies for the kinds kubectl's generators and typed clients send (create deployment/job/cronjob/configmap/secret/service, Eviction, access reviews, HPA), not a whole Pod: kubectl debug --copy-to POSTs the copied Pod as protobuf and gets 415 UnsupportedMediaType",
    ),
    ("debug-running-pod", "kubectl delete pod myapp myapp-debug", "follows from the debug --copy-to above: myapp-debug was never created"),
    (
        "debug-running-pod",
        "kubectl describe pod $pod",
        "version skew: kubectl v1.34 (the layer, and the page) prints a projected configMap source's optional flag as `Optional: false` (v1.33, kubernetes/kubernetes#129457); the oracle kubectl v1.32 prints `ConfigMapOptional: <nil>`",
    ),
    (
        "deployment",
        "kubectl describe deployments",
        "kubectl v1.32 (the oracle) lists old ReplicaSets scaled to 0 under OldReplicaSets; the page and the layer list only old ReplicaSets with replicas (FindOldReplicaSets' required sets)",
    ),
    ("deployment", "kubectl describe deployment", "as `kubectl describe deployments`: v1.32 lists the scaled-down old ReplicaSets"),
    ("deployment", "kubectl describe deployment nginx-deployment", "as `kubectl describe deployments`: v1.32 lists the scaled-down old ReplicaSets"),
];

/// Whether real kubectl prints this command's output in Go map order, which differs run to run
/// (`kubectl describe configmap` and `describe secret` range over `.data`): such output is
/// compared as unordered lines.
fn go_map_order(run: &str) -> bool {
    let args = kubesim_kubectl::split_command(run).unwrap_or_default();
    let mut words = args.iter().skip(1).filter(|a| !a.starts_with('-')).map(String::as_str);
    words.next() == Some("describe")
        && words.next().is_some_and(|r| {
            let r = r.split(['/', '.']).next().unwrap_or(r);
            matches!(r, "configmap" | "configmaps" | "cm" | "secret" | "secrets")
        })
}

fn kubectl_available() -> bool {
    Command::new("kubectl").arg("version").arg("--client").output().is_ok_and(|o| o.status.success())
}

#[derive(Default)]
struct Counts {
    real: usize,
    layer: usize,
}

/// A running real kubectl: the child and the threads draining its output.
struct Running {
    child: Child,
    stdout: std::thread::JoinHandle<Vec<u8>>,
    stderr: std::thread::JoinHandle<Vec<u8>>,
    /// What it has printed on stdout so far.
    printed: Arc<Mutex<Vec<u8>>>,
    line: String,
    t_ms: u64,
}

enum Background {
    Real(Running),
    Layer(usize),
}

struct Serve {
    server: Server,
    dir: PathBuf,
    kubeconfig: PathBuf,
    /// `https://...` file names the page uses → their local copies.
    urls: Vec<(String, String)>,
    background: Vec<Option<Background>>,
    counts: Rc<RefCell<Counts>>,
}

/// `get -w`, `logs -f`, `rollout status` and their like: commands the pages stop with Ctrl-C
/// when they have seen enough ("press Ctrl-C to stop the rollout status watch").
fn watches(line: &str) -> bool {
    let args = kubesim_kubectl::split_command(line).unwrap_or_default();
    let mut words = args.iter().skip(1).filter(|a| !a.starts_with('-')).map(String::as_str);
    let verb = words.next().unwrap_or("");
    if verb == "rollout" && words.next() == Some("status") {
        return true;
    }
    args.iter()
        .take_while(|a| *a != "--")
        .any(|a| matches!(a.as_str(), "-w" | "--watch" | "--watch=true" | "--watch-only" | "--follow" | "--follow=true") || (verb == "logs" && a == "-f"))
}

fn local_name(url: &str) -> String {
    format!("urls/{}", url.split_once("://").map_or(url, |(_, rest)| rest))
}

impl Serve {
    fn start(seed: u64, cluster: Option<&str>, files: &BTreeMap<String, String>, counts: Rc<RefCell<Counts>>) -> Serve {
        let (cluster, page_files) = (cluster.map(str::to_string), files.clone());
        let (server, ()) = Server::start(move || (new_world(seed, cluster.as_deref(), &page_files), ()), Config { paused: true, ..Default::default() })
            .expect("server starts");
        let dir = std::env::temp_dir().join(format!("kubesim-docs-serve-{}-{}", std::process::id(), server.addr().port()));
        std::fs::create_dir_all(&dir).unwrap();
        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(&kubeconfig, server.kubeconfig()).unwrap();
        let mut serve = Serve { server, dir, kubeconfig, urls: Vec::new(), background: Vec::new(), counts };
        for (path, text) in files {
            serve.write_local(path, text);
        }
        serve
    }

    fn write_local(&mut self, path: &str, text: &str) {
        let local = if path.contains("://") {
            let local = local_name(path);
            if !self.urls.iter().any(|(u, _)| u == path) {
                self.urls.push((path.to_string(), local.clone()));
                // Longest first, so no URL is replaced inside a longer one.
                self.urls.sort_by_key(|(u, _)| std::cmp::Reverse(u.len()));
            }
            local
        } else {
            path.trim_start_matches('/').to_string()
        };
        let file = self.dir.join(local);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(file, text).unwrap();
    }

    /// Whether real kubectl can run this line as the page's user would: a kubectl command
    /// that needs no terminal, outside a `minikube ssh` session.
    fn for_real_kubectl(&self, line: &str) -> bool {
        let Some(args) = kubesim_kubectl::split_command(line).ok() else { return false };
        if args.first().map(String::as_str) != Some("kubectl") {
            return false;
        }
        if self.server.with_sim(|sim| sim.world.node_shell().is_some()).unwrap_or(true) {
            return false;
        }
        let interactive = args
            .iter()
            .take_while(|a| *a != "--")
            .any(|a| matches!(a.as_str(), "-it" | "-ti" | "-i" | "-t" | "--stdin" | "--tty" | "--stdin=true" | "--tty=true" | "--rm" | "--rm=true"));
        let terminal_verb =
            args.iter().skip(1).find(|a| !a.starts_with('-')).is_some_and(|verb| matches!(verb.as_str(), "attach" | "edit" | "proxy" | "port-forward"));
        !interactive && !terminal_verb
    }

    fn spawn(&self, line: &str) -> Running {
        let mut args = kubesim_kubectl::split_command(line).expect("checked");
        args.remove(0);
        for arg in &mut args {
            for (url, local) in &self.urls {
                if arg.contains(url.as_str()) {
                    *arg = arg.replace(url.as_str(), local);
                }
            }
        }
        let mut child = Command::new("kubectl")
            .args(&args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECACHEDIR", self.dir.join("cache"))
            .env("HOME", &self.dir)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl runs");
        let drain = |mut r: Box<dyn Read + Send>, seen: Arc<Mutex<Vec<u8>>>| {
            std::thread::spawn(move || {
                let mut chunk = [0u8; 4096];
                while let Ok(n) = r.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    seen.lock().unwrap().extend_from_slice(&chunk[..n]);
                }
                std::mem::take(&mut *seen.lock().unwrap())
            })
        };
        let printed = Arc::new(Mutex::new(Vec::new()));
        let stdout = drain(Box::new(child.stdout.take().unwrap()), printed.clone());
        let stderr = drain(Box::new(child.stderr.take().unwrap()), Arc::new(Mutex::new(Vec::new())));
        Running { child, stdout, stderr, printed, line: line.to_string(), t_ms: self.now() }
    }

    fn collect(&self, mut running: Running, interrupted: bool) -> CommandRecord {
        if interrupted {
            // Ctrl-C: let the last watch events reach the client first.
            std::thread::sleep(Duration::from_millis(300));
            let _ = running.child.kill();
        }
        let status = running.child.wait().expect("kubectl waited for");
        let text = |h: std::thread::JoinHandle<Vec<u8>>| String::from_utf8_lossy(&h.join().unwrap_or_default()).into_owned();
        // The page's URLs, not their local copies, in what kubectl says about the files.
        let unlocal = |mut text: String| {
            for (url, local) in &self.urls {
                text = text.replace(local.as_str(), url);
            }
            text
        };
        let stdout = unlocal(text(running.stdout));
        let mut stderr = unlocal(text(running.stderr));
        // The page's user sees ages as the cluster's clock tells them; real kubectl's come from
        // the wall clock and only their cells are normalised. Warnings kubectl prints about its
        // own cache directory are not the cluster's.
        stderr = stderr.lines().filter(|l| !l.contains("couldn't get current server API group list")).map(|l| format!("{l}\n")).collect();
        CommandRecord { t_ms: running.t_ms, line: running.line, stdout, stderr, exit_code: status.code().unwrap_or(130), interrupted }
    }

    fn run_real(&mut self, line: &str, until: u64) -> CommandRecord {
        let mut running = self.spawn(line);
        // A moment of wall time with the world paused: most commands finish in it.
        let started = Instant::now();
        while started.elapsed() < Duration::from_millis(1_500) {
            if running.child.try_wait().ok().flatten().is_some() {
                return self.collect(running, false);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        // Waiting for the cluster: let the world run towards the next step's time.
        loop {
            if running.child.try_wait().ok().flatten().is_some() {
                return self.collect(running, false);
            }
            let now = self.now();
            // A watch the user stops with Ctrl-C when the next step comes; a command that
            // waits for the cluster (drain, delete, rollout status) is waited for, as the
            // user at the terminal does.
            if now >= until && watches(line) {
                return self.collect(running, true);
            }
            let next = if watches(line) { (now + 200).min(until) } else { now + 200 };
            self.server.with_sim(move |sim| sim.step_for(next - sim.world.now()));
            std::thread::sleep(Duration::from_millis(10));
            // A command that outlives a long wait (a watch left running) is stopped after a
            // bound of wall time all the same.
            if started.elapsed() > Duration::from_secs(120) {
                return self.collect(running, true);
            }
            // Re-check whether it exited right after the step.
            if running.child.try_wait().ok().flatten().is_some() {
                return self.collect(running, false);
            }
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        for b in self.background.drain(..).flatten() {
            if let Background::Real(mut r) = b {
                let _ = r.child.kill();
                let _ = r.child.wait();
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Driver for Serve {
    fn now(&self) -> u64 {
        self.server.with_sim(|sim| sim.world.now()).expect("the server runs")
    }
    fn run_until(&mut self, t: u64) {
        self.server.with_sim(move |sim| {
            let now = sim.world.now();
            sim.step_for(t.saturating_sub(now));
        });
    }
    fn add_file(&mut self, path: &str, text: &str) {
        self.write_local(path, text);
        let (path, text) = (path.to_string(), text.to_string());
        self.server.with_sim(move |sim| sim.world.add_file(&path, &text));
    }
    fn run_command_for(&mut self, line: &str, until: u64) -> CommandRecord {
        if self.for_real_kubectl(line) {
            self.counts.borrow_mut().real += 1;
            return self.run_real(line, until);
        }
        self.counts.borrow_mut().layer += 1;
        let line = line.to_string();
        self.server.with_sim(move |sim| sim.world.run_command_for(&line, until)).expect("the server runs")
    }
    fn start_background(&mut self, line: &str) -> usize {
        let b = if self.for_real_kubectl(line) {
            self.counts.borrow_mut().real += 1;
            // The second terminal's command is under way (a watch has listed) before the
            // first terminal's next command runs.
            let mut running = self.spawn(line);
            let started = Instant::now();
            while running.printed.lock().unwrap().is_empty() && running.child.try_wait().ok().flatten().is_none() && started.elapsed() < Duration::from_secs(5)
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            Background::Real(running)
        } else {
            self.counts.borrow_mut().layer += 1;
            let line = line.to_string();
            Background::Layer(self.server.with_sim(move |sim| sim.world.start_background(&line)).expect("the server runs"))
        };
        self.background.push(Some(b));
        self.background.len() - 1
    }
    fn finish_background(&mut self, handle: usize) -> Option<CommandRecord> {
        match self.background.get_mut(handle)?.take()? {
            Background::Real(mut running) => {
                let done = running.child.try_wait().ok().flatten().is_some();
                Some(self.collect(running, !done))
            }
            Background::Layer(h) => self.server.with_sim(move |sim| sim.world.finish_background(h)).flatten(),
        }
    }
}

fn corpus() -> Option<PathBuf> {
    corpus_dir()
}

#[test]
fn docs_pages_run_unchanged_against_kubesim_serve() {
    if !kubectl_available() {
        println!("docs-vs-serve skipped: kubectl is not installed");
        return;
    }
    let Some(corpus) = corpus() else {
        println!("docs-vs-serve skipped: the example corpus (shared/corpus/k8s-docs-examples) is not there; set KUBESIM_DOCS_CORPUS");
        return;
    };
    let only = std::env::var("KUBESIM_DOCS_PAGE").ok().filter(|s| !s.is_empty());
    let counts = Rc::new(RefCell::new(Counts::default()));
    let mut problems = Vec::new();
    let mut known_seen = Vec::new();
    let (mut pages_run, mut pages_agree, mut real_passed) = (0, 0, 0);
    for (slug, page) in load_pages() {
        if only.as_ref().is_some_and(|o| *o != slug) {
            continue;
        }
        let layer = run_page(&slug, &page, &corpus);
        let before = counts.borrow().real;
        let c = counts.clone();
        let served = run_page_on(&slug, &page, &corpus, &mut |seed, cluster, files| Box::new(Serve::start(seed, cluster, files, c.clone())));
        if only.is_some() {
            print_verbose(&served);
        }
        pages_run += 1;
        let mut agree = true;
        let nodes = node_names(&page);
        for ((l, s), step) in layer.steps.iter().zip(&served.steps).zip(&page.steps) {
            if s.skipped.is_some() || !l.passed {
                continue;
            }
            let map_order = go_map_order(&s.run) && {
                let mut unordered = step.clone();
                unordered.r#match = Some("lines-unordered".into());
                check_step(&page, &unordered, &nodes, &s.stdout, &s.stderr, s.exit_code).is_none()
            };
            if s.passed || map_order {
                real_passed += 1;
                continue;
            }
            if let Some((_, _, why)) = KNOWN_DIFFERENCES.iter().find(|(p, run, _)| *p == slug && *run == s.run) {
                known_seen.push(format!("{slug}: `{}`: {why}", s.run));
                continue;
            }
            agree = false;
            problems.push(format!(
                "{slug}: `{}` at {} passes on kubesim's kubectl layer but not with real kubectl against kubesim serve: {}\n--- real kubectl stdout:\n{}--- stderr:\n{}",
                s.run,
                s.at,
                s.divergence.clone().unwrap_or_default(),
                s.stdout,
                s.stderr
            ));
        }
        if let Some(e) = &served.error {
            agree = false;
            problems.push(format!("{slug}: {e}"));
        }
        pages_agree += usize::from(agree);
        println!("{slug}: {} kubectl commands by real kubectl, {}", counts.borrow().real - before, if agree { "as on the layer" } else { "DIFFERS" });
    }
    let c = counts.borrow();
    println!(
        "\ndocs-vs-serve: {pages_agree} of {pages_run} pages give real kubectl the outputs the layer gives; {} lines by real kubectl, {} on the layer (shell, interactive); {real_passed} steps match the page",
        c.real, c.layer
    );
    for k in &known_seen {
        println!("  known: {k}");
    }
    for (page, run, _) in KNOWN_DIFFERENCES {
        if only.is_none() && !known_seen.iter().any(|k| k.starts_with(&format!("{page}: `{run}`"))) {
            problems.push(format!("{page}: `{run}` is listed as a known difference but now matches: remove it"));
        }
    }
    assert!(problems.is_empty(), "{} problems:\n\n{}", problems.len(), problems.join("\n\n"));
}
