//! The kubesim image catalogue: what every container image the Kubernetes documentation uses
//! really is, so that containers can run faithful program models over a modelled filesystem.
//!
//! * [`parse_reference`] parses and normalises references exactly as containerd and the kubelet
//!   do (`github.com/distribution/reference`), with the same error texts.
//! * [`resolve`] turns a reference into an [`ImageInfo`]: canonical reference, repo digest, image
//!   id, sizes, the image config (Entrypoint, Cmd, Env, WorkingDir, User, ExposedPorts, Volumes,
//!   StopSignal), the base OS, the installed programs (path → implementation) and notable files.
//!   A tag that does not exist fails with containerd's `not found` error; a registry under
//!   `.invalid` fails with the DNS error; a repository the catalogue does not know resolves to a
//!   [generic](ImageInfo::generic) image.
//! * [`repositories`] lists the catalogue (for the UI).
//!
//! The data (tags, Dockerfile facts, programs, files) is embedded text under `data/`, parsed once
//! on first use. It describes the registries as of [`snapshot_date`] (the Kubernetes v1.34 release).
//!
//! ```
//! use kubesim_images::resolve;
//!
//! let nginx = resolve("nginx:1.14.2").unwrap();
//! assert_eq!(nginx.reference, "docker.io/library/nginx:1.14.2");
//! assert_eq!(nginx.config.cmd, ["nginx", "-g", "daemon off;"]);
//! assert_eq!(nginx.env_var("NGINX_VERSION"), Some("1.14.2-1~stretch"));
//! assert_eq!(nginx.os.version, "9");
//! assert_eq!(nginx.program("/bin/sh"), Some("dash"));
//!
//! let busybox = resolve("busybox:1.28").unwrap();
//! assert!(busybox.config.entrypoint.is_empty());
//! assert_eq!(busybox.config.cmd, ["sh"]);
//! assert_eq!(busybox.program("/bin/nslookup"), Some("busybox-1.28"));
//!
//! let err = resolve("nginx:1.161").unwrap_err();
//! assert_eq!(err.grpc_code(), "NotFound");
//! assert_eq!(err.message(), "failed to pull and unpack image \"docker.io/library/nginx:1.161\": failed to resolve reference \"docker.io/library/nginx:1.161\": docker.io/library/nginx:1.161: not found");
//!
//! let app = resolve("myorg/api:1.2").unwrap();
//! assert!(app.generic);
//! ```

#![deny(missing_docs)]

mod blobs;
mod catalogue;
mod reference;
mod resolve;
mod sha256;

use std::collections::BTreeMap;

use serde::Serialize;

pub use reference::{parse_reference, Reference, ReferenceError, DEFAULT_DOMAIN, DEFAULT_TAG};

use catalogue::{catalogue, Catalogue, Repo};
use resolve::{build, concrete, Concrete};

/// The date the catalogue describes the registries at (tags and what floating tags point to).
pub fn snapshot_date() -> &'static str {
    &catalogue().snapshot
}

/// An image configuration, as `docker inspect` / `crictl inspecti` show its `config`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ImageConfig {
    /// `Entrypoint` (empty when unset).
    pub entrypoint: Vec<String>,
    /// `Cmd` (empty when unset).
    pub cmd: Vec<String>,
    /// `Env`, as `KEY=value` in image order.
    pub env: Vec<String>,
    /// `WorkingDir` (empty means `/`).
    pub working_dir: String,
    /// `User` (empty means root).
    pub user: String,
    /// `ExposedPorts` (`80/tcp`).
    pub exposed_ports: Vec<String>,
    /// `Volumes`.
    pub volumes: Vec<String>,
    /// `StopSignal` (`SIGQUIT` for nginx ≥ 1.19.5); `None` means SIGTERM.
    pub stop_signal: Option<String>,
}

