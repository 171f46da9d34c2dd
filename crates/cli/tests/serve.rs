//! `kubesim serve` and `kubesim ctl` as a user runs them: the binary binds 127.0.0.1, prints
//! the kubeconfig export, answers the Kubernetes API, and `ctl` pauses, steps, resumes,
//! changes the speed and injects faults.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn ctl(url: &str, args: &[&str]) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_kubesim")).arg("ctl").arg("--server").arg(url).args(args).output().unwrap();
    (String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into(), out.status.code().unwrap_or(-1))
}

#[test]
fn serve_prints_a_kubeconfig_and_ctl_controls_the_clock() {
    let dir = std::env::temp_dir().join(format!("kubesim-serve-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    let child = Command::new(env!("CARGO_BIN_EXE_kubesim"))
        .args(["serve", "--port", "0", "--paused", "--seed", "4", "--kubeconfig"])
        .arg(&kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut serve = Serve(child);
    let mut lines = BufReader::new(serve.0.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let url = first.split_whitespace().find(|w| w.starts_with("http://127.0.0.1:")).expect("the URL is printed").to_string();
    let export = lines.next().unwrap().unwrap();
    assert_eq!(export, format!("export KUBECONFIG={}", kubeconfig.display()));
    let config = std::fs::read_to_string(&kubeconfig).unwrap();
    assert!(config.contains(&format!("server: {url}")), "{config}");

    let reply = kubesim_server::client::request(&url, "GET", "/version", &[], b"").unwrap();
    assert!(reply.body.contains("\"gitVersion\":\"v1.34.0\""), "{}", reply.body);

    let (out, _, code) = ctl(&url, &["status"]);
    assert_eq!(code, 0);
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!((status["paused"].as_bool(), status["nowMs"].as_u64()), (Some(true), Some(0)));
    let (out, _, _) = ctl(&url, &["step", "30s"]);
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(status["nowMs"], 30_000);
    let (out, _, code) = ctl(&url, &["fault", "node-down", "node-2"]);
    assert_eq!((out.trim(), code), ("node/node-2 is down: its kubelet stopped and nothing runs there any more", 0));
    let (_, err, code) = ctl(&url, &["fault", "node-down", "nosuch"]);
    assert_eq!((err.trim(), code), ("fault: no node \"nosuch\"", 1));
    let (out, _, code) = ctl(&url, &["kubectl", "get", "nodes"]);
    assert_eq!(code, 0);
    assert!(out.contains("node-1") && out.contains("NAME"), "{out}");
    let (out, _, _) = ctl(&url, &["speed", "max"]);
    assert!(out.contains("\"speed\": \"max\""), "{out}");
    let (out, _, _) = ctl(&url, &["resume"]);
    assert!(out.contains("\"paused\": false"), "{out}");
    let (out, _, code) = ctl(&url, &["trace", "--since", "0"]);
    assert_eq!(code, 0);
    assert!(out.lines().any(|l| l.contains("\"actor\":\"fault\"")), "the fault is in the trace");
    let (_, err, code) = ctl(&url, &["speed", "fast"]);
    assert_eq!(code, 1);
    assert!(err.contains("invalid speed"), "{err}");
    drop(serve);
    let _ = std::fs::remove_dir_all(&dir);
}
