//! `kubesim bench`: wall-clock benchmarks of the simulation (never assertions in tests).

use kubesim_sim::cluster::node_template;
use kubesim_sim::World;
use std::process::ExitCode;
use std::time::Instant;

fn flag(args: &[String], name: &str, default: u64) -> u64 {
    args.windows(2).find(|w| w[0] == name).and_then(|w| w[1].parse().ok()).unwrap_or(default)
}

/// Peak resident memory of this process in bytes (Linux VmHWM), if known.
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A world for benchmarks: seed 1, no history records, `nodes` nodes of 32 CPUs / 256Gi / 110
/// pods named node-1… across three zones.
fn bench_world(nodes: u64) -> World {
    bench_world_recording(nodes, false)
}

/// [`bench_world`], optionally recording the trace, notes, deliveries and scheduler history as
/// the browser app and `kubesim run` do (`--record-history`).
fn bench_world_recording(nodes: u64, record_history: bool) -> World {
    let mut config = kubesim_sim::world::WorldConfig::seeded(1);
    config.record_history = record_history;
    config.scheduler_history = record_history;
    let mut world = World::build(config).expect("default scheduler");
    for i in 0..nodes {
        world.add_node(node_template(&format!("node-{}", i + 1), ["zone-a", "zone-b", "zone-c"][(i % 3) as usize], "32", "256Gi", "110"));
    }
    world
}

pub fn cmd_bench(args: &[String]) -> ExitCode {
    match args.first().map(String::as_str) {
        Some("cluster") => bench_cluster(&args[1..]),
        Some("scheduler") => bench_scheduler(&args[1..]),
        Some("store") => bench_store(&args[1..]),
        Some("kubelet") => bench_kubelet(&args[1..]),
        Some("serve") => bench_serve(&args[1..]),
        Some("netpol") => bench_netpol(&args[1..]),
        Some("network") => bench_network(&args[1..]),
        Some("churn") => bench_churn(&args[1..]),
        _ => {
            eprintln!("usage: kubesim bench cluster|scheduler|kubelet|store|serve|netpol|network|churn [flags]");
            ExitCode::from(2)
        }
    }
}

fn bench_cluster(args: &[String]) -> ExitCode {
    let nodes = flag(args, "--nodes", 5_000);
    let pods = flag(args, "--pods", 150_000);
    let per_deployment = flag(args, "--per-deployment", 100).max(1);
    let started = Instant::now();
    let mut world = bench_world(nodes);
    let deployments = pods.div_ceil(per_deployment);
    let mut yaml = String::new();
    for d in 0..deployments {
        let replicas = per_deployment.min(pods - d * per_deployment);
        yaml.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: app-{d}}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: app-{d}}}}}\n  template:\n    metadata: {{labels: {{app: app-{d}}}}}\n    spec:\n      containers: [{{name: c, image: 'nginx:1.27', resources: {{requests: {{cpu: 100m, memory: 128Mi}}}}}}]\n"
        ));
    }
    let setup = started.elapsed();
    let outcome = kubesim_sim::loader::apply(&mut world, &kubesim_sim::scenario::InputFile { name: "bench.yaml".into(), text: yaml });
    let failed = outcome.errors.len();
    let run_started = Instant::now();
    let mut steps: u64 = 0;
    let mut last_check = 0;
    let converged_at;
    loop {
        if !world.step() {
            converged_at = world.now();
            break;
        }
        steps += 1;
        if world.now() >= last_check + 5_000 {
            last_check = world.now();
            let running = world
                .api()
                .store()
                .list(("", "pods"), None)
                .filter(|p| p.as_pod().and_then(|p| p.status.as_ref()).and_then(|s| s.phase.as_deref()) == Some("Running"))
                .count() as u64;
            eprintln!(
                "  t={:>5}s  pods running {running}/{pods}  revision {}  wall {:.1}s",
                world.now() / 1000,
                world.api().store().revision(),
                run_started.elapsed().as_secs_f64()
            );
            if running >= pods || world.now() > 30 * 60_000 {
                converged_at = world.now();
                break;
            }
        }
    }
    let wall = run_started.elapsed().as_secs_f64();
    let revision = world.api().store().revision();
    let result = serde_json::json!({
        "workload": "cluster-convergence",
        "nodes": nodes,
        "pods": pods,
        "deployments": deployments,
        "apply_failures": failed,
        "setup_seconds": setup.as_secs_f64(),
        "seconds": wall,
        "virtual_seconds_to_converge": converged_at as f64 / 1000.0,
        "events_processed": steps,
        "events_per_second": steps as f64 / wall,
        "writes": revision,
        "writes_per_second": revision as f64 / wall,
        "peak_rss_bytes": peak_rss_bytes(),
    });
    println!("{result}");
    // The process exits next: freeing 150,000 pods' worth of objects one by one would take
    // seconds (4% of a 150,000-pod run) for nothing, as rustc leaks its arenas at exit.
    std::mem::forget(world);
    ExitCode::SUCCESS
}

