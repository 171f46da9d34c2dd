//! `kubesim serve`: the simulated cluster behind the Kubernetes HTTP API, so real `kubectl` and
//! client libraries drive it. Start here:
//! - [`Server::start`]: binds 127.0.0.1, starts the clock thread and one thread per connection.
//! - [`api`]: routing and the REST handlers (CRUD, list, watch, patch, apply, subresources).
//! - [`table`]: server-side `Table` output through kubesim's own kubectl printers.
//! - [`discovery`], [`openapi`]: what clients read to learn the API.
//! - [`clock`]: virtual time behind a real clock (speed, pause, step).
//! - [`control`]: `/kubesim/v1/...` (pause, resume, step, speed, faults, trace, kubectl layer).
//! - [`http`], [`ws`]: HTTP/1.1 and WebSocket over `std::net`, hand-written.
//!
//! Concurrency: the world lives on one simulation thread (it is not `Send`), which runs it in
//! short slices and, between them, the jobs handlers send it ([`Shared::run`]; requests go
//! ahead of the clock). Jobs copy what they need (objects are `Arc`s); serializing, rendering
//! tables and writing to sockets happen on the connection threads. Watches
//! read the store's bounded history from their cursor, so a slow watcher costs no memory: it
//! either keeps up or gets 410 Gone, as from kube-apiserver.
//!
//! Served: `/version`, `/healthz`, discovery (`/api`, `/apis`, `/apis/<g>`, `/api/v1`,
//! `/apis/<g>/<v>`, aggregated v2), `/openapi/v3` (+ per group-version) and `/openapi/v2` (JSON
//! only), every kind of the kind registry (get, list with label/field selectors, `limit` and
//! `continue`, watch with bookmarks, `sendInitialEvents` and 410 Gone, create, update, patch —
//! JSON, merge, strategic merge, apply — delete with DeleteOptions and preconditions,
//! deletecollection), `dryRun=All`, `fieldValidation`, `managedFields`, Table and
//! PartialObjectMetadata output, JSON and YAML bodies and protobuf request bodies for the kinds
//! kubectl's typed clients create, the status, scale, binding, eviction, log (`follow`,
//! `tailLines`, `previous`) and exec (WebSocket `v5`/`v4.channel.k8s.io`) subresources,
//! namespace finalize, `metrics.k8s.io/v1beta1` nodes and pods, and the access reviews
//! (the one user is a cluster admin).
//!
//! Not served: port-forward and attach (kubectl's `run -i` falls back to streaming logs),
//! stdin for exec, protobuf or CBOR responses (kubectl falls back to JSON), SPDY upgrades,
//! list snapshots at an older resourceVersion (a list answers the current state), conversion
//! between served versions beyond `apiVersion` (autoscaling/v1 and v2 HPAs share one stored
//! form), TLS and authentication (127.0.0.1 only; every request is the admin).
//!
//! Limits (hostile clients): bodies above 3 MiB get 413, heads above 64 KiB 431, requests
//! that stall 408, malformed requests 400; at most [`Config::max_connections`] connections and
//! [`Config::max_watchers`] watches (429 beyond); every handler runs under `catch_unwind`, so a
//! bug answers 500 instead of taking the server down.

#![deny(missing_docs)]

pub mod api;
pub mod client;
pub mod clock;
pub mod control;
pub use kubesim_api::discovery;
pub mod http;
pub mod openapi;
pub mod proto;
pub mod ssa;
pub mod status;
pub mod table;
pub mod watch;
pub mod ws;

use clock::{Sim, Speed};
use kubesim_sim::World;
use std::io::BufReader;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How a server runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// TCP port on 127.0.0.1 (0: any free port).
    pub port: u16,
    /// Virtual-time speed.
    pub speed: Speed,
    /// Start paused.
    pub paused: bool,
    /// Request limits.
    pub limits: http::Limits,
    /// Concurrent connections accepted (more are answered 429 and closed).
    pub max_connections: usize,
    /// Concurrent watches (more get 429).
    pub max_watchers: usize,
    /// How often a watch that allows bookmarks gets one (wall time).
    pub bookmark_interval: Duration,
    /// The longest a watch runs before the server ends it (clients re-watch).
    pub max_watch: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            port: 0,
            speed: Speed::Factor(1.0),
            paused: false,
            limits: http::Limits::default(),
            max_connections: 512,
            max_watchers: 256,
            bookmark_interval: Duration::from_secs(60),
            max_watch: Duration::from_secs(30 * 60),
        }
    }
}

/// A job for the simulation thread.
type Job = Box<dyn FnOnce(&mut Sim) + Send>;