/// The operating system an image is built on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OsInfo {
    /// The catalogue's base id (`debian-12`, `alpine-3`, `busybox-uclibc`, `distroless-static`, `scratch`).
    pub id: String,
    /// `busybox`, `alpine`, `debian`, `ubuntu`, `oraclelinux`, `centos`, `fedora`, `distroless`, `scratch`.
    pub flavour: String,
    /// A human name (`Debian GNU/Linux 12 (bookworm)`).
    pub name: String,
    /// The release (`12`, `3.22.1`, `1.37.0`).
    pub version: String,
    /// The release codename, if any (`bookworm`).
    pub codename: String,
    /// `glibc`, `musl`, `uclibc` or `none` (static binaries).
    pub libc: String,
    /// Whether `/bin`, `/sbin` and `/lib` are symlinks into `/usr` (Debian 12+, Ubuntu 20.04+).
    pub merged_usr: bool,
}

/// A file in an image that programs or users read (`/etc/os-release`, nginx's `index.html`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ImageFile {
    /// Permission bits (`0o644`, `0o755`).
    pub mode: u32,
    /// The exact contents.
    pub data: String,
}

/// Everything the catalogue knows about one pulled image.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ImageInfo {
    /// The reference containerd pulls and reports (`docker.io/library/nginx:1.14.2`, or
    /// `docker.io/library/busybox@sha256:…` for a digest reference).
    pub reference: String,
    /// The repository name (`docker.io/library/nginx`).
    pub repository: String,
    /// The tag asked for, if the reference named one and no digest.
    pub tag: Option<String>,
    /// The build the tag names (`1.29.1` for `nginx:latest`, `1.14.2` for `nginx:1.14`).
    pub resolved_tag: String,
    /// `RepoTags` (empty for a pull by digest).
    pub repo_tags: Vec<String>,
    /// `RepoDigests` entry: `docker.io/library/nginx@sha256:…` (the manifest list / index digest).
    pub repo_digest: String,
    /// The manifest list / index digest (`sha256:…`).
    pub digest: String,
    /// The image id: the linux/amd64 config digest (`sha256:…`).
    pub image_id: String,
    /// Whether `digest` and `image_id` are derived from the reference rather than recorded from the registry.
    pub digest_synthetic: bool,
    /// What a linux/amd64 pull downloads (compressed layers), in bytes.
    pub compressed_size: u64,
    /// The unpacked size on disk, in bytes.
    pub unpacked_size: u64,
    /// Whether the sizes are estimates (base image plus a typical layer) rather than recorded.
    pub size_estimated: bool,
    /// The image config.
    pub config: ImageConfig,
    /// The base operating system.
    pub os: OsInfo,
    /// Executables: absolute path → implementation (`busybox`, `dash`, `bash`, `coreutils`, `nginx`, …).
    pub programs: BTreeMap<String, String>,
    /// Notable files by absolute path.
    pub files: BTreeMap<String, ImageFile>,
    /// True when the repository is not in the catalogue and this is the generic stand-in: a
    /// long-running server on the container's declared ports, on a small Debian base with `sh`.
    pub generic: bool,
    /// The images this one is built on, nearest first (`docker.io/library/debian:9.13-slim`).
    pub bases: Vec<String>,
    /// What the catalogue is unsure of, or approximates, for this image.
    pub notes: Vec<String>,
}

impl ImageInfo {
    /// The image environment as (name, value) pairs.
    pub fn env(&self) -> Vec<(&str, &str)> {
        self.config.env.iter().map(|kv| kv.split_once('=').unwrap_or((kv.as_str(), ""))).collect()
    }