/// Kubelet work alone: pods pre-bound with spec.nodeName (no scheduler involvement), run until
/// every pod is Running; reports pods started per wall-clock second.
/// The connectivity matrix of `--pods` pods under `--policies` NetworkPolicies: the verdicts
/// alone (every pair explained) and probed (every pair a connection attempt through the fabric).
fn bench_netpol(args: &[String]) -> ExitCode {
    let pods = flag(args, "--pods", 100) as usize;
    let policies = flag(args, "--policies", 50) as usize;
    let started = Instant::now();
    let (mut world, namespaces) = kubesim_sim::netpol::bench_world(pods, policies);
    let setup = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let (cells, allowed) = world.netpol_verdicts(&namespaces, 80, false);
    let verdicts = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let (expected, probed) = world.netpol_matrix(&namespaces, 80, false).expect("the matrix");
    let probing = started.elapsed().as_secs_f64();
    let result = serde_json::json!({
        "workload": "netpol-matrix",
        "pods": expected.froms.len(),
        "policies": policies,
        "cells": cells,
        "allowed": allowed,
        "setup_seconds": setup,
        "verdicts_seconds": verdicts,
        "verdicts_per_second": cells as f64 / verdicts,
        "matrix_with_probes_seconds": probing,
        "probes_agree": expected.differences(&probed).is_empty(),
    });
    println!("{result}");
    ExitCode::SUCCESS
}

fn bench_kubelet(args: &[String]) -> ExitCode {
    use kubesim_api::k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
    use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kubesim_api::object::Object;
    let nodes = flag(args, "--nodes", 5_000);
    let pods = flag(args, "--pods", 50_000);
    let mut world = bench_world(nodes);
    world.run_until(1_000);
    let started = Instant::now();
    for i in 0..pods {
        let pod = Pod {
            metadata: ObjectMeta { name: Some(format!("pod-{i}")), namespace: Some("default".into()), ..Default::default() },
            spec: Some(PodSpec {
                node_name: Some(format!("node-{}", i % nodes + 1)),
                containers: vec![Container { name: "c".into(), image: Some("nginx:1.27".into()), ..Default::default() }],
                ..Default::default()
            }),
            status: None,
        };
        world.as_actor("kubectl", |ctx| ctx.create(Object::Pod(Box::new(pod)))).expect("valid pod");
    }
    let mut steps = 0u64;
    let mut last_check = 0;
    loop {
        if !world.step() {
            break;
        }
        steps += 1;
        if world.now() >= last_check + 2_000 {
            last_check = world.now();
            let running = world
                .api()
                .store()
                .list(("", "pods"), Some("default"))
                .filter(|p| p.as_pod().and_then(|p| p.status.as_ref()).and_then(|s| s.phase.as_deref()) == Some("Running"))
                .count() as u64;
            if running >= pods || world.now() > 10 * 60_000 {
                break;
            }
        }
    }
    let wall = started.elapsed().as_secs_f64();
    let result = serde_json::json!({
        "workload": "kubelet-start",
        "nodes": nodes,
        "pods": pods,
        "seconds": wall,
        "pods_started_per_second": pods as f64 / wall,
        "virtual_seconds": world.now() as f64 / 1000.0,
        "events_processed": steps,
        "peak_rss_bytes": peak_rss_bytes(),
    });
    println!("{result}");
    ExitCode::SUCCESS
}

