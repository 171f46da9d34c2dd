//! The node's image store (containerd's content and image stores): which images are pulled,
//! what a pull costs, why it fails, and each image's filesystem as a copy-on-write tree built
//! from the image catalogue (`kubesim-images`) — its executables (files naming the program
//! that implements them, `#!kubesim <implementation>`), its notable files, and the standard
//! directories.

use kubesim_images::{ImageInfo, PullError};
use kubesim_os::fs::Tree;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A pulled image.
#[derive(Clone, Debug)]
pub struct PulledImage {
    /// What the catalogue knows of it (shared by every node that pulled it).
    pub info: Arc<ImageInfo>,
    /// Its root filesystem (containers start from an O(1) copy-on-write clone).
    pub tree: Tree,
    /// The size the node reports for it (`status.images[].sizeBytes`, the Pulled event).
    pub size: u64,
}

impl PulledImage {
    /// The normalized reference (`docker.io/library/nginx:1.14.2`).
    pub fn reference(&self) -> &str {
        &self.info.reference
    }
    /// The digest reference (`docker.io/library/nginx@sha256:…`).
    pub fn digest_ref(&self) -> &str {
        &self.info.repo_digest
    }
}

/// The store.
#[derive(Clone, Debug, Default)]
pub struct ImageStore {
    images: BTreeMap<String, Arc<PulledImage>>,
    /// Scenario overrides of image sizes, by reference or base name (the `kubesim-images`
    /// ConfigMap's `sizes`).
    pub size_overrides: BTreeMap<String, u64>,
    /// References the scenario declares missing from their registry (its `missing` key).
    pub missing: Vec<String>,
}

impl ImageStore {
    /// What pulling `image` would fetch, or containerd's error for it. Known repositories
    /// with unknown tags fail with NotFound; registries under `.invalid` fail to resolve;
    /// repositories the catalogue does not know resolve to the generic image.
    pub fn resolve(&self, image: &str) -> Result<Arc<ImageInfo>, PullError> {
        let info = kubesim_images::resolve_shared(image)?;
        if self.missing.iter().any(|m| m == image || kubesim_images::resolve_shared(m).is_ok_and(|i| i.reference == info.reference)) {
            return Err(PullError::NotFound { reference: info.reference.clone() });
        }
        Ok(info)
    }

    /// The bytes a pull of `image` downloads (for its latency); 0 if it cannot be resolved.
    pub fn pull_size(&self, image: &str) -> u64 {
        match self.resolve(image) {
            Ok(info) => self.size_of(&info),
            Err(_) => 0,
        }
    }

    fn size_of(&self, info: &ImageInfo) -> u64 {
        let base = info.repository.rsplit('/').next().unwrap_or("");
        self.size_overrides.get(&info.reference).or_else(|| self.size_overrides.get(base)).copied().unwrap_or(info.compressed_size)
    }

    /// PullImage: resolves, builds the image's filesystem, stores it.
    pub fn pull(&mut self, image: &str) -> Result<Arc<PulledImage>, PullError> {
        let info = self.resolve(image)?;
        if let Some(existing) = self.images.get(&info.reference) {
            return Ok(existing.clone());
        }
        let size = self.size_of(&info);
        let tree = image_tree_shared(&info);
        let pulled = Arc::new(PulledImage { info, tree, size });
        self.images.insert(pulled.info.reference.clone(), pulled.clone());
        Ok(pulled)
    }

    /// The pulled image a reference names, if present.
    pub fn status(&self, image: &str) -> Option<&Arc<PulledImage>> {
        // The common case from the per-thread resolution memo (the kubelet asks on every
        // container start and status; parsing and formatting the reference each time was
        // most of the cost): the image resolves to the reference it was pulled under.
        if let Some(pulled) = kubesim_images::resolve_shared(image).ok().and_then(|info| self.images.get(&info.reference)) {
            return Some(pulled);
        }
        let reference = kubesim_images::parse_reference(image).ok()?.with_default_tag().docker_ref();
        self.images.get(&reference).or_else(|| self.images.values().find(|i| i.info.reference == reference || i.info.repo_digest == reference))
    }

    /// Every pulled image.
    pub fn list(&self) -> impl Iterator<Item = &Arc<PulledImage>> {
        self.images.values()
    }

    /// Adds an image as present without a pull (the pause image every node has).
    pub fn preload(&mut self, image: &str) {
        let _ = self.pull(image);
    }
}

/// What the catalogue's implementation names become in the container's filesystem: the
/// `#!kubesim <name>` marker that `kubesim-os` (or the application models) dispatch on.
pub fn marker_for(implementation: &str) -> &str {
    match implementation {
        // GNU userland packages: the GNU family of applets, chosen by argv[0].
        "coreutils" | "grep" | "sed" | "findutils" | "mawk" | "gawk" | "procps" | "procps-ng" | "util-linux" | "debianutils" | "hostname" | "gzip" | "tar"
        | "sysvinit-utils" | "diffutils" | "ncurses-bin" | "login" | "passwd" | "mount" | "bzip2" | "xz-utils" => "coreutils",
        // Network tools the busybox family implements with the same options the docs use.
        "netcat-openbsd" | "ncat" | "wget" | "ping" | "iputils-ping" => "busybox",
        "bind9-nslookup" => "nslookup-bind",
        "bind9-dig" => "dig",
        "vish-stress" => "stress",
        other => other,
    }
}