/// Everything the threads share. The world itself is not here: it lives on the simulation
/// thread (it is not `Send`), and handlers reach it with [`Shared::run`].
pub struct Shared {
    jobs: Mutex<mpsc::Sender<Job>>,
    pending: AtomicUsize,
    revision: Mutex<u64>,
    /// Notified whenever the published revision changes (watchers wait on it).
    pub changed: Condvar,
    /// Open watches.
    pub watchers: AtomicUsize,
    /// Open connections.
    pub connections: AtomicUsize,
    /// Requests served.
    pub requests: AtomicUsize,
    stop: AtomicBool,
    /// The configuration.
    pub config: Config,
    /// The served resources (discovery).
    pub resources: &'static [discovery::Resource],
    /// The OpenAPI documents.
    pub openapi: &'static openapi::OpenApi,
}

impl Shared {
    /// Runs `f` on the simulation thread (between event slices; requests go first) and waits
    /// for its result. A panic in `f` answers 500 and leaves the world running.
    pub fn run<R: Send + 'static>(&self, f: impl FnOnce(&mut Sim) -> R + Send + 'static) -> Result<R, status::Failure> {
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |sim| {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(sim)));
            let _ = tx.send(result.ok());
        });
        self.pending.fetch_add(1, Ordering::SeqCst);
        let sent = self.jobs.lock().unwrap_or_else(|e| e.into_inner()).send(job);
        if sent.is_err() {
            self.pending.fetch_sub(1, Ordering::SeqCst);
            return Err(status::Failure::new(503, "ServiceUnavailable", "the simulation has stopped"));
        }
        match rx.recv() {
            Ok(Some(r)) => Ok(r),
            _ => Err(status::Failure::internal("the server hit a bug handling this request")),
        }
    }

    /// The revision the simulation thread last published.
    pub fn revision(&self) -> u64 {
        *self.revision.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits (at most `timeout`) until the published revision passes `seen`; returns it.
    pub fn wait_past(&self, seen: u64, timeout: Duration) -> u64 {
        let guard = self.revision.lock().unwrap_or_else(|e| e.into_inner());
        if *guard > seen || self.stopping() {
            return *guard;
        }
        let (guard, _) = self.changed.wait_timeout(guard, timeout).unwrap_or_else(|e| e.into_inner());
        *guard
    }

    fn publish(&self, revision: u64) {
        let mut guard = self.revision.lock().unwrap_or_else(|e| e.into_inner());
        if *guard != revision {
            *guard = revision;
            self.changed.notify_all();
        }
    }

    /// Whether the server is shutting down.
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// A running server.
pub struct Server {
    shared: Arc<Shared>,
    addr: SocketAddr,
    threads: Vec<JoinHandle<()>>,
}

impl Server {
    /// Binds 127.0.0.1, builds the world on the simulation thread with `build` (the world is
    /// not `Send`, so it is made where it lives) and starts serving it. Returns the server and
    /// what `build` returned besides the world (the loader's outcome).
    pub fn start<T: Send + 'static>(build: impl FnOnce() -> (World, T) + Send + 'static, config: Config) -> std::io::Result<(Server, T)> {
        let listener = TcpListener::bind(("127.0.0.1", config.port))?;
        let addr = listener.local_addr()?;
        let (job_tx, job_rx) = mpsc::channel::<Job>();
        let shared = Arc::new(Shared {
            jobs: Mutex::new(job_tx),
            pending: AtomicUsize::new(0),
            revision: Mutex::new(0),
            changed: Condvar::new(),
            watchers: AtomicUsize::new(0),
            connections: AtomicUsize::new(0),
            requests: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            resources: discovery::resources(),
            openapi: openapi::OpenApi::shared().expect("the schemas are embedded natively"),
            config,
        });
        let mut threads = Vec::new();
        let (built_tx, built_rx) = mpsc::sync_channel::<T>(1);
        let sim_shared = shared.clone();
        threads.push(std::thread::Builder::new().name("kubesim-sim".into()).spawn(move || {
            let (world, extra) = build();
            let mut sim = Sim::new(world, sim_shared.config.speed, sim_shared.config.paused);
            sim_shared.publish(sim.world.api().store().revision());
            let _ = built_tx.send(extra);
            sim_loop(&sim_shared, &mut sim, &job_rx);
        })?);
        let extra = built_rx.recv().map_err(|_| std::io::Error::other("building the world failed"))?;
        let accept_shared = shared.clone();
        threads.push(std::thread::Builder::new().name("kubesim-accept".into()).spawn(move || accept_loop(&accept_shared, listener))?);
        Ok((Server { shared, addr, threads }, extra))
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The shared state (tests and benchmarks).
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Runs `f` on the world and its clock (on the simulation thread) and returns its result.
    pub fn with_sim<R: Send + 'static>(&self, f: impl FnOnce(&mut Sim) -> R + Send + 'static) -> Option<R> {
        self.shared.run(f).ok()
    }

    /// A kubeconfig for this server (cluster, user and context `kubesim`).
    pub fn kubeconfig(&self) -> String {
        kubeconfig(&self.url())
    }

    /// Stops accepting, ends watches and joins the server's own threads.
    pub fn shutdown(mut self) {
        self.stop_threads();
    }

    fn stop_threads(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.changed.notify_all();
        // Wake the simulation thread.
        let _ = self.shared.run(|_| ());
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop_threads();
    }
}