/// scheduler_perf shapes (SchedulingBasic, SchedulingPodAntiAffinity, TopologySpreading) with
/// binding through the API store; the last line is one JSON object.
fn bench_scheduler(args: &[String]) -> ExitCode {
    use kubesim_scheduler::bench::{bench, Workload};
    if args.iter().any(|a| a == "--all") {
        return bench_scheduler_all(args);
    }
    let name = args.windows(2).find(|w| w[0] == "--workload").map(|w| w[1].clone()).unwrap_or_else(|| "SchedulingBasic".into());
    let workload = match Workload::parse(&name).or(match name.as_str() {
        "basic" => Some(Workload::Basic),
        "anti-affinity" => Some(Workload::PodAntiAffinity),
        "topology-spreading" => Some(Workload::TopologySpreading),
        _ => None,
    }) {
        Some(w) => w,
        None => {
            let names: Vec<&str> = Workload::ALL.iter().map(|w| w.name()).collect();
            eprintln!("error: unknown workload {name:?} (one of: {})", names.join(", "));
            return ExitCode::from(2);
        }
    };
    let upstream = workload.upstream();
    let nodes = flag(args, "--nodes", upstream.nodes as u64) as usize;
    let init_pods = flag(args, "--init-pods", upstream.init_pods as u64) as usize;
    let pods = flag(args, "--pods", upstream.pods as u64) as usize;
    let result = bench(workload, nodes, init_pods, pods);
    println!("{}", scheduler_json(&result));
    ExitCode::SUCCESS
}

fn scheduler_json(result: &kubesim_scheduler::bench::BenchResult) -> serde_json::Value {
    let upstream = result.workload.upstream();
    let at_upstream_size = (result.nodes, result.init_pods, result.pods) == (upstream.nodes, upstream.init_pods, upstream.pods);
    let rate = result.pods_per_second.unwrap_or(0.0);
    serde_json::json!({
        "workload": result.workload.name(),
        "nodes": result.nodes,
        "init_pods": result.init_pods,
        "pods": result.pods,
        "scheduled": result.scheduled,
        "seconds": result.wall_seconds,
        "pods_per_second": rate,
        "virtual_ms": result.virtual_ms,
        "churn_objects": result.churn_objects,
        "preempted": result.preempted,
        "upstream_workload": upstream.workload,
        "upstream_threshold": upstream.threshold,
        "ratio_to_threshold": upstream.threshold.filter(|_| at_upstream_size).map(|t| rate / t as f64),
    })
}

/// Every scheduler_perf workload kubesim implements, at upstream's size, beside upstream's
/// v1.34 threshold: a table, then one JSON line per workload.
fn bench_scheduler_all(args: &[String]) -> ExitCode {
    use kubesim_scheduler::bench::{bench_upstream, Workload};
    let only: Vec<String> = args.windows(2).filter(|w| w[0] == "--workload").map(|w| w[1].to_ascii_lowercase()).collect();
    println!("{:<36} {:<24} {:>6} {:>6} {:>6} {:>10} {:>9} {:>7}", "testCase", "workload (upstream)", "nodes", "init", "pods", "pods/s", "threshold", "ratio");
    let mut lines = Vec::new();
    for workload in Workload::ALL {
        if !only.is_empty() && !only.contains(&workload.name().to_ascii_lowercase()) {
            continue;
        }
        let r = bench_upstream(workload);
        let u = workload.upstream();
        let rate = r.pods_per_second.unwrap_or(0.0);
        println!(
            "{:<36} {:<24} {:>6} {:>6} {:>6} {:>10.0} {:>9} {:>7}",
            workload.name(),
            u.workload,
            r.nodes,
            r.init_pods,
            r.pods,
            rate,
            u.threshold.map_or("-".to_string(), |t| t.to_string()),
            u.threshold.map_or("-".to_string(), |t| format!("{:.1}x", rate / t as f64)),
        );
        if r.scheduled != r.pods {
            println!("  warning: {} of {} measured pods bound", r.scheduled, r.pods);
        }
        lines.push(scheduler_json(&r));
    }
    for line in lines {
        println!("{line}");
    }
    ExitCode::SUCCESS
}

