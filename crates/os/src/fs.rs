//! Filesystems: a copy-on-write in-memory [`Tree`], a container view with a mount table
//! ([`ContainerFs`] borrowing host-owned [`Volumes`], [`OwnedFs`] owning everything), and the
//! [`Fs`] trait every program uses.
//!
//! Paths given to [`Fs`] methods are absolute (programs join relative paths with their cwd
//! using [`join`]). Symlinks are followed component by component across mounts (at most 40
//! hops, then `ELOOP`), exactly like the kernel's path walk.
//!
//! The container root is a [`Tree`] cloned from the image tree: the clone shares every node
//! with the image (`Arc`) and copies only the nodes on the path of a write. This is the
//! observable behaviour of an overlay (image = read-only lower layer, the container's own
//! changes = upper layer, deletions hide the lower entry) without storing whiteouts: the
//! upper layer is implicit in which nodes are no longer shared.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// Largest regular file a write may produce (bytes); beyond it writes fail with `ENOSPC`.
pub const MAX_FILE_BYTES: usize = 64 << 20;
/// Symlink hops a path walk may take before `ELOOP`.
pub const MAX_SYMLINK_HOPS: usize = 40;

/// POSIX error numbers, with their glibc/musl strerror texts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)]
pub enum Errno {
    EPERM,
    ENOENT,
    ESRCH,
    EIO,
    EBADF,
    EACCES,
    EBUSY,
    EEXIST,
    EXDEV,
    ENOTDIR,
    EISDIR,
    EINVAL,
    EFBIG,
    ENOSPC,
    EROFS,
    EPIPE,
    ENAMETOOLONG,
    ENOTEMPTY,
    ELOOP,
    ENOEXEC,
}

impl Errno {
    /// The strerror text (`No such file or directory`).
    pub fn strerror(self) -> &'static str {
        match self {
            Errno::EPERM => "Operation not permitted",
            Errno::ENOENT => "No such file or directory",
            Errno::ESRCH => "No such process",
            Errno::EIO => "I/O error",
            Errno::EBADF => "Bad file descriptor",
            Errno::EACCES => "Permission denied",
            Errno::EBUSY => "Resource busy",
            Errno::EEXIST => "File exists",
            Errno::EXDEV => "Invalid cross-device link",
            Errno::ENOTDIR => "Not a directory",
            Errno::EISDIR => "Is a directory",
            Errno::EINVAL => "Invalid argument",
            Errno::EFBIG => "File too large",
            Errno::ENOSPC => "No space left on device",
            Errno::EROFS => "Read-only file system",
            Errno::EPIPE => "Broken pipe",
            Errno::ENAMETOOLONG => "File name too long",
            Errno::ENOTEMPTY => "Directory not empty",
            Errno::ELOOP => "Too many levels of symbolic links",
            Errno::ENOEXEC => "Exec format error",
        }
    }

    /// The errno number (Linux).
    pub fn code(self) -> i32 {
        match self {
            Errno::EPERM => 1,
            Errno::ENOENT => 2,
            Errno::ESRCH => 3,
            Errno::EIO => 5,
            Errno::EBADF => 9,
            Errno::EACCES => 13,
            Errno::EBUSY => 16,
            Errno::EEXIST => 17,
            Errno::EXDEV => 18,
            Errno::ENOTDIR => 20,
            Errno::EISDIR => 21,
            Errno::EINVAL => 22,
            Errno::EFBIG => 27,
            Errno::ENOSPC => 28,
            Errno::EROFS => 30,
            Errno::EPIPE => 32,
            Errno::ENAMETOOLONG => 36,
            Errno::ENOTEMPTY => 39,
            Errno::ELOOP => 40,
            Errno::ENOEXEC => 8,
        }
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.strerror())
    }
}

/// Character devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    /// `/dev/null` (1,3).
    Null,
    /// `/dev/zero` (1,5).
    Zero,
    /// `/dev/full` (1,7).
    Full,
    /// `/dev/random` (1,8).
    Random,
    /// `/dev/urandom` (1,9).
    Urandom,
    /// `/dev/tty` (5,0).
    Tty,
}

impl Device {
    /// (major, minor).
    pub fn numbers(self) -> (u32, u32) {
        match self {
            Device::Null => (1, 3),
            Device::Zero => (1, 5),
            Device::Full => (1, 7),
            Device::Random => (1, 8),
            Device::Urandom => (1, 9),
            Device::Tty => (5, 0),
        }
    }
}

/// What a node is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A regular file.
    File(Arc<Vec<u8>>),
    /// A directory: entries by name (names are shared `Arc<str>`s, so the copy-on-write copy
    /// of a directory a container writes into shares its names with the image's).
    Dir(Dir),
    /// A symbolic link and its target.
    Symlink(String),
    /// A character device.
    Dev(Device),
}

/// A directory's entries in name order: one sorted vector of (name, node) rather than a
/// B-tree, whose every node is allocated for eleven entries. Most directories hold one to a few
/// dozen entries, and each container copies some on write (its root, /etc, /dev, the mount
/// points the runtime makes) and each volume brings a few: a B-tree node of 280-odd bytes for
/// a directory of one entry was a tenth of a container's filesystem cost.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dir(Vec<(Arc<str>, Arc<Node>)>);

impl Dir {
    fn find(&self, name: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(n, _)| (**n).cmp(name))
    }
    /// The entry `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<Node>> {
        self.find(name).ok().map(|i| &self.0[i].1)
    }
    /// The entry `name`, mutably.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Arc<Node>> {
        self.find(name).ok().map(|i| &mut self.0[i].1)
    }
    /// Whether there is an entry `name`.
    pub fn contains_key(&self, name: &str) -> bool {
        self.find(name).is_ok()
    }
    fn insert_at(&mut self, i: usize, name: Arc<str>, node: Arc<Node>) {
        // A quarter more room at a time: a directory stops growing soon after it is made.
        if self.0.len() == self.0.capacity() {
            self.0.reserve_exact((self.0.len() / 4).max(1));
        }
        self.0.insert(i, (name, node));
    }
    /// Adds or replaces the entry `name`; the node it replaced.
    pub fn insert(&mut self, name: Arc<str>, node: Arc<Node>) -> Option<Arc<Node>> {
        match self.find(&name) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, node)),
            Err(i) => {
                self.insert_at(i, name, node);
                None
            }
        }
    }
    /// The entry `name`, added by `make` first if there is none.
    pub fn get_or_insert_with(&mut self, name: &str, make: impl FnOnce() -> Arc<Node>) -> &mut Arc<Node> {
        let i = match self.find(name) {
            Ok(i) => i,
            Err(i) => {
                self.insert_at(i, Arc::from(name), make());
                i
            }
        };
        &mut self.0[i].1
    }
    /// Removes the entry `name`; its node.
    pub fn remove(&mut self, name: &str) -> Option<Arc<Node>> {
        self.find(name).ok().map(|i| self.0.remove(i).1)
    }
    /// How many entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// Whether it has no entry.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The entries in name order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Arc<str>, &Arc<Node>)> + ExactSizeIterator {
        self.0.iter().map(|(n, c)| (n, c))
    }
    /// The entries' nodes in name order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Arc<Node>> + ExactSizeIterator {
        self.0.iter().map(|(_, c)| c)
    }
    /// The entries' nodes in name order, mutably.
    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Arc<Node>> + ExactSizeIterator {
        self.0.iter_mut().map(|(_, c)| c)
    }
    /// The entries' names in name order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Arc<str>> + ExactSizeIterator {
        self.0.iter().map(|(n, _)| n)
    }
}