/// A kubeconfig pointing at `url`.
pub fn kubeconfig(url: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: kubesim\n  cluster:\n    server: {url}\ncontexts:\n- name: kubesim\n  context:\n    cluster: kubesim\n    user: kubesim-admin\n    namespace: default\ncurrent-context: kubesim\nusers:\n- name: kubesim-admin\n  user:\n    token: kubesim\npreferences: {{}}\n"
    )
}

fn sim_loop(shared: &Shared, sim: &mut Sim, jobs: &mpsc::Receiver<Job>) {
    let run_job = |sim: &mut Sim, job: Job| {
        shared.pending.fetch_sub(1, Ordering::SeqCst);
        job(sim);
        shared.publish(sim.world.api().store().revision());
    };
    loop {
        while let Ok(job) = jobs.try_recv() {
            run_job(sim, job);
        }
        if shared.stopping() {
            return;
        }
        let yield_now = || shared.pending.load(Ordering::SeqCst) > 0;
        let ran = sim.advance(Duration::from_millis(25), &yield_now);
        shared.publish(sim.world.api().store().revision());
        if !ran {
            match jobs.recv_timeout(Duration::from_millis(4)) {
                Ok(job) => run_job(sim, job),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
    }
}

fn accept_loop(shared: &Arc<Shared>, listener: TcpListener) {
    for stream in listener.incoming() {
        if shared.stopping() {
            break;
        }
        let Ok(mut stream) = stream else { continue };
        if shared.connections.load(Ordering::SeqCst) >= shared.config.max_connections {
            let failure = status::Failure::too_many_requests("too many open connections, please try again later");
            let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
            let _ = http::write_response(&mut stream, &failure.response(), false, false);
            continue;
        }
        shared.connections.fetch_add(1, Ordering::SeqCst);
        let shared = shared.clone();
        let spawned = std::thread::Builder::new().name("kubesim-conn".into()).stack_size(1 << 20).spawn(move || {
            serve_connection(&shared, stream);
            shared.connections.fetch_sub(1, Ordering::SeqCst);
        });
        if spawned.is_err() {
            // The thread count is bounded by max_connections; a failed spawn drops the socket.
            continue;
        }
    }
}

fn serve_connection(shared: &Shared, stream: TcpStream) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(250)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(10)));
    let _ = stream.set_nodelay(true);
    let Ok(read_half) = stream.try_clone() else { return };
    let mut reader = BufReader::new(read_half);
    let mut stream = stream;
    loop {
        if shared.stopping() {
            return;
        }
        let request = match http::read_request(&mut reader, shared.config.limits) {
            Ok(r) => r,
            Err(http::ReadError::Closed) => return,
            Err(e) => {
                let failure = match e {
                    http::ReadError::Timeout => status::Failure::new(408, "Timeout", "the client did not send a complete request in time"),
                    http::ReadError::TooLarge(limit) => status::Failure::too_large(limit),
                    http::ReadError::HeadTooLarge => status::Failure::new(431, "RequestHeaderFieldsTooLarge", "request header fields too large"),
                    http::ReadError::Malformed(m) => status::Failure::bad_request(m),
                    http::ReadError::Closed => return,
                };
                let _ = http::write_response(&mut stream, &failure.response(), false, false);
                return;
            }
        };
        shared.requests.fetch_add(1, Ordering::SeqCst);
        let keep_alive = request.keep_alive();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| api::handle(shared, &request, &mut stream)));
        match outcome {
            Ok(api::Outcome::Respond(response)) => {
                if http::write_response(&mut stream, &response, keep_alive, request.method == "HEAD").is_err() || !keep_alive {
                    return;
                }
            }
            Ok(api::Outcome::Streamed) => return,
            Err(_) => {
                let failure = status::Failure::internal("the server hit a bug handling this request");
                let _ = http::write_response(&mut stream, &failure.response(), false, false);
                return;
            }
        }
    }
}
