//! Filesystem semantics: copy-on-write roots, mounts shared between containers, read-only
//! mounts, subPath, POSIX errors and their texts, symlinks, devices and /proc.

use kubesim_os::fs::*;
use kubesim_os::registry;
use kubesim_os::testing::FakeOs;
use kubesim_os::{sys, Os};

fn view<'a>(root: &'a mut Tree, mounts: &'a [Mount], vols: &'a mut Volumes) -> ContainerFs<'a> {
    ContainerFs::new(root, mounts, vols, 1_000)
}

#[test]
fn a_container_root_is_a_copy_on_write_clone_of_the_image() {
    let image = registry::busybox_image();
    let mut root = image.clone();
    let mut vols = Volumes::default();
    {
        let mut fs = view(&mut root, &[], &mut vols);
        fs.write("/etc/motd", b"hi\n", WriteMode::Truncate).unwrap();
        fs.remove_file("/bin/ls").unwrap();
    }
    assert!(image.get_path("/etc/motd").is_none());
    assert!(image.get_path("/bin/ls").is_some());
    assert_eq!(root.read_path("/etc/motd"), Some(&b"hi\n"[..]));
    assert!(root.get_path("/bin/ls").is_none());
    // Untouched subtrees stay shared with the image.
    assert_eq!(image.get_path("/usr"), root.get_path("/usr"));
}

#[test]
fn two_containers_mounting_one_volume_see_the_same_bytes() {
    let mut vols = Volumes::default();
    let mut a_root = registry::busybox_image();
    let mut b_root = registry::debian_image();
    let a_mounts = vec![Mount { path: "/work-dir".into(), volume: "pod/workdir".into(), sub_path: None, read_only: false, memory: false }];
    let b_mounts = vec![Mount { path: "/usr/share/nginx/html".into(), volume: "pod/workdir".into(), sub_path: None, read_only: true, memory: false }];
    prepare_mountpoints(&mut a_root, &a_mounts, &mut vols);
    prepare_mountpoints(&mut b_root, &b_mounts, &mut vols);
    view(&mut a_root, &a_mounts, &mut vols).write("/work-dir/index.html", b"<h1>hi</h1>\n", WriteMode::Truncate).unwrap();
    let mut b = view(&mut b_root, &b_mounts, &mut vols);
    assert_eq!(b.read("/usr/share/nginx/html/index.html").unwrap(), b"<h1>hi</h1>\n");
    assert_eq!(b.write("/usr/share/nginx/html/x", b"", WriteMode::Truncate), Err(Errno::EROFS));
    assert_eq!(Errno::EROFS.strerror(), "Read-only file system");
}

#[test]
fn sub_path_mounts_a_directory_inside_the_volume() {
    let mut vols = Volumes::default();
    let mut root = registry::debian_image();
    let mounts = vec![Mount { path: "/var/lib/mysql".into(), volume: "pvc-data".into(), sub_path: Some("mysql".into()), read_only: false, memory: false }];
    prepare_mountpoints(&mut root, &mounts, &mut vols);
    view(&mut root, &mounts, &mut vols).write("/var/lib/mysql/ibdata1", b"x", WriteMode::Truncate).unwrap();
    assert_eq!(vols.trees["pvc-data"].read_path("/mysql/ibdata1"), Some(&b"x"[..]));
}

#[test]
fn posix_errors_have_glibc_texts() {
    let mut root = registry::busybox_image();
    let mut vols = Volumes::default();
    let mut fs = view(&mut root, &[], &mut vols);
    fs.mkdir("/d", 0o755, false).unwrap();
    fs.write("/d/f", b"1", WriteMode::Truncate).unwrap();
    let cases: Vec<(Result<(), Errno>, Errno, &str)> = vec![
        (fs.mkdir("/d", 0o755, false), Errno::EEXIST, "File exists"),
        (fs.remove_dir("/d"), Errno::ENOTEMPTY, "Directory not empty"),
        (fs.remove_file("/d"), Errno::EISDIR, "Is a directory"),
        (fs.write("/d/f/g", b"", WriteMode::Truncate), Errno::ENOTDIR, "Not a directory"),
        (fs.write("/nope/x", b"", WriteMode::Truncate), Errno::ENOENT, "No such file or directory"),
        (fs.write("/d/f", b"", WriteMode::CreateNew), Errno::EEXIST, "File exists"),
        (fs.read("/d").map(|_| ()), Errno::EISDIR, "Is a directory"),
    ];
    for (got, want, text) in cases {
        assert_eq!(got, Err(want));
        assert_eq!(want.strerror(), text);
    }
    assert!(fs.mkdir("/d/a/b/c", 0o755, true).is_ok());
    assert!(fs.mkdir("/d/a/b/c", 0o755, true).is_ok());
    assert_eq!(fs.remove_all("/d"), Ok(()));
    assert_eq!(fs.stat("/d"), Err(Errno::ENOENT));
}