impl<'a> IntoIterator for &'a Dir {
    type Item = (&'a Arc<str>, &'a Arc<Node>);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (Arc<str>, Arc<Node>)>, fn(&'a (Arc<str>, Arc<Node>)) -> (&'a Arc<str>, &'a Arc<Node>)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(n, c)| (n, c))
    }
}

/// One inode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Content.
    pub kind: NodeKind,
    /// Permission bits (`0o755`), without the file type.
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Modification time, milliseconds since the Unix epoch.
    pub mtime_ms: u64,
}

impl Node {
    /// A directory node.
    pub fn dir(mode: u32, mtime_ms: u64) -> Node {
        Node { kind: NodeKind::Dir(Dir::default()), mode, uid: 0, gid: 0, mtime_ms }
    }

    /// A file node.
    pub fn file(data: Vec<u8>, mode: u32, mtime_ms: u64) -> Node {
        Node { kind: NodeKind::File(Arc::new(data)), mode, uid: 0, gid: 0, mtime_ms }
    }

    fn meta(&self) -> Metadata {
        let (ftype, size, nlink, rdev) = match &self.kind {
            NodeKind::File(d) => (FileType::File, d.len() as u64, 1, (0, 0)),
            NodeKind::Dir(m) => {
                let subdirs = m.values().filter(|n| matches!(n.kind, NodeKind::Dir(_))).count() as u64;
                (FileType::Dir, 4096, 2 + subdirs, (0, 0))
            }
            NodeKind::Symlink(t) => (FileType::Symlink, t.len() as u64, 1, (0, 0)),
            NodeKind::Dev(d) => (FileType::CharDev, 0, 1, d.numbers()),
        };
        Metadata { ftype, mode: self.mode, uid: self.uid, gid: self.gid, size, mtime_ms: self.mtime_ms, nlink, rdev, mount_ro: false }
    }
}

/// File types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileType {
    /// Regular file.
    File,
    /// Directory.
    Dir,
    /// Symbolic link.
    Symlink,
    /// Character device.
    CharDev,
}

/// `stat` results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// Type.
    pub ftype: FileType,
    /// Permission bits.
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Size in bytes (4096 for directories, target length for symlinks).
    pub size: u64,
    /// Modification time (Unix ms).
    pub mtime_ms: u64,
    /// Link count.
    pub nlink: u64,
    /// Device numbers of a character device.
    pub rdev: (u32, u32),
    /// The node lives on a read-only mount.
    pub mount_ro: bool,
}

impl Metadata {
    /// Is a directory.
    pub fn is_dir(&self) -> bool {
        self.ftype == FileType::Dir
    }
    /// Is a regular file.
    pub fn is_file(&self) -> bool {
        self.ftype == FileType::File
    }
    /// Is a symlink.
    pub fn is_symlink(&self) -> bool {
        self.ftype == FileType::Symlink
    }
    /// The `ls -l` mode string (`drwxr-xr-x`).
    pub fn mode_string(&self) -> String {
        let mut s = String::with_capacity(10);
        s.push(match self.ftype {
            FileType::File => '-',
            FileType::Dir => 'd',
            FileType::Symlink => 'l',
            FileType::CharDev => 'c',
        });
        let m = self.mode;
        for (shift, special, ch) in [(6, 0o4000, 's'), (3, 0o2000, 's'), (0, 0o1000, 't')] {
            let bits = (m >> shift) & 7;
            s.push(if bits & 4 != 0 { 'r' } else { '-' });
            s.push(if bits & 2 != 0 { 'w' } else { '-' });
            let x = bits & 1 != 0;
            s.push(match (m & special != 0, x) {
                (true, true) => ch,
                (true, false) => ch.to_ascii_uppercase(),
                (false, true) => 'x',
                (false, false) => '-',
            });
        }
        s
    }
}

/// How [`Fs::write`] treats an existing file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    /// Create or truncate (`>`).
    Truncate,
    /// Create or append (`>>`).
    Append,
    /// Create; fail with `EEXIST` if it exists.
    CreateNew,
}

/// A directory entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// Name within the directory.
    pub name: String,
    /// `lstat` of the entry.
    pub meta: Metadata,
}

/// A copy-on-write directory tree. `Clone` is O(1) and shares every node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    root: Arc<Node>,
}

impl Default for Tree {
    fn default() -> Tree {
        Tree::new()
    }
}

/// Splits a path into its non-empty components other than `.`.
pub fn components(path: &str) -> Vec<String> {
    component_strs(path).map(str::to_string).collect()
}

/// [`components`], borrowed from the path.
pub fn component_strs(path: &str) -> impl Iterator<Item = &str> + Clone {
    path.split('/').filter(|c| !c.is_empty() && *c != ".")
}

/// Joins `path` onto `cwd` unless it is absolute (no normalisation).
pub fn join(cwd: &str, path: &str) -> String {
    if path.starts_with('/') {
        path.to_string()
    } else if cwd.ends_with('/') {
        format!("{cwd}{path}")
    } else {
        format!("{cwd}/{path}")
    }
}

/// Lexically normalises an absolute path (`/a/./b/../c` → `/a/c`).
pub fn normalize(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    format!("/{}", out.join("/"))
}

/// `basename` of a path (`/a/b/` → `b`).
pub fn basename(path: &str) -> String {
    let t = path.trim_end_matches('/');
    if t.is_empty() {
        return if path.is_empty() { String::new() } else { "/".into() };
    }
    t.rsplit('/').next().unwrap_or(t).to_string()
}