    /// One environment variable of the image.
    pub fn env_var(&self, name: &str) -> Option<&str> {
        self.env().into_iter().rev().find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    /// The command a container runs when the pod sets neither `command` nor `args`: Entrypoint + Cmd.
    pub fn default_command(&self) -> Vec<String> {
        self.config.entrypoint.iter().chain(self.config.cmd.iter()).cloned().collect()
    }

    /// The implementation of the executable at `path`, following `/bin` ↔ `/usr/bin` (and `/sbin`,
    /// `/lib`) when the image has a merged `/usr`.
    pub fn program(&self, path: &str) -> Option<&str> {
        if let Some(i) = self.programs.get(path) {
            return Some(i);
        }
        if self.os.merged_usr {
            for (a, b) in [("/bin/", "/usr/bin/"), ("/sbin/", "/usr/sbin/"), ("/lib/", "/usr/lib/")] {
                if let Some(rest) = path.strip_prefix(a) {
                    return self.programs.get(&format!("{b}{rest}")).map(String::as_str);
                }
                if let Some(rest) = path.strip_prefix(b) {
                    return self.programs.get(&format!("{a}{rest}")).map(String::as_str);
                }
            }
        }
        None
    }

    /// Looks a command up as `execvp` does: a name with a `/` is a path; otherwise each `PATH`
    /// directory is tried in order. Returns the path found and its implementation.
    pub fn which(&self, command: &str) -> Option<(String, &str)> {
        if command.contains('/') {
            return self.program(command).map(|i| (command.to_string(), i));
        }
        let path = self.env_var("PATH").unwrap_or("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        for dir in path.split(':').filter(|d| !d.is_empty()) {
            let candidate = format!("{}/{command}", dir.trim_end_matches('/'));
            if let Some(i) = self.program(&candidate) {
                return Some((candidate, i));
            }
        }
        None
    }

    /// A notable file of the image.
    pub fn file(&self, path: &str) -> Option<&ImageFile> {
        self.files.get(path)
    }
}

/// Which containerd pull path produced an error; their texts differ in the middle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PullPath {
    /// `client.Pull` (`use_local_image_pull`, and what containerd 2.1+ falls back to whenever a
    /// CRI image option such as `discard_unpacked_layers` is set, as kind does): `failed to resolve reference "…"`.
    #[default]
    LocalPull,
    /// The transfer service (containerd 2.1+ default otherwise): `failed to resolve image`.
    TransferService,
}

/// Why an image cannot be pulled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PullError {
    /// The reference does not parse (the kubelet reports `InvalidImageName` and never calls the runtime).
    InvalidReference {
        /// The image string as written in the pod.
        image: String,
        /// The parse error.
        error: ReferenceError,
    },
    /// The repository is known but has no such tag or digest.
    NotFound {
        /// The reference containerd resolved (`docker.io/library/nginx:1.161`).
        reference: String,
    },
    /// The registry host does not resolve (hosts under the reserved `.invalid` TLD).
    NoSuchHost {
        /// The reference containerd resolved.
        reference: String,
        /// The registry host (`registry.invalid`).
        host: String,
        /// The URL of containerd's first request (`https://registry.invalid/v2/app/manifests/1`).
        url: String,
    },
}

impl PullError {
    /// The gRPC status code the CRI returns: `NotFound` for a missing tag, `Unknown` for network
    /// errors, `InvalidArgument` for unparsable references.
    pub fn grpc_code(&self) -> &'static str {
        match self {
            PullError::InvalidReference { .. } => "InvalidArgument",
            PullError::NotFound { .. } => "NotFound",
            PullError::NoSuchHost { .. } => "Unknown",
        }
    }

    /// containerd's error text (the `desc` of the gRPC status), as the local-pull path words it.
    pub fn message(&self) -> String {
        self.message_via(PullPath::LocalPull)
    }

    /// containerd's error text for the given pull path.
    pub fn message_via(&self, path: PullPath) -> String {
        let resolve = |r: &str| match path {
            PullPath::LocalPull => format!("failed to resolve reference {r:?}"),
            PullPath::TransferService => "failed to resolve image".to_string(),
        };
        match self {
            PullError::InvalidReference { image, error } => format!("failed to parse image reference {image:?}: {error}"),
            PullError::NotFound { reference } => format!("failed to pull and unpack image {reference:?}: {}: {reference}: not found", resolve(reference)),
            PullError::NoSuchHost { reference, host, url } => {
                format!(
                    "failed to pull and unpack image {reference:?}: {}: failed to do request: Head {url:?}: dial tcp: lookup {host}: no such host",
                    resolve(reference)
                )
            }
        }
    }

    /// The gRPC error as the kubelet sees it: `rpc error: code = NotFound desc = …`.
    pub fn grpc_error(&self) -> String {
        format!("rpc error: code = {} desc = {}", self.grpc_code(), self.message())
    }

    /// The kubelet's event message: `Failed to pull image "nginx:1.161": rpc error: code = NotFound desc = …`
    /// (or, for an unparsable reference, the `InspectFailed` text).
    pub fn kubelet_message(&self, image: &str) -> String {
        match self {
            PullError::InvalidReference { error, .. } => error.kubelet_message(image),
            _ => format!("Failed to pull image {image:?}: {}", self.grpc_error()),
        }
    }

    /// The container waiting reason the kubelet sets: `InvalidImageName` or `ErrImagePull`.
    pub fn kubelet_reason(&self) -> &'static str {
        match self {
            PullError::InvalidReference { .. } => "InvalidImageName",
            _ => "ErrImagePull",
        }
    }
}