fn bench_store(args: &[String]) -> ExitCode {
    use kubesim_api::k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
    use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kubesim_api::object::Object;
    use kubesim_api::selector::Selector;
    use kubesim_store::Store;
    use std::sync::Arc;
    let nodes = flag(args, "--nodes", 5_000);
    let pods = flag(args, "--pods", 150_000);
    let mut store = Store::new(100_000);
    let actor: Arc<str> = "bench".into();
    let rss_before = peak_rss_bytes().unwrap_or(0);
    let make = |i: u64, node: Option<String>| {
        let mut labels = std::collections::BTreeMap::new();
        labels.insert("app".to_string(), format!("app-{}", i % 1_500));
        labels.insert("tier".to_string(), "web".to_string());
        Object::Pod(Box::new(Pod {
            metadata: ObjectMeta {
                name: Some(format!("pod-{i}")),
                namespace: Some("default".into()),
                labels: Some(labels),
                uid: Some(format!("{i:032x}")),
                ..Default::default()
            },
            spec: Some(PodSpec {
                node_name: node,
                containers: vec![Container { name: "c".into(), image: Some("nginx:1.27".into()), ..Default::default() }],
                ..Default::default()
            }),
            status: None,
        }))
    };
    let t = Instant::now();
    for i in 0..pods {
        store.create(("", "pods"), make(i, None), &actor, 0).expect("unique names");
        if i % 10_000 == 0 {
            store.drain_commits();
        }
    }
    store.drain_commits();
    let create_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for i in 0..pods {
        let node = format!("node-{}", i % nodes + 1);
        store.update(("", "pods"), make(i, Some(node)), None, &actor, 0).expect("exists");
        if i % 10_000 == 0 {
            store.drain_commits();
        }
    }
    store.drain_commits();
    let update_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let lists = 200u64;
    let mut matched = 0;
    for i in 0..lists {
        let selector = Selector::parse(&format!("app=app-{}", i % 1_500)).expect("valid");
        matched += store.list_selected(("", "pods"), Some("default"), &selector).len();
    }
    let list_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let node_lists = 5_000u64;
    let mut on_node = 0;
    for i in 0..node_lists {
        on_node += store.pods_on_node(&format!("node-{}", i % nodes + 1)).count();
    }
    let node_list_s = t.elapsed().as_secs_f64();
    let rss_after = peak_rss_bytes().unwrap_or(0);
    let result = serde_json::json!({
        "workload": "store",
        "nodes": nodes,
        "pods": pods,
        "create_ops_per_second": pods as f64 / create_s,
        "update_ops_per_second": pods as f64 / update_s,
        "list_by_label_per_second": lists as f64 / list_s,
        "list_by_label_matched": matched,
        "pods_on_node_lists_per_second": node_lists as f64 / node_list_s,
        "pods_on_node_matched": on_node,
        "bytes_per_pod_approx": (rss_after.saturating_sub(rss_before)) / pods.max(1),
    });
    println!("{result}");
    ExitCode::SUCCESS
}