#[test]
fn symlinks_resolve_across_mounts_and_loops_fail() {
    let mut vols = Volumes::default();
    vols.trees.insert("cm".into(), atomic_volume(&[("app.conf", b"x=1\n")], "2026_12_01_09_04_57.1", 0o644));
    let mut root = registry::busybox_image();
    let mounts = vec![Mount { path: "/etc/app".into(), volume: "cm".into(), sub_path: None, read_only: true, memory: false }];
    prepare_mountpoints(&mut root, &mounts, &mut vols);
    root.add_symlink("/conf", "/etc/app/app.conf");
    root.add_symlink("/loop1", "/loop2");
    root.add_symlink("/loop2", "/loop1");
    let fs = view(&mut root, &mounts, &mut vols);
    assert_eq!(fs.read("/conf").unwrap(), b"x=1\n");
    assert_eq!(fs.realpath("/conf").unwrap(), "/etc/app/..2026_12_01_09_04_57.1/app.conf");
    assert_eq!(fs.readlink("/etc/app/app.conf").unwrap(), "..data/app.conf");
    assert_eq!(fs.read("/loop1"), Err(Errno::ELOOP));
    assert_eq!(Errno::ELOOP.strerror(), "Too many levels of symbolic links");
    assert!(fs.lstat("/conf").unwrap().is_symlink());
}

#[test]
fn rename_across_mounts_is_exdev_and_mount_points_are_busy() {
    let mut vols = Volumes::default();
    let mut root = registry::busybox_image();
    let mounts = vec![Mount { path: "/data".into(), volume: "v".into(), sub_path: None, read_only: false, memory: false }];
    prepare_mountpoints(&mut root, &mounts, &mut vols);
    let mut fs = view(&mut root, &mounts, &mut vols);
    fs.write("/tmp/a", b"a", WriteMode::Truncate).unwrap();
    assert_eq!(fs.rename("/tmp/a", "/data/a"), Err(Errno::EXDEV));
    assert_eq!(fs.remove_dir("/data"), Err(Errno::EBUSY));
    fs.rename("/tmp/a", "/tmp/b").unwrap();
    assert_eq!(fs.read("/tmp/b").unwrap(), b"a");
}

#[test]
fn mode_strings_match_ls() {
    let m = |ftype, mode| Metadata { ftype, mode, uid: 0, gid: 0, size: 0, mtime_ms: 0, nlink: 1, rdev: (0, 0), mount_ro: false }.mode_string();
    assert_eq!(m(FileType::Dir, 0o755), "drwxr-xr-x");
    assert_eq!(m(FileType::File, 0o644), "-rw-r--r--");
    assert_eq!(m(FileType::Dir, 0o1777), "drwxrwxrwt");
    assert_eq!(m(FileType::File, 0o4755), "-rwsr-xr-x");
    assert_eq!(m(FileType::Symlink, 0o777), "lrwxrwxrwx");
    assert_eq!(m(FileType::CharDev, 0o666), "crw-rw-rw-");
}