impl std::fmt::Display for PullError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for PullError {}

/// One repository of the catalogue, for listing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepositoryInfo {
    /// The repository name (`docker.io/library/nginx`).
    pub name: String,
    /// The familiar name (`nginx`, `registry.k8s.io/pause`).
    pub familiar: String,
    /// One line on what the image is.
    pub summary: String,
    /// Where the catalogue's facts come from.
    pub sources: Vec<String>,
    /// Uncertainties and approximations.
    pub notes: Vec<String>,
    /// Whether it is a Docker official image (`docker.io/library/…`).
    pub official: bool,
    /// How many tags exist.
    pub tag_count: usize,
    /// Floating tags and the build each points to at the snapshot (`latest` → `1.29.1`).
    pub floating: Vec<(String, String)>,
}

impl RepositoryInfo {
    /// Every tag of the repository, newest versions first.
    pub fn tags(&self) -> Vec<String> {
        let mut tags = catalogue().repo(&self.name).map(Repo::all_tags).unwrap_or_default();
        resolve::sort_tags(&mut tags);
        tags
    }
}

fn repository_info(listed: &Repo) -> RepositoryInfo {
    let familiar = parse_reference(&listed.name).map(|r| r.familiar()).unwrap_or_else(|_| listed.name.clone());
    let repo = catalogue().repo(&listed.name).unwrap_or(listed);
    let mut floating: Vec<(String, String)> = Vec::new();
    for w in repo.alias.keys() {
        if let Some(c) = concrete(repo, w) {
            floating.push((w.clone(), c.tag()));
        }
    }
    let summary = match &listed.same {
        Some(target) => format!("The old name of {target}, which it redirects to."),
        None => repo.summary.clone(),
    };
    RepositoryInfo {
        name: listed.name.clone(),
        familiar,
        summary,
        sources: repo.source.clone(),
        notes: repo.notes.clone(),
        official: repo.name.starts_with("docker.io/library/"),
        tag_count: repo.all_tags().len(),
        floating,
    }
}

/// Every repository of the catalogue, by name.
pub fn repositories() -> Vec<RepositoryInfo> {
    catalogue().repos.iter().filter(|r| !r.hidden).map(repository_info).collect()
}

/// One repository by name (any form [`parse_reference`] accepts: `nginx`, `docker.io/library/nginx`).
pub fn repository(name: &str) -> Option<RepositoryInfo> {
    let r = parse_reference(name).ok()?;
    let cat = catalogue();
    cat.by_name.get(&r.name()).map(|&i| &cat.repos[i]).filter(|r| !r.hidden).map(repository_info)
}

