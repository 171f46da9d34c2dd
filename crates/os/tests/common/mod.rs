//! A pod-like harness over `FakeOs`: an image, a hostname, env, volumes, then run a command the
//! way the container runtime would.
#![allow(dead_code)]

use kubesim_os::fs::Tree;
use kubesim_os::registry;
use kubesim_os::testing::{run_until, FakeOs, Outcome};
use kubesim_os::Os;
use std::collections::BTreeMap;

pub struct Pod {
    pub os: FakeOs,
    pub env: BTreeMap<String, String>,
    pub cwd: String,
    pub stdin: Vec<u8>,
}

impl Pod {
    pub fn new(image: Tree) -> Pod {
        let os = FakeOs::new(image);
        Pod { os, env: registry::default_env("pod"), cwd: "/".into(), stdin: Vec::new() }
    }

    pub fn busybox() -> Pod {
        Pod::new(registry::busybox_image())
    }

    pub fn debian() -> Pod {
        Pod::new(registry::debian_image())
    }

    pub fn hostname(mut self, h: &str) -> Pod {
        self.os.hostname = h.into();
        self.env.insert("HOSTNAME".into(), h.into());
        self
    }

    pub fn env(mut self, k: &str, v: &str) -> Pod {
        self.env.insert(k.into(), v.into());
        self
    }

    pub fn file(mut self, path: &str, data: &str) -> Pod {
        self.os.fs.root.add_file(path, data.as_bytes().to_vec(), 0o644);
        self
    }

    pub fn volume(mut self, path: &str, name: &str, tree: Tree, read_only: bool) -> Pod {
        self.os.fs.mount(path, name, Some(tree), read_only, None);
        self
    }

    pub fn empty_dir(self, path: &str, name: &str) -> Pod {
        self.volume(path, name, Tree::new(), false)
    }

    pub fn cluster_dns(mut self, ns: &str) -> Pod {
        self.os = self.os.with_cluster_dns(ns, "10.96.0.10");
        self
    }

    pub fn run(&mut self, argv: &[&str]) -> Outcome {
        self.run_for(argv, 86_400_000)
    }

    pub fn run_for(&mut self, argv: &[&str], ms: u64) -> Outcome {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        match registry::command(&argv, &self.env, &self.cwd, self.stdin.clone(), self.os.fs_ref()) {
            Ok(prog) => run_until(prog, &mut self.os, ms),
            Err(e) => Outcome { stdout: Vec::new(), stderr: format!("exec: {e}").into_bytes(), code: Some(128), elapsed_ms: 0, calls: Vec::new() },
        }
    }

    pub fn read(&self, path: &str) -> Option<String> {
        self.os.fs_ref().read(path).ok().map(|d| String::from_utf8_lossy(&d).into_owned())
    }
}

/// Reads a corpus manifest (None when the shared corpus is not beside the checkout).
pub fn corpus(rel: &str) -> Option<String> {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus/k8s-docs-examples/");
    std::fs::read_to_string(format!("{p}{rel}")).ok()
}