/// [`image_tree`], shared: every node that pulls an image gets the same copy-on-write tree
/// (containers never write into it; their writes go to their own upper layer). The tree is a
/// pure function of the catalogue's entry, so each thread remembers the trees of the last
/// [`SHARED_TREES`] references it built; at 5,000 nodes this is one tree per image instead of
/// one per node.
fn image_tree_shared(info: &ImageInfo) -> Tree {
    thread_local! {
        static BUILT: std::cell::RefCell<BTreeMap<String, (ImageInfo, Tree)>> = const { std::cell::RefCell::new(BTreeMap::new()) };
    }
    if let Some(tree) = BUILT.with(|b| b.borrow().get(&info.reference).filter(|(i, _)| i == info).map(|(_, t)| t.clone())) {
        return tree;
    }
    let tree = image_tree(info);
    BUILT.with(|b| {
        let mut b = b.borrow_mut();
        if b.len() >= SHARED_TREES {
            b.clear();
        }
        b.insert(info.reference.clone(), (info.clone(), tree.clone()));
    });
    tree
}

/// How many images' trees [`image_tree_shared`] remembers per thread.
const SHARED_TREES: usize = 64;

/// The image's root filesystem.
pub fn image_tree(info: &ImageInfo) -> Tree {
    let mut tree = Tree::new();
    for dir in [
        "/bin",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/proc",
        "/root",
        "/run",
        "/sbin",
        "/sys",
        "/usr",
        "/usr/bin",
        "/usr/lib",
        "/usr/local",
        "/usr/local/bin",
        "/usr/sbin",
        "/usr/share",
        "/var",
        "/var/log",
        "/var/run",
    ] {
        tree.add_dir(dir, 0o755);
    }
    // The distributions' other top-level directories (what `ls /` shows in a shell in the
    // container): Debian's and Ubuntu's base images carry boot, lib64, media, mnt, opt and
    // srv, Alpine's media, mnt, opt and srv.
    let distribution_dirs: &[&str] = match info.os.flavour.as_str() {
        "debian" | "ubuntu" => &["/boot", "/lib64", "/media", "/mnt", "/opt", "/srv"],
        "alpine" => &["/media", "/mnt", "/opt", "/srv"],
        _ => &[],
    };
    for dir in distribution_dirs {
        tree.add_dir(dir, 0o755);
    }
    tree.add_dir("/tmp", 0o1777);
    tree.add_dir("/root", 0o700);
    if !info.config.working_dir.is_empty() {
        tree.add_dir(&info.config.working_dir, 0o755);
    }
    for (path, implementation) in &info.programs {
        tree.add_file(path, format!("#!kubesim {}\n", marker_for(implementation)), 0o755);
    }
    for (path, file) in &info.files {
        tree.add_file(path, file.data.clone(), file.mode);
    }
    if !info.files.contains_key("/etc/passwd") {
        tree.add_file("/etc/passwd", "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", 0o644);
    }
    if !info.files.contains_key("/etc/group") {
        tree.add_file("/etc/group", "root:x:0:\nnogroup:x:65534:\n", 0o644);
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_that_does_not_exist_fails_as_containerd_reports_it() {
        let mut store = ImageStore::default();
        let err = store.pull("nginx:1.161").unwrap_err();
        assert!(err.kubelet_message("nginx:1.161").contains("docker.io/library/nginx:1.161: not found"), "{}", err.kubelet_message("nginx:1.161"));
        assert!(store.pull("nginx:1.14.2").is_ok());
        assert!(store.status("nginx:1.14.2").is_some());
        assert!(store.status("docker.io/library/nginx:1.14.2").is_some());
    }

    #[test]
    fn images_become_trees_with_their_programs_and_files() {
        let mut store = ImageStore::default();
        let nginx = store.pull("nginx:1.14.2").unwrap();
        assert_eq!(nginx.tree.read_path("/usr/share/nginx/html/index.html").map(|b| b.len()), Some(612));
        assert!(nginx.tree.read_path("/usr/sbin/nginx").is_some_and(|b| b.starts_with(b"#!kubesim nginx")));
        let busybox = store.pull("busybox:1.28").unwrap();
        assert!(busybox.tree.read_path("/bin/sh").is_some_and(|b| b.starts_with(b"#!kubesim busybox")));
    }

    /// `ls /` in a Debian-based image lists the distribution's top-level directories (the
    /// nginx image's: bin boot dev … srv sys tmp usr var); busybox's has none of them.
    #[test]
    fn a_debian_image_has_the_distributions_top_level_directories() {
        let mut store = ImageStore::default();
        let nginx = store.pull("nginx:1.27").unwrap();
        let is_dir = |tree: &Tree, path: &str| tree.get_path(path).is_some_and(|n| matches!(n.kind, kubesim_os::fs::NodeKind::Dir(_)));
        for dir in ["/boot", "/lib64", "/media", "/mnt", "/opt", "/srv", "/bin", "/usr", "/var"] {
            assert!(is_dir(&nginx.tree, dir), "{dir}");
        }
        let busybox = store.pull("busybox:1.36").unwrap();
        assert!(!is_dir(&busybox.tree, "/srv") && !is_dir(&busybox.tree, "/boot"));
    }

    #[test]
    fn scenario_overrides_declare_missing_images_and_sizes() {
        let mut store = ImageStore { missing: vec!["nginx:1.27".into()], ..Default::default() };
        store.size_overrides.insert("nginx".into(), 1_000);
        assert!(store.pull("nginx:1.27").is_err());
        assert_eq!(store.pull_size("nginx:1.14.2"), 1_000);
    }
}