#[test]
fn devices_and_proc_are_synthesised() {
    let mut os = FakeOs::new(registry::busybox_image());
    assert_eq!(sys::read_file_limited(&mut os, "/dev/zero", 4).unwrap(), vec![0; 4]);
    assert_eq!(sys::read_file(&mut os, "/dev/null").unwrap(), Vec::<u8>::new());
    assert_eq!(sys::read_file_limited(&mut os, "/dev/urandom", 16).unwrap().len(), 16);
    assert_eq!(sys::write_file(&mut os, "/dev/full", b"x", WriteMode::Append), Err(Errno::ENOSPC));
    sys::write_file(&mut os, "/proc/1/fd/1", b"to the log\n", WriteMode::Append).unwrap();
    assert_eq!(os.stdout, b"to the log\n");
    os.now_ms = 12_340;
    assert_eq!(sys::read_file(&mut os, "/proc/uptime").unwrap(), b"12.34 12.34\n");
    assert!(String::from_utf8_lossy(&sys::read_file(&mut os, "/proc/meminfo").unwrap()).starts_with("MemTotal:"));
}

#[test]
fn path_helpers_match_coreutils() {
    for (p, b, d) in [("/a/b/c", "c", "/a/b"), ("/a/b/", "b", "/a"), ("c", "c", "."), ("/", "/", "/"), ("a//b", "b", "a")] {
        assert_eq!((basename(p), dirname(p)), (b.to_string(), d.to_string()), "{p}");
    }
    assert_eq!(normalize("/a/./b/../c//d"), "/a/c/d");
    assert_eq!(join("/tmp", "x"), "/tmp/x");
    assert_eq!(join("/tmp", "/x"), "/x");
}

#[test]
fn the_fs_is_reachable_through_the_os_of_fake_os() {
    let mut os = FakeOs::new(registry::alpine_image());
    assert!(os.fs_ref().stat("/bin/sh").unwrap().is_file());
    assert!(os.fs_ref().lstat("/bin/sh").unwrap().is_symlink());
    os.fs().write("/root/x", b"1", WriteMode::Truncate).unwrap();
    assert_eq!(os.fs_ref().stat("/root/x").unwrap().mtime_ms, os.unix_time_ms());
}

#[test]
fn listings_show_mount_points_and_the_longest_mount_prefix_wins() {
    let mut vols = Volumes::default();
    let mut root = registry::busybox_image();
    let mounts = vec![
        Mount { path: "/srv".into(), volume: "outer".into(), sub_path: Some("base".into()), read_only: false, memory: false },
        Mount { path: "/srv/inner".into(), volume: "inner".into(), sub_path: None, read_only: true, memory: false },
        Mount { path: "/srvx".into(), volume: "other".into(), sub_path: None, read_only: false, memory: false },
    ];
    prepare_mountpoints(&mut root, &mounts, &mut vols);
    // (The mount point of the nested mount, inside the outer volume.)
    vols.trees.get_mut("outer").unwrap().add_dir("/base/inner", 0o755);
    vols.trees.get_mut("inner").unwrap().add_file("/f", b"in".to_vec(), 0o600);
    vols.trees.get_mut("inner").unwrap().set_owner("/", 7, 7);
    let mut fs = view(&mut root, &mounts, &mut vols);
    fs.write("/srv/a", b"outer", WriteMode::Truncate).unwrap();
    fs.mkdir("/srv/inner2", 0o700, false).unwrap();
    assert_eq!(fs.read("/srv/inner/f").unwrap(), b"in", "the nested mount, not the outer volume");
    assert_eq!(fs.write("/srv/inner/g", b"", WriteMode::Truncate), Err(Errno::EROFS));
    fs.chmod("/srv/a", 0o600).unwrap();
    let listing = fs.read_dir("/srv").unwrap();
    let entry = |name: &str| listing.iter().find(|e| e.name == name).unwrap_or_else(|| panic!("{name} listed")).meta;
    assert_eq!(listing.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["a", "inner", "inner2"]);
    // A mount point lists as the mounted tree's root (its owner, read-only); the others as
    // themselves.
    assert_eq!((entry("inner").uid, entry("inner").mount_ro), (7, true));
    assert_eq!((entry("inner2").mode, entry("inner2").mount_ro), (0o700, false));
    assert_eq!(entry("a").mode, 0o600);
    let root_listing = fs.read_dir("/").unwrap();
    assert!(root_listing.iter().any(|e| e.name == "srvx"), "a name extending a mount point's is another entry");
    assert_eq!(vols.trees["outer"].read_path("/base/a"), Some(&b"outer"[..]), "writes under a sub-path mount land in the volume");
    assert!(vols.trees["outer"].get_path("/base/inner2").is_some());
}
