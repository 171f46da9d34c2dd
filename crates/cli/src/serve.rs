//! `kubesim serve` (the simulation behind the Kubernetes HTTP API on 127.0.0.1) and
//! `kubesim ctl` (its control endpoint: pause, resume, step, speed, faults, trace).

use kubesim_api::time::parse_duration;
use kubesim_server::clock::Speed;
use kubesim_sim::run::RunOptions;
use kubesim_sim::scenario::InputFile;
use std::process::ExitCode;

/// The usage lines for both commands.
pub const USAGE: &str =
    "  kubesim serve [FILE ...] [--seed N] [--port P] [--speed X|max] [--paused] [--at TIME COMMAND]... [--kubeconfig PATH] [--scheduler-annotations]
              serve the simulation on 127.0.0.1 as a Kubernetes API server (real kubectl and client
              libraries work against it); virtual time follows wall time at --speed (default 1)
  kubesim ctl [--server URL] status|pause|resume|step [EVENTS|DURATION]|speed X|fault SPEC...|trace [--since REV]|kubectl ARGS...
              control a running kubesim serve (the server is found in $KUBESIM_SERVER or $KUBECONFIG)
";

fn usage_error(message: &str) -> ExitCode {
    eprintln!("error: {message}\n\nusage:\n{USAGE}");
    ExitCode::from(2)
}