/// `dirname` of a path (`/a/b` → `/a`, `b` → `.`).
pub fn dirname(path: &str) -> String {
    let t = path.trim_end_matches('/');
    if t.is_empty() {
        return if path.starts_with('/') { "/".into() } else { ".".into() };
    }
    match t.rfind('/') {
        None => ".".into(),
        Some(i) => {
            let d = t[..i].trim_end_matches('/');
            if d.is_empty() {
                "/".into()
            } else {
                d.to_string()
            }
        }
    }
}

impl Tree {
    /// An empty tree (a root directory, mode 0755).
    pub fn new() -> Tree {
        Tree { root: Arc::new(Node::dir(0o755, 0)) }
    }

    /// The root node.
    pub fn root(&self) -> &Node {
        &self.root
    }

    /// The node at these components, without following symlinks.
    pub fn get(&self, comps: &[String]) -> Option<&Node> {
        self.get_at(comps.iter().map(String::as_str))
    }

    /// [`Tree::get`] of borrowed components.
    pub fn get_at<'c>(&self, comps: impl IntoIterator<Item = &'c str>) -> Option<&Node> {
        let mut node: &Node = &self.root;
        for c in comps {
            match &node.kind {
                NodeKind::Dir(m) => node = m.get(c)?,
                _ => return None,
            }
        }
        Some(node)
    }

    /// The node at an absolute path inside this tree (no symlinks followed).
    pub fn get_path(&self, path: &str) -> Option<&Node> {
        self.get(&components(path))
    }

    /// Mutable access to the node at `comps` (copying shared nodes on the way).
    pub fn get_mut(&mut self, comps: &[String]) -> Option<&mut Node> {
        self.get_mut_at(comps.iter().map(String::as_str))
    }

    /// [`Tree::get_mut`] of borrowed components.
    pub fn get_mut_at<'c>(&mut self, comps: impl IntoIterator<Item = &'c str>) -> Option<&mut Node> {
        let mut node: &mut Node = Arc::make_mut(&mut self.root);
        for c in comps {
            match &mut node.kind {
                NodeKind::Dir(m) => node = Arc::make_mut(m.get_mut(c)?),
                _ => return None,
            }
        }
        Some(node)
    }

    /// Inserts (or replaces) a node at an absolute path, creating parent directories (0755).
    pub fn insert(&mut self, path: &str, node: Node) {
        let comps = components(path);
        let Some((name, parents)) = comps.split_last() else {
            self.root = Arc::new(node);
            return;
        };
        let mtime = node.mtime_ms;
        let mut cur: &mut Node = Arc::make_mut(&mut self.root);
        for c in parents {
            if !matches!(cur.kind, NodeKind::Dir(_)) {
                *cur = Node::dir(0o755, mtime);
            }
            let NodeKind::Dir(m) = &mut cur.kind else { return };
            let child = m.get_or_insert_with(c, || Arc::new(Node::dir(0o755, mtime)));
            cur = Arc::make_mut(child);
        }
        if !matches!(cur.kind, NodeKind::Dir(_)) {
            *cur = Node::dir(0o755, mtime);
        }
        if let NodeKind::Dir(m) = &mut cur.kind {
            m.insert(Arc::from(name.as_str()), Arc::new(node));
        }
    }

    /// Removes the node at an absolute path with everything under it (`rm -rf`); whether it
    /// was there. The root cannot be removed.
    pub fn remove_path(&mut self, path: &str) -> bool {
        let comps = components(path);
        let Some((name, parents)) = comps.split_last() else { return false };
        if self.get(&comps).is_none() {
            return false;
        }
        match self.get_mut(parents).map(|n| &mut n.kind) {
            Some(NodeKind::Dir(m)) => m.remove(name.as_str()).is_some(),
            _ => false,
        }
    }

    /// Adds a regular file (parents created).
    pub fn add_file(&mut self, path: &str, data: impl Into<Vec<u8>>, mode: u32) {
        self.insert(path, Node::file(data.into(), mode, 0));
    }

    /// Adds a directory (parents created); keeps an existing directory's content.
    pub fn add_dir(&mut self, path: &str, mode: u32) {
        let comps = components(path);
        if let Some(n) = self.get_mut(&comps) {
            if matches!(n.kind, NodeKind::Dir(_)) {
                n.mode = mode;
                return;
            }
        }
        self.insert(path, Node::dir(mode, 0));
    }

    /// Adds a symlink (parents created).
    pub fn add_symlink(&mut self, path: &str, target: &str) {
        self.insert(path, Node { kind: NodeKind::Symlink(target.to_string()), mode: 0o777, uid: 0, gid: 0, mtime_ms: 0 });
    }

    /// Adds a character device.
    pub fn add_device(&mut self, path: &str, dev: Device) {
        self.insert(path, Node { kind: NodeKind::Dev(dev), mode: 0o666, uid: 0, gid: 0, mtime_ms: 0 });
    }

    /// Sets owner and group of an existing node.
    pub fn set_owner(&mut self, path: &str, uid: u32, gid: u32) {
        if let Some(n) = self.get_mut(&components(path)) {
            n.uid = uid;
            n.gid = gid;
        }
    }

    /// Sets every node's mtime (image build time).
    pub fn set_all_mtimes(&mut self, mtime_ms: u64) {
        fn walk(n: &mut Node, t: u64) {
            n.mtime_ms = t;
            if let NodeKind::Dir(m) = &mut n.kind {
                for c in m.values_mut() {
                    walk(Arc::make_mut(c), t);
                }
            }
        }
        walk(Arc::make_mut(&mut self.root), mtime_ms);
    }

    /// Total bytes of regular files (for `du`/`df` and ephemeral-storage accounting).
    pub fn total_bytes(&self) -> u64 {
        fn walk(n: &Node) -> u64 {
            match &n.kind {
                NodeKind::File(d) => d.len() as u64,
                NodeKind::Dir(m) => m.values().map(|c| walk(c)).sum(),
                _ => 0,
            }
        }
        walk(&self.root)
    }

    /// The file content at an absolute path (no symlinks followed), if it is a regular file.
    pub fn read_path(&self, path: &str) -> Option<&[u8]> {
        match &self.get_path(path)?.kind {
            NodeKind::File(d) => Some(d),
            _ => None,
        }
    }
}

/// Host-owned volume storage: trees keyed by volume id (`pod-uid/volume-name`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Volumes {
    /// The trees.
    pub trees: BTreeMap<String, Tree>,
}