/// The key a build's synthetic digest derives from: the first pattern of its config group, so
/// tags that alias one build (`1.29.1`, `1.29.1-bookworm`) share a digest.
fn build_key(repo: &Repo, c: &Concrete) -> String {
    if let Some(g) = repo.groups.iter().find(|g| g.patterns.contains(&c.pattern)) {
        return g.patterns[0].replace('@', &c.version);
    }
    // A pinned tag without a group of its own (`1.29.1-bookworm`) is the same build as its
    // family's tag when the pin changes nothing (its base is the family's base).
    for fallback in resolve::unpin_patterns(&c.pattern) {
        if let Some(g) = repo.groups.iter().find(|g| g.patterns.contains(&fallback)) {
            let other = Concrete { version: c.version.clone(), pattern: fallback.clone() };
            if repo.tag_exists(&c.version, &fallback) && resolve::layer(repo, &other).from == resolve::layer(repo, c).from {
                return g.patterns[0].replace('@', &c.version);
            }
            break;
        }
    }
    c.tag()
}

fn synthetic(kind: &str, name: &str, key: &str) -> String {
    format!("sha256:{}", sha256::hex(format!("kubesim synthetic {kind} {name}:{key}").as_bytes()))
}

/// The (index digest, image id, synthetic?) of a build.
fn digests(repo: &Repo, c: &Concrete) -> (String, String, bool, Option<(u64, u64)>) {
    let key = build_key(repo, c);
    let entry = repo.digests.get(&c.tag()).or_else(|| repo.digests.get(&key));
    let index = entry.and_then(|e| e.index.clone());
    let id = entry.and_then(|e| e.id.clone());
    let size = entry.and_then(|e| e.size);
    let synthetic_flag = index.is_none();
    (index.unwrap_or_else(|| synthetic("index", &repo.name, &key)), id.unwrap_or_else(|| synthetic("config", &repo.name, &key)), synthetic_flag, size)
}

fn no_such_host(r: &Reference) -> PullError {
    let reference = r.docker_ref();
    let object = r.digest().map(str::to_string).unwrap_or_else(|| r.tag().unwrap_or(DEFAULT_TAG).to_string());
    let host = if r.domain() == DEFAULT_DOMAIN { "registry-1.docker.io".to_string() } else { r.domain().to_string() };
    PullError::NoSuchHost { reference, host: r.host().to_string(), url: format!("https://{host}/v2/{}/manifests/{object}", r.path()) }
}

fn assemble(cat: &Catalogue, repo: &Repo, c: &Concrete, r: &Reference) -> ImageInfo {
    let built = build(cat, repo, c, 0);
    let (digest, image_id, digest_synthetic, size) = digests(repo, c);
    let mut info = ImageInfo {
        reference: r.docker_ref(),
        repository: r.name(),
        tag: if r.digest().is_some() { None } else { Some(r.tag().unwrap_or(DEFAULT_TAG).to_string()) },
        resolved_tag: c.tag(),
        repo_tags: if r.digest().is_some() { Vec::new() } else { vec![r.docker_ref()] },
        repo_digest: format!("{}@{digest}", r.name()),
        digest,
        image_id,
        digest_synthetic,
        compressed_size: built.size.0,
        unpacked_size: built.size.1,
        size_estimated: built.size_estimated,
        config: built.config,
        os: built.os.unwrap_or_else(|| OsInfo {
            id: "scratch".into(),
            flavour: "scratch".into(),
            name: "scratch (no base)".into(),
            libc: "none".into(),
            ..OsInfo::default()
        }),
        programs: built.programs,
        files: built.files,
        generic: built.generic,
        bases: built.bases,
        notes: built.notes,
    };
    if let Some((a, b)) = size {
        info.compressed_size = a;
        info.unpacked_size = b;
        info.size_estimated = false;
    }
    if info.unpacked_size == 0 {
        info.unpacked_size = info.compressed_size.saturating_mul(5) / 2;
    }
    if digest_synthetic {
        info.notes.push("digest and image id are synthetic (derived from the reference), not the registry's".into());
    }
    info
}