/// `kubesim serve`.
pub fn cmd_serve(args: &[String]) -> ExitCode {
    let mut options = RunOptions { seed: 1, ..Default::default() };
    let mut config = kubesim_server::Config { port: 6443, ..Default::default() };
    let mut kubeconfig_path: Option<String> = None;
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned();
        match args[i].as_str() {
            "--seed" => match value.and_then(|v| v.parse().ok()) {
                Some(seed) => options.seed = seed,
                None => return usage_error("--seed needs a non-negative integer"),
            },
            "--port" => match value.and_then(|v| v.parse().ok()) {
                Some(port) => config.port = port,
                None => return usage_error("--port needs a port number"),
            },
            "--speed" => match value.as_deref().map(Speed::parse) {
                Some(Ok(speed)) => config.speed = speed,
                Some(Err(e)) => return usage_error(&e),
                None => return usage_error("--speed needs a value"),
            },
            "--kubeconfig" => match value {
                Some(path) => kubeconfig_path = Some(path),
                None => return usage_error("--kubeconfig needs a path"),
            },
            "--paused" => {
                config.paused = true;
                i += 1;
                continue;
            }
            "--scheduler-annotations" => {
                options.scheduler_annotations = true;
                i += 1;
                continue;
            }
            "--at" => {
                let (Some(t), Some(command)) = (value.as_deref().and_then(parse_duration), args.get(i + 2)) else {
                    return usage_error("--at needs a time and a command");
                };
                options.commands.push((t, command.clone()));
                i += 3;
                continue;
            }
            flag if flag.starts_with('-') && flag != "-" => return usage_error(&format!("unknown flag {flag:?}")),
            file => {
                let text = if file == "-" {
                    let mut text = String::new();
                    let _ = std::io::Read::read_to_string(&mut std::io::stdin(), &mut text);
                    text
                } else {
                    match std::fs::read_to_string(file) {
                        Ok(t) => t,
                        Err(e) => {
                            eprintln!("error: the path {file:?} cannot be read: {e}");
                            return ExitCode::from(1);
                        }
                    }
                };
                options.files.push(InputFile { name: file.to_string(), text });
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    // The world is built exactly as `kubesim run` builds it, on the server's simulation thread.
    let started = kubesim_server::Server::start(
        move || {
            let (world, files, errors) = kubesim_sim::run::start(&options);
            let mut messages: Vec<String> = files.iter().flat_map(|f| f.warnings.iter().cloned()).collect();
            messages.extend(errors);
            (world, messages)
        },
        config.clone(),
    );
    let (server, messages) = match started {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot serve on 127.0.0.1:{}: {e}", config.port);
            return ExitCode::from(1);
        }
    };
    for m in &messages {
        eprintln!("{m}");
    }
    let path = kubeconfig_path.unwrap_or_else(|| std::env::temp_dir().join(format!("kubesim-{}.kubeconfig", server.addr().port())).display().to_string());
    if let Err(e) = std::fs::write(&path, server.kubeconfig()) {
        eprintln!("error: writing the kubeconfig {path:?}: {e}");
        return ExitCode::from(1);
    }
    println!("kubesim is serving the Kubernetes API at {} (virtual time at {}x{})", server.url(), config.speed, if config.paused { ", paused" } else { "" });
    println!("export KUBECONFIG={path}");
    println!("# then: kubectl get nodes; kubesim ctl status|pause|resume|step 10s|speed max|fault node-down node-1");
    use std::io::Write;
    let _ = std::io::stdout().flush();
    loop {
        std::thread::park();
    }
}

/// Finds the server: `--server`, `$KUBESIM_SERVER`, the `server:` of `$KUBECONFIG`, or the default.
fn server_url(explicit: Option<String>) -> String {
    if let Some(url) = explicit.or_else(|| std::env::var("KUBESIM_SERVER").ok()) {
        return url;
    }
    if let Ok(path) = std::env::var("KUBECONFIG") {
        if let Ok(text) = std::fs::read_to_string(path.split(':').next().unwrap_or(&path)) {
            if let Some(line) = text.lines().find(|l| l.trim_start().starts_with("server:")) {
                return line.trim_start().trim_start_matches("server:").trim().to_string();
            }
        }
    }
    "http://127.0.0.1:6443".into()
}

/// `kubesim ctl`.
pub fn cmd_ctl(args: &[String]) -> ExitCode {
    let mut args = args.to_vec();
    let mut explicit = None;
    if let Some(i) = args.iter().position(|a| a == "--server") {
        if i + 1 >= args.len() {
            return usage_error("--server needs a URL");
        }
        explicit = Some(args.remove(i + 1));
        args.remove(i);
    }
    let url = server_url(explicit);
    let (method, path, body): (&str, String, String) = match args.first().map(String::as_str) {
        Some("status") | None => ("GET", "/kubesim/v1/status".into(), String::new()),
        Some("pause") => ("POST", "/kubesim/v1/pause".into(), String::new()),
        Some("resume") => ("POST", "/kubesim/v1/resume".into(), String::new()),
        Some("step") => match args.get(1) {
            None => ("POST", "/kubesim/v1/step?events=1".into(), String::new()),
            Some(v) if v.chars().all(|c| c.is_ascii_digit()) => ("POST", format!("/kubesim/v1/step?events={v}"), String::new()),
            Some(v) => ("POST", format!("/kubesim/v1/step?duration={}", kubesim_server::http::percent_encode(v)), String::new()),
        },
        Some("speed") => match args.get(1) {
            Some(v) => ("POST", format!("/kubesim/v1/speed?value={}", kubesim_server::http::percent_encode(v)), String::new()),
            None => return usage_error("speed needs a value (1, 10, max)"),
        },
        Some("fault") => ("POST", "/kubesim/v1/fault".into(), args[1..].join(" ")),
        Some("trace") => {
            let since = args.iter().position(|a| a == "--since").and_then(|i| args.get(i + 1)).cloned().unwrap_or_else(|| "0".into());
            ("GET", format!("/kubesim/v1/trace?since={since}"), String::new())
        }
        Some("kubectl") => ("POST", "/kubesim/v1/kubectl".into(), args[1..].join(" ")),
        Some(other) => return usage_error(&format!("unknown ctl command {other:?}")),
    };
    match kubesim_server::client::request(&url, method, &path, &[("Content-Type", "text/plain")], body.as_bytes()) {
        Ok(reply) => {
            let value: Option<serde_json::Value> = serde_json::from_str(&reply.body).ok();
            match (args.first().map(String::as_str), value) {
                (Some("fault" | "kubectl"), Some(v)) => {
                    print!("{}", v["stdout"].as_str().unwrap_or(""));
                    eprint!("{}", v["stderr"].as_str().unwrap_or(""));
                    if !v["stdout"].as_str().unwrap_or("").ends_with('\n') && !v["stdout"].as_str().unwrap_or("").is_empty() {
                        println!();
                    }
                    ExitCode::from(v["exitCode"].as_i64().unwrap_or(1).clamp(0, 255) as u8)
                }
                (_, Some(v)) if reply.status < 300 => {
                    println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
                    ExitCode::SUCCESS
                }
                _ if reply.status < 300 => {
                    print!("{}", reply.body);
                    ExitCode::SUCCESS
                }
                (_, v) => {
                    let message = v.as_ref().and_then(|v| v["message"].as_str().map(str::to_string)).unwrap_or(reply.body);
                    eprintln!("error: {message}");
                    ExitCode::from(1)
                }
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