/// Current resident memory of this process in bytes (Linux VmRSS), if known.
fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `kubesim bench serve [--pods N] [--watchers W] [--seconds S] [--events E]`: `kubesim serve`
/// over loopback at N running pods: requests/s for `get pods` as a Table (one full list, and
/// kubectl's 500-item pages), watch fan-out to W clients (events delivered/s) and memory per
/// watch. All traffic goes to 127.0.0.1 and every loop is bounded in count and time.
fn bench_serve(args: &[String]) -> ExitCode {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let pods = flag(args, "--pods", 10_000);
    let watchers = flag(args, "--watchers", 100) as usize;
    let seconds = flag(args, "--seconds", 5).clamp(1, 60);
    let events = flag(args, "--events", 200).min(10_000);
    let started = Instant::now();
    let nodes = pods.div_ceil(100).max(1);
    let built = kubesim_server::Server::start(
        move || {
            let mut config = kubesim_sim::world::WorldConfig::seeded(1);
            config.scheduler_history = false;
            let mut world = World::build(config).expect("default scheduler");
            for i in 0..nodes {
                world.add_node(node_template(&format!("node-{}", i + 1), ["zone-a", "zone-b", "zone-c"][(i % 3) as usize], "32", "256Gi", "110"));
            }
            let mut yaml = String::new();
            for d in 0..pods.div_ceil(100) {
                let replicas = 100.min(pods - d * 100);
                yaml.push_str(&format!(
                    "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: app-{d}}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: app-{d}}}}}\n  template:\n    metadata: {{labels: {{app: app-{d}}}}}\n    spec:\n      containers: [{{name: c, image: 'nginx:1.27', resources: {{requests: {{cpu: 100m, memory: 128Mi}}}}}}]\n"
                ));
            }
            kubesim_sim::loader::apply(&mut world, &kubesim_sim::scenario::InputFile { name: "bench.yaml".into(), text: yaml });
            world.run_until_quiet(600_000);
            (world, ())
        },
        kubesim_server::Config { paused: true, max_watchers: watchers + 16, max_connections: watchers + 64, ..Default::default() },
    );
    let Ok((server, ())) = built else {
        eprintln!("error: cannot start the server");
        return ExitCode::from(1);
    };
    let url = server.url();
    println!("world: {pods} pods on {nodes} nodes, built and converged in {:.1}s", started.elapsed().as_secs_f64());
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let measure = |path: &str, label: &str| {
        let deadline = Instant::now() + std::time::Duration::from_secs(seconds);
        let (mut n, mut bytes) = (0u64, 0usize);
        let t = Instant::now();
        while Instant::now() < deadline && n < 100_000 {
            match kubesim_server::client::request(&url, "GET", path, &[("Accept", table)], b"") {
                Ok(r) if r.status < 500 => bytes = r.body.len(),
                other => {
                    eprintln!("error: {label}: {other:?}");
                    return;
                }
            }
            n += 1;
        }
        let secs = t.elapsed().as_secs_f64();
        println!("{label}: {:.1} requests/s ({n} in {secs:.1}s, {:.1} KB per response)", n as f64 / secs, bytes as f64 / 1024.0);
    };
    measure("/api/v1/pods", &format!("get pods as Table, all {pods} in one response"));
    measure("/api/v1/pods?limit=500", "get pods as Table, first 500-item page (kubectl's chunk)");
    measure("/api/v1/namespaces/default/pods/app-0-does-not-exist", "get one missing pod (404 Status; per-request overhead)");
    // Watch fan-out.
    let rv = kubesim_server::client::request(&url, "GET", "/api/v1/namespaces/default/configmaps?limit=1", &[], b"")
        .ok()
        .and_then(|r| serde_json::from_str::<serde_json::Value>(&r.body).ok())
        .and_then(|v| v["metadata"]["resourceVersion"].as_str().map(str::to_string))
        .unwrap_or_default();
    let before = rss_bytes().unwrap_or(0);
    let received = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    let addr = server.addr();
    for _ in 0..watchers {
        let received = received.clone();
        let rv = rv.clone();
        threads.push(std::thread::spawn(move || {
            let Ok(mut stream) = std::net::TcpStream::connect(addr) else { return };
            let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(30)));
            let _ = stream.write_all(
                format!("GET /api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}&timeoutSeconds=60 HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes(),
            );
            let mut reader = BufReader::new(stream);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                if line.trim().is_empty() {
                    break;
                }
                line.clear();
            }
            let mut got = 0;
            while got < events {
                line.clear();
                if reader.read_line(&mut line).map_or(true, |n| n == 0) {
                    return;
                }
                let Ok(size) = usize::from_str_radix(line.trim(), 16) else { return };
                let mut chunk = vec![0; size + 2];
                if reader.read_exact(&mut chunk).is_err() {
                    return;
                }
                let n = chunk[..size].iter().filter(|b| **b == b'\n').count() as u64;
                got += n;
                received.fetch_add(n, Ordering::SeqCst);
            }
        }));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let after = rss_bytes().unwrap_or(0);
    let watching = server.shared().watchers.load(Ordering::SeqCst);
    println!(
        "watches open: {watching}; memory per watch ~{:.0} KB (RSS growth {:.1} MB incl. the bench's own client threads)",
        after.saturating_sub(before) as f64 / 1024.0 / watching.max(1) as f64,
        after.saturating_sub(before) as f64 / 1e6
    );
    let t = Instant::now();
    for i in 0..events {
        let body = format!("{{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"fan-{i}\"}},\"data\":{{\"i\":\"{i}\"}}}}");
        let _ =
            kubesim_server::client::request(&url, "POST", "/api/v1/namespaces/default/configmaps", &[("Content-Type", "application/json")], body.as_bytes());
    }
    let writes = t.elapsed().as_secs_f64();
    let target = events * watching as u64;
    let deadline = Instant::now() + std::time::Duration::from_secs(60);
    while received.load(Ordering::SeqCst) < target && Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let total = t.elapsed().as_secs_f64();
    let got = received.load(Ordering::SeqCst);
    println!(
        "watch fan-out: {events} creates ({:.0} writes/s) to {watching} watchers: {got}/{target} events delivered in {total:.2}s ({:.0} events/s)",
        events as f64 / writes,
        got as f64 / total
    );
    for t in threads {
        let _ = t.join();
    }
    if let Some(peak) = peak_rss_bytes() {
        println!("peak RSS {:.2} GB", peak as f64 / 1e9);
    }
    server.shutdown();
    ExitCode::SUCCESS
}