/// A mount: a volume tree (or a sub-path of it) at a path of the container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// Absolute mount point.
    pub path: String,
    /// Volume id (key into [`Volumes`]).
    pub volume: String,
    /// `subPath` inside the volume.
    pub sub_path: Option<String>,
    /// Read-only mount (`EROFS` on writes).
    pub read_only: bool,
    /// Backed by memory (a tmpfs): Secret, projected and downward API volumes and emptyDirs
    /// of medium Memory, as the kubelet's volume plugins mount them; else the node's disk.
    pub memory: bool,
}

/// The filesystem interface all programs use. Paths are absolute.
pub trait Fs {
    /// `stat` (follows symlinks).
    fn stat(&self, path: &str) -> Result<Metadata, Errno>;
    /// `lstat` (does not follow a final symlink).
    fn lstat(&self, path: &str) -> Result<Metadata, Errno>;
    /// Whole content of a regular file.
    fn read(&self, path: &str) -> Result<Vec<u8>, Errno>;
    /// [`Fs::read`], shared: a filesystem that keeps file contents in `Arc`s hands out its
    /// own (no copy; an unchanged file compares by pointer). The default copies.
    fn read_shared(&self, path: &str) -> Result<Arc<Vec<u8>>, Errno> {
        self.read(path).map(Arc::new)
    }
    /// Writes a regular file.
    fn write(&mut self, path: &str, data: &[u8], mode: WriteMode) -> Result<(), Errno>;
    /// Directory entries in name order (without `.` and `..`).
    fn read_dir(&self, path: &str) -> Result<Vec<DirEntry>, Errno>;
    /// `mkdir` (`parents` = `mkdir -p`: no error if it exists as a directory).
    fn mkdir(&mut self, path: &str, mode: u32, parents: bool) -> Result<(), Errno>;
    /// `unlink` of a non-directory.
    fn remove_file(&mut self, path: &str) -> Result<(), Errno>;
    /// `rmdir` of an empty directory.
    fn remove_dir(&mut self, path: &str) -> Result<(), Errno>;
    /// Removes a file or a whole directory tree (`rm -r` on one operand).
    fn remove_all(&mut self, path: &str) -> Result<(), Errno>;
    /// `rename`.
    fn rename(&mut self, from: &str, to: &str) -> Result<(), Errno>;
    /// `symlink(target, link)`.
    fn symlink(&mut self, target: &str, link: &str) -> Result<(), Errno>;
    /// `readlink`.
    fn readlink(&self, path: &str) -> Result<String, Errno>;
    /// `chmod` (follows symlinks).
    fn chmod(&mut self, path: &str, mode: u32) -> Result<(), Errno>;
    /// `chown` (follows symlinks).
    fn chown(&mut self, path: &str, uid: u32, gid: u32) -> Result<(), Errno>;
    /// Sets the mtime (`touch`); creates nothing.
    fn set_mtime(&mut self, path: &str, mtime_ms: u64) -> Result<(), Errno>;
    /// `realpath`: the canonical path of an existing file.
    fn realpath(&self, path: &str) -> Result<String, Errno>;
    /// The device of a character-device node, if `path` is one (follows symlinks).
    fn device(&self, path: &str) -> Option<Device> {
        let _ = path;
        None
    }
    /// Sets the clock used for new mtimes (Unix ms).
    fn set_clock(&mut self, unix_ms: u64);
    /// The volumes mounted into the container, in the order they were given (for `df`,
    /// `mount` and `/proc/mounts`).
    fn mounts(&self) -> Vec<Mount> {
        Vec::new()
    }
}

struct View<'a> {
    root: &'a Tree,
    mounts: &'a [Mount],
    volumes: &'a Volumes,
}

/// Where a canonical path lives: in the container's root or in a mount, and where inside it
/// ([`Located::inner`]). Nothing is allocated: every stat, read and write locates each
/// component of its path on the way (a fifth of all the allocations of a cluster run when
/// each step copied the components).
struct Located {
    /// `None` = container root; `Some(i)` = mount i.
    mount: Option<usize>,
    /// How many leading components of the path the mount point covers.
    covered: usize,
    read_only: bool,
}

/// Whether the mount point `path` is a prefix of `comps`, and of how many components.
fn mount_prefix(path: &str, comps: &[String]) -> Option<usize> {
    let mut n = 0;
    for c in component_strs(path) {
        if comps.get(n).is_none_or(|own| own != c) {
            return None;
        }
        n += 1;
    }
    Some(n)
}

/// The name of the entry of directory `parent` that the mount point `path` is, if it is one.
fn child_mount_point<'p>(path: &'p str, parent: &[String]) -> Option<&'p str> {
    let mut comps = component_strs(path);
    for own in parent {
        if comps.next()? != own {
            return None;
        }
    }
    let name = comps.next()?;
    comps.next().is_none().then_some(name)
}

fn locate(mounts: &[Mount], comps: &[String]) -> Located {
    let mut best: Option<(usize, usize)> = None;
    for (i, m) in mounts.iter().enumerate() {
        if let Some(len) = mount_prefix(&m.path, comps) {
            if best.is_none_or(|(_, l)| len >= l) {
                best = Some((i, len));
            }
        }
    }
    match best {
        None => Located { mount: None, covered: 0, read_only: false },
        Some((i, l)) => Located { mount: Some(i), covered: l, read_only: mounts[i].read_only },
    }
}

/// The mount that holds `path` (the deepest whose mount point is a prefix of it, as every
/// read and write locates it), if any: else the path is in the container's root.
pub fn mount_holding<'m>(mounts: &'m [Mount], path: &str) -> Option<&'m Mount> {
    locate(mounts, &components(path)).mount.map(|i| &mounts[i])
}

impl Located {
    /// The path inside the located tree: the mount's sub-path, then the components below the
    /// mount point.
    fn inner<'p>(&self, mounts: &'p [Mount], comps: &'p [String]) -> impl Iterator<Item = &'p str> + 'p {
        let sub = self.mount.and_then(|i| mounts[i].sub_path.as_deref()).map(component_strs);
        sub.into_iter().flatten().chain(comps[self.covered..].iter().map(String::as_str))
    }
}

