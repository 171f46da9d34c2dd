//! The official Python client (`python3-kubernetes`) against `kubesim serve`: list, watch,
//! create, patch and a small controller loop. Skips when python3 or the module is missing.

use kubesim_server::clock::Speed;
use kubesim_server::{Config, Server};
use std::process::Command;

#[test]
fn the_python_kubernetes_client_drives_the_cluster() {
    // Debian's python3-kubernetes installs for /usr/bin/python3, which may not be the first
    // python3 on PATH.
    let Some(python) =
        ["python3", "/usr/bin/python3"].into_iter().find(|p| Command::new(p).args(["-c", "import kubernetes"]).output().is_ok_and(|o| o.status.success()))
    else {
        eprintln!("SKIPPED: no python3 with the kubernetes module (apt-get install python3-kubernetes)");
        return;
    };
    let (server, ()) = Server::start(
        || {
            let mut world = kubesim_sim::World::new(5);
            world.add_default_nodes();
            (world, ())
        },
        Config { speed: Speed::Factor(20.0), ..Default::default() },
    )
    .unwrap();
    let dir = std::env::temp_dir().join(format!("kubesim-python-{}", server.addr().port()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig()).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/client_test.py");
    let out = Command::new("timeout").args(["180", python, script]).env("KUBECONFIG", &kubeconfig).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    eprint!("{}", String::from_utf8_lossy(&out.stdout));
    assert!(out.status.success(), "stdout:\n{}\nstderr:\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}