/// Service networking at scale: `--services` Services over `--pods` nginx pods on `--nodes`
/// nodes (every node running kube-proxy, CoreDNS in kube-system), converged until every node's
/// kube-proxy has every endpoint; then the cost of one full kube-proxy sync (syncProxyRules
/// over every Service and EndpointSlice), the memory `--extra` more Services add, and
/// `--clients` busybox `wget` loops through CoreDNS and kube-proxy for `--traffic-seconds`
/// virtual seconds (requests counted in the nginx access logs).
fn bench_network(args: &[String]) -> ExitCode {
    use kubesim_api::k8s_openapi::api::core::v1::Service;
    use kubesim_api::k8s_openapi::api::discovery::v1::EndpointSlice;
    let nodes = flag(args, "--nodes", 1_000);
    let pods = flag(args, "--pods", 30_000);
    let services = flag(args, "--services", 3_000).max(1);
    let extra = flag(args, "--extra", 500);
    let clients = flag(args, "--clients", 50);
    let traffic_s = flag(args, "--traffic-seconds", 20);
    // Ten Services a namespace by default: each pod's environment carries a variable set per
    // Service of its namespace (enableServiceLinks), as in a real cluster.
    let namespaces = flag(args, "--namespaces", services.div_ceil(10)).max(1);
    let ns_of = |s: u64| format!("ns-{}", s % namespaces);
    let per_service = pods.div_ceil(services).max(1);
    let mut world = bench_world(nodes);
    world.run_until(1_000);
    let service_yaml = |name: &str, ns: &str, app: &str| {
        format!("---\napiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  selector: {{app: {app}}}\n  ports: [{{port: 80, targetPort: 80}}]\n")
    };
    let mut yaml = String::new();
    for n in 0..namespaces {
        yaml.push_str(&format!("---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: ns-{n}}}\n"));
    }
    for s in 0..services {
        let replicas = per_service.min(pods.saturating_sub(s * per_service));
        yaml.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: app-{s}, namespace: {}}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: app-{s}}}}}\n  template:\n    metadata: {{labels: {{app: app-{s}}}}}\n    spec:\n      containers: [{{name: c, image: 'nginx:1.27', resources: {{requests: {{cpu: 10m, memory: 16Mi}}}}}}]\n",
            ns_of(s)
        ));
        yaml.push_str(&service_yaml(&format!("app-{s}"), &ns_of(s), &format!("app-{s}")));
    }
    let started = Instant::now();
    let outcome = kubesim_sim::loader::apply(&mut world, &kubesim_sim::scenario::InputFile { name: "network.yaml".into(), text: yaml });
    let endpoints_everywhere = |world: &World| -> (u64, u64) {
        let mut least = u64::MAX;
        let mut synced = 0;
        for i in 0..nodes {
            let Some(host) = world.host(&format!("node-{}", i + 1)) else { continue };
            let n: u64 = host.netfilter.services.values().filter(|sp| sp.port == 80).map(|sp| sp.cluster_endpoints.len() as u64).sum();
            least = least.min(n);
            synced += u64::from(n >= pods);
        }
        (least, synced)
    };
    let mut last_check = world.now();
    let mut events = 0u64;
    loop {
        if !world.step() {
            break;
        }
        events += 1;
        if world.now() >= last_check + 2_000 {
            last_check = world.now();
            let (least, synced) = endpoints_everywhere(&world);
            eprintln!(
                "  t={:>5}s  endpoints in the emptiest node's rules {least}/{pods}  nodes synced {synced}/{nodes}  wall {:.1}s",
                world.now() / 1000,
                started.elapsed().as_secs_f64()
            );
            if synced >= nodes || world.now() > 30 * 60_000 {
                break;
            }
        }
    }
    let converge_wall = started.elapsed().as_secs_f64();
    let converged_at = world.now();
    let rss_converged = rss_bytes();

    // One full sync of node-1's kube-proxy (syncProxyRules over everything it watches).
    let svc_objects: Vec<_> = world.api().store().list(("", "services"), None).collect();
    let svcs: Vec<Service> = svc_objects.iter().filter_map(|o| o.decode::<Service>()).collect();
    let slices: Vec<EndpointSlice> =
        world.api().store().list(("discovery.k8s.io", "endpointslices"), None).filter_map(|o| o.decode::<EndpointSlice>()).collect();
    let rounds = 20;
    let sync_started = Instant::now();
    let mut rules = 0;
    for _ in 0..rounds {
        rules = kubesim_proxy::rules("node-1", svcs.iter(), slices.iter()).vips.len();
    }
    let sync_ms = sync_started.elapsed().as_secs_f64() * 1000.0 / rounds as f64;

    // Memory per Service: `--extra` Services more, each over an existing Deployment's pods.
    let mut more = String::new();
    for e in 0..extra {
        more.push_str(&service_yaml(&format!("extra-{e}"), &ns_of(e % services), &format!("app-{}", e % services)));
    }
    let extra_started = Instant::now();
    kubesim_sim::loader::apply(&mut world, &kubesim_sim::scenario::InputFile { name: "extra.yaml".into(), text: more });
    world.run_until(world.now() + 10_000);
    let extra_wall = extra_started.elapsed().as_secs_f64();
    let rss_extra = rss_bytes();
    let per_service_bytes = match (rss_converged, rss_extra) {
        (Some(a), Some(b)) if extra > 0 => Some(b.saturating_sub(a) / extra),
        _ => None,
    };

    // Traffic: busybox wget loops, each against one Service by name.
    let count_requests = |world: &World| -> u64 {
        let mut total = 0;
        for pod in world.api().store().list(("", "pods"), None) {
            if !pod.name().starts_with("app-") {
                continue;
            }
            let Some(node) = pod.as_pod().and_then(|p| p.spec.as_ref()).and_then(|s| s.node_name.clone()) else { continue };
            let uid = pod.metadata().uid.clone().unwrap_or_default();
            if let Some(lines) = world.host(&node).and_then(|h| h.cri.log_lines(&uid, "c", false).ok()) {
                total += lines.iter().filter(|l| l.text.contains("\"GET / HTTP/1.1\"")).count() as u64;
            }
        }
        total
    };
    let mut load = String::new();
    for c in 0..clients {
        load.push_str(&format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: client-{c}, namespace: {}}}\nspec:\n  containers: [{{name: wget, image: 'busybox:1.28', command: [sh, -c, 'while true; do wget -q -O /dev/null http://app-{}; done']}}]\n",
            ns_of(c % services),
            c % services
        ));
    }
    kubesim_sim::loader::apply(&mut world, &kubesim_sim::scenario::InputFile { name: "clients.yaml".into(), text: load });
    world.run_until(world.now() + 15_000);
    let before = count_requests(&world);
    let traffic_started = Instant::now();
    world.run_until(world.now() + traffic_s * 1_000);
    let traffic_wall = traffic_started.elapsed().as_secs_f64();
    let requests = count_requests(&world) - before;

    let result = serde_json::json!({
        "workload": "service-networking",
        "nodes": nodes,
        "pods": pods,
        "services": services,
        "namespaces": namespaces,
        "apply_failures": outcome.errors.len(),
        "converge_seconds": converge_wall,
        "virtual_seconds_to_converge": (converged_at as f64 - 1_000.0) / 1000.0,
        "events_processed": events,
        "rss_converged_bytes": rss_converged,
        "full_sync_ms_per_node": sync_ms,
        "rules_per_node": rules,
        "extra_services": extra,
        "extra_services_seconds": extra_wall,
        "bytes_per_service": per_service_bytes,
        "clients": clients,
        "traffic_virtual_seconds": traffic_s,
        "requests": requests,
        "requests_per_virtual_second": requests as f64 / traffic_s.max(1) as f64,
        "requests_per_wall_second": requests as f64 / traffic_wall,
        "peak_rss_bytes": peak_rss_bytes(),
    });
    println!("{result}");
    ExitCode::SUCCESS
}