impl View<'_> {
    fn tree(&self, loc: &Located) -> Option<&Tree> {
        match loc.mount {
            None => Some(self.root),
            Some(i) => self.volumes.trees.get(&self.mounts[i].volume),
        }
    }

    fn node(&self, comps: &[String]) -> Option<(&Node, bool)> {
        let loc = locate(self.mounts, comps);
        let t = self.tree(&loc)?;
        t.get_at(loc.inner(self.mounts, comps)).map(|n| (n, loc.read_only))
    }

    /// Canonical components of `path`; the final component may not exist.
    fn resolve(&self, path: &str, follow_last: bool) -> Result<Vec<String>, Errno> {
        if !path.starts_with('/') {
            return Err(Errno::ENOENT);
        }
        if path.len() > 4096 {
            return Err(Errno::ENAMETOOLONG);
        }
        let mut pending: std::collections::VecDeque<String> = components(path).into();
        let mut canon: Vec<String> = Vec::new();
        let mut hops = 0;
        let trailing_slash = path.ends_with('/') && path.len() > 1;
        while let Some(c) = pending.pop_front() {
            if c == ".." {
                canon.pop();
                continue;
            }
            canon.push(c);
            let last = pending.is_empty();
            match self.node(&canon) {
                None => {
                    if last {
                        return Ok(canon);
                    }
                    return Err(Errno::ENOENT);
                }
                Some((n, _)) => match &n.kind {
                    NodeKind::Symlink(t) if !last || follow_last || trailing_slash => {
                        hops += 1;
                        if hops > MAX_SYMLINK_HOPS {
                            return Err(Errno::ELOOP);
                        }
                        canon.pop();
                        if t.starts_with('/') {
                            canon.clear();
                        }
                        for (i, tc) in components(t).into_iter().enumerate() {
                            pending.insert(i, tc);
                        }
                    }
                    NodeKind::Dir(_) => {}
                    _ if !last => return Err(Errno::ENOTDIR),
                    _ => {}
                },
            }
        }
        Ok(canon)
    }

    fn stat_comps(&self, comps: &[String]) -> Result<Metadata, Errno> {
        let (n, ro) = self.node(comps).ok_or(Errno::ENOENT)?;
        let mut m = n.meta();
        m.mount_ro = ro;
        Ok(m)
    }
}

fn strip_dir(path: &str) -> bool {
    path.len() > 1 && path.ends_with('/')
}

macro_rules! view_of {
    ($s:expr) => {
        View { root: &*$s.root, mounts: &*$s.mounts, volumes: &*$s.volumes }
    };
}

/// The container filesystem view the host builds around its own storage: the container's root
/// tree, its mount table, and the node's volume storage (shared by every container that mounts
/// the same volume).
pub struct ContainerFs<'a> {
    /// Root filesystem (a clone of the image tree plus the container's writes).
    pub root: &'a mut Tree,
    /// Mount table (longest prefix wins).
    pub mounts: &'a [Mount],
    /// Volume storage.
    pub volumes: &'a mut Volumes,
    /// Clock for new mtimes (Unix ms).
    pub now_ms: u64,
    /// Owner of new files.
    pub uid: u32,
    /// Group of new files.
    pub gid: u32,
}

impl<'a> ContainerFs<'a> {
    /// A view over host storage.
    pub fn new(root: &'a mut Tree, mounts: &'a [Mount], volumes: &'a mut Volumes, now_ms: u64) -> ContainerFs<'a> {
        ContainerFs { root, mounts, volumes, now_ms, uid: 0, gid: 0 }
    }

    fn tree_mut(&mut self, loc: &Located) -> Result<&mut Tree, Errno> {
        match loc.mount {
            None => Ok(self.root),
            Some(i) => self.volumes.trees.get_mut(&self.mounts[i].volume).ok_or(Errno::ENOENT),
        }
    }

    fn is_mount_point(&self, comps: &[String]) -> bool {
        self.mounts.iter().any(|m| mount_prefix(&m.path, comps) == Some(comps.len()))
    }

    /// Resolves the parent of `path` (following symlinks) and returns (located parent, name).
    fn parent_of(&self, path: &str, follow_last: bool) -> Result<(Vec<String>, String), Errno> {
        let v = view_of!(self);
        let canon = v.resolve(path, follow_last)?;
        let Some((name, parent)) = canon.split_last() else { return Err(Errno::EBUSY) };
        match v.node(parent) {
            Some((n, _)) if matches!(n.kind, NodeKind::Dir(_)) => Ok((parent.to_vec(), name.clone())),
            Some(_) => Err(Errno::ENOTDIR),
            None => Err(Errno::ENOENT),
        }
    }

    fn writable_dir(&mut self, parent: &[String]) -> Result<(&mut Dir, u64), Errno> {
        let mounts = self.mounts;
        let loc = locate(mounts, parent);
        if loc.read_only {
            return Err(Errno::EROFS);
        }
        let now = self.now_ms;
        let t = self.tree_mut(&loc)?;
        let dir = t.get_mut_at(loc.inner(mounts, parent)).ok_or(Errno::ENOENT)?;
        dir.mtime_ms = now;
        match &mut dir.kind {
            NodeKind::Dir(m) => Ok((m, now)),
            _ => Err(Errno::ENOTDIR),
        }
    }
}

impl Fs for ContainerFs<'_> {
    fn stat(&self, path: &str) -> Result<Metadata, Errno> {
        let v = view_of!(self);
        let c = v.resolve(path, true)?;
        let m = v.stat_comps(&c)?;
        if strip_dir(path) && !m.is_dir() {
            return Err(Errno::ENOTDIR);
        }
        Ok(m)
    }

    fn lstat(&self, path: &str) -> Result<Metadata, Errno> {
        let v = view_of!(self);
        let c = v.resolve(path, false)?;
        v.stat_comps(&c)
    }

    fn read(&self, path: &str) -> Result<Vec<u8>, Errno> {
        self.read_shared(path).map(|d| d.to_vec())
    }

    fn read_shared(&self, path: &str) -> Result<Arc<Vec<u8>>, Errno> {
        let v = view_of!(self);
        let c = v.resolve(path, true)?;
        let (n, _) = v.node(&c).ok_or(Errno::ENOENT)?;
        match &n.kind {
            NodeKind::File(d) => Ok(d.clone()),
            NodeKind::Dir(_) => Err(Errno::EISDIR),
            NodeKind::Dev(Device::Null) => Ok(Arc::default()),
            NodeKind::Dev(_) => Err(Errno::EINVAL),
            NodeKind::Symlink(_) => Err(Errno::ELOOP),
        }
    }