/// [`resolve`], shared: the catalogue is fixed, so the answer for an image string never
/// changes and each thread keeps the answers it has computed (at most [`RESOLVED_CAPACITY`]
/// strings; the cache starts over when full). Kubelets resolve an image on every container
/// start and pull-size check; resolving builds the image's program and file maps afresh.
pub fn resolve_shared(image: &str) -> Result<std::sync::Arc<ImageInfo>, PullError> {
    type Answers = BTreeMap<String, Result<std::sync::Arc<ImageInfo>, PullError>>;
    thread_local! {
        static RESOLVED: std::cell::RefCell<Answers> = const { std::cell::RefCell::new(BTreeMap::new()) };
    }
    if let Some(answer) = RESOLVED.with(|r| r.borrow().get(image).cloned()) {
        return answer;
    }
    let answer = resolve(image).map(std::sync::Arc::new);
    RESOLVED.with(|r| {
        let mut r = r.borrow_mut();
        if r.len() >= RESOLVED_CAPACITY {
            r.clear();
        }
        r.insert(image.to_string(), answer.clone());
    });
    answer
}

/// How many image strings [`resolve_shared`] remembers per thread.
pub const RESOLVED_CAPACITY: usize = 1024;

/// Resolves an image reference the way a pull would, without any node state.
///
/// * A malformed reference fails with [`PullError::InvalidReference`].
/// * A registry host under `.invalid` fails with [`PullError::NoSuchHost`].
/// * A catalogued repository without the tag (or digest) fails with [`PullError::NotFound`].
/// * A repository the catalogue does not know resolves to the generic image (`generic == true`).
///
/// ```
/// let info = kubesim_images::resolve("registry.k8s.io/pause:3.10").unwrap();
/// assert_eq!(info.config.entrypoint, ["/pause"]);
/// let err = kubesim_images::resolve("registry.invalid/app:1").unwrap_err();
/// assert!(err.message().ends_with("dial tcp: lookup registry.invalid: no such host"));
/// ```
pub fn resolve(image: &str) -> Result<ImageInfo, PullError> {
    let r = parse_reference(image).map_err(|error| PullError::InvalidReference { image: image.to_string(), error })?;
    let host = r.host();
    if host == "invalid" || host.ends_with(".invalid") {
        return Err(no_such_host(&r));
    }
    let cat = catalogue();
    let Some(repo) = cat.repo(&r.name()) else {
        return Ok(generic(cat, &r));
    };
    let not_found = || PullError::NotFound { reference: r.docker_ref() };
    let c = if let Some(d) = r.digest() {
        by_digest(repo, d).ok_or_else(not_found)?
    } else {
        concrete(repo, r.tag().unwrap_or(DEFAULT_TAG)).ok_or_else(not_found)?
    };
    Ok(assemble(cat, repo, &c, &r))
}

/// Finds the build a digest names: a recorded digest, or the synthetic digest of some tag.
fn by_digest(repo: &Repo, digest: &str) -> Option<Concrete> {
    for (tag, e) in &repo.digests {
        if e.index.as_deref() == Some(digest) || e.id.as_deref() == Some(digest) {
            if let Some(c) = concrete(repo, tag) {
                return Some(c);
            }
        }
    }
    for tag in repo.all_tags() {
        if let Some(c) = concrete(repo, &tag) {
            if digests(repo, &c).0 == digest {
                return Some(c);
            }
        }
    }
    None
}

/// The generic image for a repository the catalogue does not know.
fn generic(cat: &Catalogue, r: &Reference) -> ImageInfo {
    let repo = cat.repo("kubesim.invalid/generic").expect("the catalogue defines the generic image");
    let c = Concrete { version: "latest".into(), pattern: "@".into() };
    let mut info = assemble(cat, repo, &c, r);
    let key = r.docker_ref();
    info.generic = true;
    info.resolved_tag = r.tag().unwrap_or(DEFAULT_TAG).to_string();
    info.digest = r.digest().map(str::to_string).unwrap_or_else(|| synthetic("index", &r.name(), &key));
    info.repo_digest = format!("{}@{}", r.name(), info.digest);
    info.image_id = synthetic("config", &r.name(), &key);
    info.digest_synthetic = true;
    info.notes.retain(|n| !n.starts_with("digest and image id are synthetic"));
    info.notes.insert(0, format!("{} is not in the image catalogue: modelled as a generic long-running server on its declared ports", r.name()));
    info
}