/// `kubesim bench churn [--nodes N] [--virtual-minutes M] [--sample-minutes S]
/// [--record-history]`: memory over a long run of continuous churn
/// ([`kubesim_sim::scenario::Churn`] with a 30-replica `web` and `elastic` scaled 0 ↔ 60;
/// `--record-history` records the trace, notes and deliveries as the browser app and
/// `kubesim run` do). Events expire an hour after their last write, so the event count
/// plateaus after the first virtual hour. Every S virtual minutes it prints RSS and the
/// store's object counts; the last line is one JSON object with the series. A leak shows as RSS
/// that keeps rising after the bounded histories (watch history, events, finished Jobs, old
/// ReplicaSets) have filled.
fn bench_churn(args: &[String]) -> ExitCode {
    let nodes = flag(args, "--nodes", 50);
    let minutes = flag(args, "--virtual-minutes", 90).max(1);
    let sample = flag(args, "--sample-minutes", 5).max(1);
    let record_history = args.iter().any(|a| a == "--record-history");
    let started = Instant::now();
    let mut world = bench_world_recording(nodes, record_history);
    let churn = kubesim_sim::scenario::Churn { web_replicas: 30, elastic_replicas: 60 };
    let outcome = kubesim_sim::loader::apply(&mut world, &kubesim_sim::scenario::InputFile { name: "churn.yaml".into(), text: churn.base_yaml() });
    if !outcome.errors.is_empty() {
        eprintln!("error: the churn scenario did not apply: {:?}", outcome.errors);
        return ExitCode::from(1);
    }
    let count = |world: &World, group: &'static str, resource: &'static str| world.api().store().count((group, resource)) as u64;
    let mut series = Vec::new();
    let mut events_total = 0u64;
    let end = minutes * 60_000;
    let mut t = world.now();
    println!("{:>6} {:>9} {:>6} {:>6} {:>9} {:>7} {:>8} {:>8}", "vmin", "rss MB", "pods", "jobs", "RSs", "events", "revision", "wall s");
    while t < end {
        let next = t + kubesim_sim::scenario::Churn::PERIOD_MS;
        while world.next_event_time().is_some_and(|e| e <= next) {
            world.step();
            events_total += 1;
        }
        world.run_until(next);
        t = next;
        for step in churn.steps_at(t) {
            match step {
                kubesim_sim::scenario::ChurnStep::Apply(file) => {
                    kubesim_sim::loader::apply(&mut world, &file);
                }
                kubesim_sim::scenario::ChurnStep::Command(line) => {
                    world.run_command(&line);
                }
            }
        }
        if t.is_multiple_of(sample * 60_000) {
            let point = serde_json::json!({
                "virtual_minutes": t / 60_000,
                "rss_bytes": rss_bytes(),
                "pods": count(&world, "", "pods"),
                "jobs": count(&world, "batch", "jobs"),
                "replicasets": count(&world, "apps", "replicasets"),
                "events": count(&world, "", "events") + count(&world, "events.k8s.io", "events"),
                "revision": world.api().store().revision(),
                "sim_events": events_total,
                "wall_seconds": started.elapsed().as_secs_f64(),
            });
            let mb = |v: &serde_json::Value| v.as_u64().map_or("-".to_string(), |b| format!("{:.1}", b as f64 / 1e6));
            let n = |key: &str| point[key].as_u64().unwrap_or(0);
            println!(
                "{:>6} {:>9} {:>6} {:>6} {:>9} {:>7} {:>8} {:>8.1}",
                n("virtual_minutes"),
                mb(&point["rss_bytes"]),
                n("pods"),
                n("jobs"),
                n("replicasets"),
                n("events"),
                n("revision"),
                started.elapsed().as_secs_f64()
            );
            series.push(point);
        }
    }
    let result = serde_json::json!({
        "workload": "churn",
        "nodes": nodes,
        "virtual_minutes": minutes,
        "seconds": started.elapsed().as_secs_f64(),
        "events_processed": events_total,
        "peak_rss_bytes": peak_rss_bytes(),
        "series": series,
    });
    println!("{result}");
    ExitCode::SUCCESS
}