    fn write(&mut self, path: &str, data: &[u8], mode: WriteMode) -> Result<(), Errno> {
        if strip_dir(path) {
            return Err(Errno::EISDIR);
        }
        let (parent, name) = self.parent_of(path, true)?;
        let (uid, gid) = (self.uid, self.gid);
        let (dir, now) = self.writable_dir(&parent)?;
        match dir.get_mut(name.as_str()) {
            Some(existing) => {
                let n = Arc::make_mut(existing);
                if mode == WriteMode::CreateNew {
                    return Err(Errno::EEXIST);
                }
                match &mut n.kind {
                    NodeKind::File(d) => {
                        let d = Arc::make_mut(d);
                        if mode == WriteMode::Truncate {
                            d.clear();
                        }
                        if d.len() + data.len() > MAX_FILE_BYTES {
                            return Err(Errno::ENOSPC);
                        }
                        d.extend_from_slice(data);
                        n.mtime_ms = now;
                        Ok(())
                    }
                    NodeKind::Dir(_) => Err(Errno::EISDIR),
                    NodeKind::Dev(Device::Full) => Err(Errno::ENOSPC),
                    NodeKind::Dev(_) => Ok(()),
                    NodeKind::Symlink(_) => Err(Errno::ELOOP),
                }
            }
            None => {
                if data.len() > MAX_FILE_BYTES {
                    return Err(Errno::ENOSPC);
                }
                let mut node = Node::file(data.to_vec(), 0o644, now);
                node.uid = uid;
                node.gid = gid;
                dir.insert(name.into(), Arc::new(node));
                Ok(())
            }
        }
    }

    fn read_dir(&self, path: &str) -> Result<Vec<DirEntry>, Errno> {
        let v = view_of!(self);
        let c = v.resolve(path, true)?;
        let (n, ro) = v.node(&c).ok_or(Errno::ENOENT)?;
        let NodeKind::Dir(m) = &n.kind else { return Err(Errno::ENOTDIR) };
        // The entries that are mount points (a mount at exactly `c/name`).
        let mount_points: Vec<&str> = self.mounts.iter().filter_map(|mount| child_mount_point(&mount.path, &c)).collect();
        let mut out: Vec<DirEntry> = Vec::with_capacity(m.len());
        for (name, child) in m {
            // A mount point shows the mounted tree's root.
            let mounted = if mount_points.contains(&&**name) {
                let mut cc = c.clone();
                cc.push(name.to_string());
                v.node(&cc)
            } else {
                None
            };
            let meta = match mounted {
                Some((mn, mro)) => {
                    let mut mm = mn.meta();
                    mm.mount_ro = mro;
                    mm
                }
                None => {
                    let mut mm = child.meta();
                    mm.mount_ro = ro;
                    mm
                }
            };
            out.push(DirEntry { name: name.to_string(), meta });
        }
        Ok(out)
    }

    fn mkdir(&mut self, path: &str, mode: u32, parents: bool) -> Result<(), Errno> {
        if parents {
            let comps = components(&normalize(path));
            let mut cur = String::new();
            for c in comps {
                cur.push('/');
                cur.push_str(&c);
                match self.stat(&cur) {
                    Ok(m) if m.is_dir() => continue,
                    Ok(_) => return Err(Errno::ENOTDIR),
                    Err(Errno::ENOENT) => self.mkdir(&cur, mode, false)?,
                    Err(e) => return Err(e),
                }
            }
            return Ok(());
        }
        let (parent, name) = self.parent_of(path, false)?;
        let (uid, gid) = (self.uid, self.gid);
        let v = view_of!(self);
        let mut full = parent.clone();
        full.push(name.clone());
        if v.node(&full).is_some() {
            return Err(Errno::EEXIST);
        }
        let (dir, now) = self.writable_dir(&parent)?;
        let mut node = Node::dir(mode & 0o7777, now);
        node.uid = uid;
        node.gid = gid;
        dir.insert(name.into(), Arc::new(node));
        Ok(())
    }

    fn remove_file(&mut self, path: &str) -> Result<(), Errno> {
        let (parent, name) = self.parent_of(path, false)?;
        let mut full = parent.clone();
        full.push(name.clone());
        let v = view_of!(self);
        match v.node(&full) {
            None => return Err(Errno::ENOENT),
            Some((n, _)) if matches!(n.kind, NodeKind::Dir(_)) => return Err(Errno::EISDIR),
            _ => {}
        }
        let (dir, _) = self.writable_dir(&parent)?;
        dir.remove(name.as_str());
        Ok(())
    }

    fn remove_dir(&mut self, path: &str) -> Result<(), Errno> {
        let (parent, name) = self.parent_of(path, false)?;
        let mut full = parent.clone();
        full.push(name.clone());
        let v = view_of!(self);
        match v.node(&full) {
            None => return Err(Errno::ENOENT),
            Some((n, _)) => match &n.kind {
                NodeKind::Dir(m) if !m.is_empty() => return Err(Errno::ENOTEMPTY),
                NodeKind::Dir(_) => {}
                _ => return Err(Errno::ENOTDIR),
            },
        }
        if self.is_mount_point(&full) {
            return Err(Errno::EBUSY);
        }
        let (dir, _) = self.writable_dir(&parent)?;
        dir.remove(name.as_str());
        Ok(())
    }

    fn remove_all(&mut self, path: &str) -> Result<(), Errno> {
        let m = self.lstat(path)?;
        if m.is_dir() {
            let v = view_of!(self);
            let canon = v.resolve(path, false)?;
            let canon_path = format!("/{}", canon.join("/"));
            for e in self.read_dir(&canon_path)? {
                self.remove_all(&join(&canon_path, &e.name))?;
            }
            if self.is_mount_point(&canon) {
                return Ok(());
            }
            self.remove_dir(&canon_path)
        } else {
            self.remove_file(path)
        }
    }

    fn rename(&mut self, from: &str, to: &str) -> Result<(), Errno> {
        let (fp, fname) = self.parent_of(from, false)?;
        let (tp, tname) = self.parent_of(to, false)?;
        let mut ffull = fp.clone();
        ffull.push(fname.clone());
        let mut tfull = tp.clone();
        tfull.push(tname.clone());
        if ffull == tfull {
            return Ok(());
        }
        let fl = locate(self.mounts, &ffull);
        let tl = locate(self.mounts, &tfull);
        if fl.mount != tl.mount || self.is_mount_point(&ffull) {
            return Err(Errno::EXDEV);
        }
        let v = view_of!(self);
        let src = v.node(&ffull).ok_or(Errno::ENOENT)?.0.clone();
        if tfull.starts_with(&ffull) {
            return Err(Errno::EINVAL);
        }
        if let Some((dst, _)) = v.node(&tfull) {
            match (&src.kind, &dst.kind) {
                (NodeKind::Dir(_), NodeKind::Dir(m)) if !m.is_empty() => return Err(Errno::ENOTEMPTY),
                (NodeKind::Dir(_), NodeKind::Dir(_)) => {}
                (NodeKind::Dir(_), _) => return Err(Errno::ENOTDIR),
                (_, NodeKind::Dir(_)) => return Err(Errno::EISDIR),
                _ => {}
            }
        }
        let (dir, _) = self.writable_dir(&fp)?;
        let node = dir.remove(fname.as_str()).ok_or(Errno::ENOENT)?;
        let (dir, _) = self.writable_dir(&tp)?;
        dir.insert(tname.into(), node);
        Ok(())
    }

    fn symlink(&mut self, target: &str, link: &str) -> Result<(), Errno> {
        let (parent, name) = self.parent_of(link, false)?;
        let mut full = parent.clone();
        full.push(name.clone());
        if view_of!(self).node(&full).is_some() {
            return Err(Errno::EEXIST);
        }
        let (uid, gid) = (self.uid, self.gid);
        let (dir, now) = self.writable_dir(&parent)?;
        dir.insert(name.into(), Arc::new(Node { kind: NodeKind::Symlink(target.to_string()), mode: 0o777, uid, gid, mtime_ms: now }));
        Ok(())
    }

    fn readlink(&self, path: &str) -> Result<String, Errno> {
        let v = view_of!(self);
        let c = v.resolve(path, false)?;
        match &v.node(&c).ok_or(Errno::ENOENT)?.0.kind {
            NodeKind::Symlink(t) => Ok(t.clone()),
            _ => Err(Errno::EINVAL),
        }
    }

    fn chmod(&mut self, path: &str, mode: u32) -> Result<(), Errno> {
        self.modify(path, |n| n.mode = mode & 0o7777)
    }

    fn chown(&mut self, path: &str, uid: u32, gid: u32) -> Result<(), Errno> {
        self.modify(path, |n| {
            n.uid = uid;
            n.gid = gid;
        })
    }

    fn set_mtime(&mut self, path: &str, mtime_ms: u64) -> Result<(), Errno> {
        self.modify(path, |n| n.mtime_ms = mtime_ms)
    }

    fn realpath(&self, path: &str) -> Result<String, Errno> {
        let v = view_of!(self);
        let c = v.resolve(path, true)?;
        v.node(&c).ok_or(Errno::ENOENT)?;
        Ok(format!("/{}", c.join("/")))
    }

    fn device(&self, path: &str) -> Option<Device> {
        let v = view_of!(self);
        let c = v.resolve(path, true).ok()?;
        match v.node(&c)?.0.kind {
            NodeKind::Dev(d) => Some(d),
            _ => None,
        }
    }

    fn set_clock(&mut self, unix_ms: u64) {
        self.now_ms = unix_ms;
    }

    fn mounts(&self) -> Vec<Mount> {
        self.mounts.to_vec()
    }
}

impl ContainerFs<'_> {
    fn modify(&mut self, path: &str, f: impl FnOnce(&mut Node)) -> Result<(), Errno> {
        let v = view_of!(self);
        let c = v.resolve(path, true)?;
        v.node(&c).ok_or(Errno::ENOENT)?;
        let mounts = self.mounts;
        let loc = locate(mounts, &c);
        if loc.read_only {
            return Err(Errno::EROFS);
        }
        let t = self.tree_mut(&loc)?;
        let n = t.get_mut_at(loc.inner(mounts, &c)).ok_or(Errno::ENOENT)?;
        f(n);
        Ok(())
    }
}

/// Creates the mount-point directories of `mounts` in `root` (what the runtime does before
/// starting a container), and the sub-path directories inside the volumes.
pub fn prepare_mountpoints(root: &mut Tree, mounts: &[Mount], volumes: &mut Volumes) {
    for m in mounts {
        let comps = components(&m.path);
        if root.get(&comps).is_none() {
            root.add_dir(&m.path, 0o755);
        }
        let vol = volumes.trees.entry(m.volume.clone()).or_default();
        if let Some(sp) = &m.sub_path {
            if vol.get(&components(sp)).is_none() {
                vol.add_dir(sp, 0o755);
            }
        }
    }
}

/// A filesystem that owns its storage (tests, [`crate::testing::FakeOs`], single-container use).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnedFs {
    /// The root tree.
    pub root: Tree,
    /// Mount table.
    pub mounts: Vec<Mount>,
    /// Volume storage.
    pub volumes: Volumes,
    /// Clock for new mtimes (Unix ms).
    pub now_ms: u64,
}

impl OwnedFs {
    /// A filesystem over this root tree with no mounts.
    pub fn new(root: Tree) -> OwnedFs {
        OwnedFs { root, mounts: Vec::new(), volumes: Volumes::default(), now_ms: 0 }
    }

    /// Mounts volume `volume` (created empty if absent) at `path`.
    pub fn mount(&mut self, path: &str, volume: &str, tree: Option<Tree>, read_only: bool, sub_path: Option<&str>) {
        if let Some(t) = tree {
            self.volumes.trees.insert(volume.to_string(), t);
        }
        self.mounts.push(Mount { path: path.to_string(), volume: volume.to_string(), sub_path: sub_path.map(str::to_string), read_only, memory: false });
        prepare_mountpoints(&mut self.root, &self.mounts, &mut self.volumes);
    }

    fn view(&mut self) -> ContainerFs<'_> {
        ContainerFs { root: &mut self.root, mounts: &self.mounts, volumes: &mut self.volumes, now_ms: self.now_ms, uid: 0, gid: 0 }
    }
}

/// Read-only twin of [`ContainerFs`] for `&self` methods of [`OwnedFs`].
struct RoView<'a> {
    root: &'a Tree,
    mounts: &'a [Mount],
    volumes: &'a Volumes,
}

impl RoView<'_> {
    fn with<R>(&self, f: impl FnOnce(&ContainerFs<'_>) -> R) -> R {
        // A read-only operation never touches the trees; clones are O(1) (Arc).
        let mut root = self.root.clone();
        let mut vols = self.volumes.clone();
        let cfs = ContainerFs { root: &mut root, mounts: self.mounts, volumes: &mut vols, now_ms: 0, uid: 0, gid: 0 };
        f(&cfs)
    }
}

macro_rules! ro {
    ($s:expr, $f:expr) => {
        RoView { root: &$s.root, mounts: &$s.mounts, volumes: &$s.volumes }.with($f)
    };
}

impl Fs for OwnedFs {
    fn stat(&self, path: &str) -> Result<Metadata, Errno> {
        ro!(self, |f| f.stat(path))
    }
    fn lstat(&self, path: &str) -> Result<Metadata, Errno> {
        ro!(self, |f| f.lstat(path))
    }
    fn read(&self, path: &str) -> Result<Vec<u8>, Errno> {
        ro!(self, |f| f.read(path))
    }
    fn read_shared(&self, path: &str) -> Result<Arc<Vec<u8>>, Errno> {
        ro!(self, |f| f.read_shared(path))
    }
    fn write(&mut self, path: &str, data: &[u8], mode: WriteMode) -> Result<(), Errno> {
        self.view().write(path, data, mode)
    }
    fn read_dir(&self, path: &str) -> Result<Vec<DirEntry>, Errno> {
        ro!(self, |f| f.read_dir(path))
    }
    fn mkdir(&mut self, path: &str, mode: u32, parents: bool) -> Result<(), Errno> {
        self.view().mkdir(path, mode, parents)
    }
    fn remove_file(&mut self, path: &str) -> Result<(), Errno> {
        self.view().remove_file(path)
    }
    fn remove_dir(&mut self, path: &str) -> Result<(), Errno> {
        self.view().remove_dir(path)
    }
    fn remove_all(&mut self, path: &str) -> Result<(), Errno> {
        self.view().remove_all(path)
    }
    fn rename(&mut self, from: &str, to: &str) -> Result<(), Errno> {
        self.view().rename(from, to)
    }
    fn symlink(&mut self, target: &str, link: &str) -> Result<(), Errno> {
        self.view().symlink(target, link)
    }
    fn readlink(&self, path: &str) -> Result<String, Errno> {
        ro!(self, |f| f.readlink(path))
    }
    fn chmod(&mut self, path: &str, mode: u32) -> Result<(), Errno> {
        self.view().chmod(path, mode)
    }
    fn chown(&mut self, path: &str, uid: u32, gid: u32) -> Result<(), Errno> {
        self.view().chown(path, uid, gid)
    }
    fn set_mtime(&mut self, path: &str, mtime_ms: u64) -> Result<(), Errno> {
        self.view().set_mtime(path, mtime_ms)
    }
    fn realpath(&self, path: &str) -> Result<String, Errno> {
        ro!(self, |f| f.realpath(path))
    }
    fn device(&self, path: &str) -> Option<Device> {
        ro!(self, |f| f.device(path))
    }
    fn set_clock(&mut self, unix_ms: u64) {
        self.now_ms = unix_ms;
    }
    fn mounts(&self) -> Vec<Mount> {
        self.mounts.to_vec()
    }
}

/// File content shared between every volume that holds the same bytes: the kubelet writes
/// the same `ca.crt`, ConfigMap and Secret files into every replica's volumes, and a shared
/// copy is indistinguishable from equal copies (writes replace a node's content, never edit
/// it in place). Each thread remembers recent contents in two generations of
/// [`SHARED_CONTENTS`] entries; content that is used again moves to the young generation.
fn shared_content(data: &[u8]) -> Arc<Vec<u8>> {
    type Generation = BTreeMap<Vec<u8>, Arc<Vec<u8>>>;
    thread_local! {
        static SHARED: std::cell::RefCell<(Generation, Generation)> = const { std::cell::RefCell::new((BTreeMap::new(), BTreeMap::new())) };
    }
    if data.len() < 64 || data.len() > 1 << 16 {
        return Arc::new(data.to_vec());
    }
    SHARED.with(|shared| {
        let (young, old) = &mut *shared.borrow_mut();
        if let Some(content) = young.get(data) {
            return content.clone();
        }
        let content = old.remove(data).unwrap_or_else(|| Arc::new(data.to_vec()));
        if young.len() >= SHARED_CONTENTS {
            *old = std::mem::take(young);
        }
        young.insert(data.to_vec(), content.clone());
        content
    })
}

/// How many distinct file contents a generation of [`shared_content`] holds.
const SHARED_CONTENTS: usize = 256;

/// Builds a configMap/secret volume tree with Kubernetes' atomic-writer layout:
/// `..<timestamp>/key` files, `..data -> ..<timestamp>` and `key -> ..data/key`.
/// `stamp` is the directory name suffix (`2026_12_01_09_04_57.123456789`).
pub fn atomic_volume(files: &[(&str, &[u8])], stamp: &str, mode: u32) -> Tree {
    let mut t = Tree::new();
    t.add_dir("/", 0o777);
    let dir = format!("..{stamp}");
    t.add_dir(&format!("/{dir}"), 0o755);
    for (k, v) in files {
        t.insert(&format!("/{dir}/{k}"), Node { kind: NodeKind::File(shared_content(v)), mode, uid: 0, gid: 0, mtime_ms: 0 });
    }
    t.add_symlink("/..data", &dir);
    for (k, _) in files {
        let top = k.split('/').next().unwrap_or(k);
        if t.get_path(&format!("/{top}")).is_none() {
            t.add_symlink(&format!("/{top}"), &format!("..data/{top}"));
        }
    }
    t
}

#[cfg(test)]
mod dir_tests {
    use super::*;

    /// A directory keeps its entries in name order whatever order they come in; insert
    /// replaces (returning the old node), get_or_insert_with adds once, remove takes out.
    #[test]
    fn a_directory_keeps_its_entries_in_name_order() {
        let mut dir = Dir::default();
        let file = |n: u8| Arc::new(Node::file(vec![n], 0o644, 0));
        for (i, name) in ["passwd", "hosts", "group", "resolv.conf", "hostname"].into_iter().enumerate() {
            assert!(dir.insert(Arc::from(name), file(i as u8)).is_none());
        }
        assert_eq!(dir.keys().map(|k| &**k).collect::<Vec<_>>(), ["group", "hostname", "hosts", "passwd", "resolv.conf"]);
        let old = dir.insert(Arc::from("hosts"), file(9)).expect("replaced");
        assert_eq!(old.kind, NodeKind::File(Arc::new(vec![1])));
        assert_eq!(dir.len(), 5);
        assert!(matches!(&dir.get("hosts").expect("hosts").kind, NodeKind::File(d) if **d == [9]));
        dir.get_or_insert_with("hosts", || unreachable!("hosts is there"));
        dir.get_or_insert_with("a", || Arc::new(Node::dir(0o755, 0)));
        assert_eq!(dir.keys().next().map(|k| &**k), Some("a"));
        assert!(dir.remove("passwd").is_some() && dir.remove("passwd").is_none());
        assert!(!dir.contains_key("passwd") && dir.contains_key("group"));
        assert_eq!((&dir).into_iter().count(), 5);
        assert!(dir.get("hos").is_none() && dir.get("hostsx").is_none());
    }
}
