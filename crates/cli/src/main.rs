//! The native kubesim command line.
//!
//! ```text
//! kubesim run [FILE ...] [--seed N] [--for DURATION] [--at TIME COMMAND]... [-o json|yaml] [--trace FILE] [--scheduler-annotations]
//! ```

use kubesim_api::decode::to_yaml;
use kubesim_api::time::parse_duration;
use kubesim_sim::run::{list_all, RunOptions};
use kubesim_sim::scenario::InputFile;
use std::io::{Read, Write};

mod bench;
mod serve;
use std::process::ExitCode;

/// mimalloc for the native binary: the simulation allocates and frees small objects at a high
/// rate (object versions, watch events, keys), where glibc's malloc spent a fifth of a
/// 10,000-pod run (`kubesim bench cluster`). The wasm build keeps Rust's default allocator;
/// `--no-default-features` keeps the system's, for heap profilers.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "usage:
  kubesim run [FILE ...] [--seed N] [--for DURATION] [--at TIME COMMAND]... [-o json|yaml] [--trace FILE] [--scheduler-annotations]

  FILE        multi-document Kubernetes YAML ('-' = stdin), applied at t=0 in order
  --seed N    the seed of the run's one RNG (default 1)
  --for D     run for virtual duration D (90s, 10m, 1h30m); default: until quiet, at most 10m
  --at T CMD  run CMD ('kubectl ...' or 'fault ...') at virtual time T (repeatable)
  -o FORMAT   print every object at the end as a v1 List (json or yaml)
  --trace F   write one JSON line per committed write to F
  --scheduler-annotations
              write kube-scheduler-simulator's result annotations (filter, score, finalscore,
              selected-node, result-history) to each pod after its scheduling attempt

  kubesim bench cluster [--nodes N] [--pods M] [--per-deployment K]
              a cluster of N nodes and Deployments totalling M pods, run until all are Running
  kubesim bench scheduler [--workload NAME] [--nodes N] [--init-pods M] [--pods K] | --all
              kube-scheduler throughput in upstream's scheduler_perf workloads (SchedulingBasic,
              SchedulingPodAntiAffinity, SchedulingPodAffinity, SchedulingPreferredPodAffinity,
              SchedulingPreferredPodAntiAffinity, SchedulingNodeAffinity, TopologySpreading,
              PreferredTopologySpreading, PreemptionBasic, PreemptionAsync, Unschedulable,
              SchedulingWithMixedChurn) at upstream's sizes unless given; --all runs every one
              and prints each beside upstream's v1.34 threshold
  kubesim bench kubelet [--nodes N] [--pods M]
              pods pre-bound across N nodes: pods started per second
  kubesim bench store [--nodes N] [--pods M]
              store operations: create, update, list by label, watch fan-out
  kubesim bench churn [--nodes N] [--virtual-minutes M] [--sample-minutes S] [--record-history]
              an hour of CronJobs, TTL'd Jobs, rollouts and scaling: RSS over time

  kubesim kubectl [FILE ...] [--seed N] [--for DURATION] [--at TIME COMMAND]... [--scheduler-annotations] -- KUBECTL ARGS...
              run the scenario, then one kubectl command on its final state

  kubesim swarm [--seeds N] [--from S] [--virtual-minutes M] [--jobs J] [--shrink-runs R] [--repro-dir DIR] [--verbose]
              N random clusters, workloads, actions and faults (seeds S..S+N): every commit is
              checked by the invariant checkers, then after a heal the cluster must converge;
              prints each failing seed (exit 1 if any)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("run") => cmd_run(&args[1..]),
        Some("kubectl") => cmd_kubectl(&args[1..]),
        Some("bench") => bench::cmd_bench(&args[1..]),
        Some("serve") => serve::cmd_serve(&args[1..]),
        Some("ctl") => serve::cmd_ctl(&args[1..]),
        Some("swarm") => cmd_swarm(&args[1..]),
        Some("-h") | Some("--help") | Some("help") | None => {
            print!("{USAGE}{}", serve::USAGE);
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("error: unknown command {other:?}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn cmd_run(args: &[String]) -> ExitCode {
    let mut options = RunOptions { seed: 1, ..Default::default() };
    let mut output: Option<String> = None;
    let mut trace_path: Option<String> = None;
    let mut i = 0;
    let usage_error = |message: String| {
        eprintln!("error: {message}\n\n{USAGE}");
        ExitCode::from(2)
    };
    while i < args.len() {
        let arg = &args[i];
        let value = |i: usize| args.get(i + 1).cloned();
        match arg.as_str() {
            "--seed" => {
                let Some(v) = value(i) else { return usage_error("--seed needs a value".into()) };
                match v.parse() {
                    Ok(seed) => options.seed = seed,
                    Err(_) => return usage_error(format!("invalid --seed {v:?}: must be a non-negative integer")),
                }
                i += 2;
            }
            "--for" => {
                let Some(v) = value(i) else { return usage_error("--for needs a duration".into()) };
                match parse_duration(&v) {
                    Some(ms) => options.duration_ms = Some(ms),
                    None => return usage_error(format!("invalid --for {v:?}: use a duration such as 90s, 10m or 1h30m")),
                }
                i += 2;
            }
            "--at" => {
                let (Some(t), Some(command)) = (value(i), args.get(i + 2).cloned()) else {
                    return usage_error("--at needs a time and a command".into());
                };
                match parse_duration(&t) {
                    Some(ms) => options.commands.push((ms, command)),
                    None => return usage_error(format!("invalid --at time {t:?}: use a duration such as 90s")),
                }
                i += 3;
            }
            "-o" | "--output" => {
                let Some(v) = value(i) else { return usage_error("-o needs json or yaml".into()) };
                if v != "json" && v != "yaml" {
                    return usage_error(format!("unsupported output format {v:?}: use json or yaml"));
                }
                output = Some(v);
                i += 2;
            }
            "--trace" => {
                let Some(v) = value(i) else { return usage_error("--trace needs a file".into()) };
                trace_path = Some(v);
                options.trace_history = Some(0);
                i += 2;
            }
            "--scheduler-annotations" => {
                options.scheduler_annotations = true;
                i += 1;
            }
            flag if flag.starts_with("--") && flag.contains('=') => {
                let (name, v) = flag.split_once('=').expect("contains =");
                let mut rewritten = vec![name.to_string(), v.to_string()];
                rewritten.extend(args[i + 1..].iter().cloned());
                let mut head: Vec<String> = args[..i].to_vec();
                head.extend(rewritten);
                return cmd_run(&head);
            }
            flag if flag.starts_with('-') && flag != "-" => return usage_error(format!("unknown flag {flag:?}")),
            file => {
                let text = if file == "-" {
                    let mut text = String::new();
                    if let Err(e) = std::io::stdin().read_to_string(&mut text) {
                        eprintln!("error: reading stdin: {e}");
                        return ExitCode::from(1);
                    }
                    text
                } else {
                    match std::fs::read(file) {
                        Ok(bytes) => match String::from_utf8(bytes) {
                            Ok(text) => text,
                            Err(_) => {
                                eprintln!("error: {file}: not UTF-8 text");
                                return ExitCode::from(1);
                            }
                        },
                        Err(e) => {
                            eprintln!("error: the path {file:?} cannot be read: {e}");
                            return ExitCode::from(1);
                        }
                    }
                };
                options.files.push(InputFile { name: file.to_string(), text });
                i += 1;
            }
        }
    }
    let outcome = match run_with_files(options, None) {
        Ok(outcome) => outcome,
        Err(code) => return code,
    };
    for warning in outcome.files.iter().flat_map(|f| f.warnings.iter()) {
        eprintln!("{warning}");
    }
    for error in &outcome.errors {
        eprintln!("{error}");
    }
    for command in outcome.world.commands() {
        eprintln!("[{}] $ {}", kubesim_api::time::human_duration(command.t_ms), command.line);
        if !command.stdout.is_empty() {
            eprint!("{}", command.stdout);
        }
        if !command.stderr.is_empty() {
            eprint!("{}", command.stderr);
        }
    }
    // Invariant violations the world's checkers recorded (a swarm reproducer shows its own).
    let violations = outcome.world.runtime().violations();
    for v in violations {
        eprintln!("violation: {} at {} ms (revision {}): {}", v.checker, v.t_ms, v.revision, v.message);
    }
    if let Some(path) = trace_path {
        let mut text = String::new();
        for record in outcome.world.trace() {
            text.push_str(&record.to_json_line());
            text.push('\n');
        }
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("error: writing trace {path:?}: {e}");
            return ExitCode::from(1);
        }
    }
    if let Some(format) = output {
        let list = list_all(&outcome.world);
        let text = if format == "json" { serde_json::to_string_pretty(&list).expect("lists serialize") + "\n" } else { to_yaml(&list) };
        let _ = std::io::stdout().write_all(text.as_bytes());
    }
    if outcome.errors.is_empty() && violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Runs the scenario after pre-reading the files `kubectl ... -f PATH` commands refer to.
fn run_with_files(mut options: RunOptions, final_argv: Option<&Vec<String>>) -> Result<kubesim_sim::RunOutcome, ExitCode> {
    let mut extra = Vec::new();
    // The files `--at` commands and the `kubesim kubectl` command read, split as the commands
    // themselves are (POSIX quoting); `-f` files must exist, the others are kubectl's to report.
    let mut argvs: Vec<Vec<String>> = options.commands.iter().filter_map(|(_, c)| kubesim_sim::commands::split(c).ok()).collect();
    argvs.extend(final_argv.cloned());
    for argv in &argvs {
        let required: Vec<String> = kubesim_sim::commands::files_named(&filename_args(argv));
        for path in kubesim_sim::commands::files_named(argv) {
            // URLs are the kubectl layer's: it knows the manifests kubesim carries (the
            // ingress-nginx releases') and reports the others.
            if path == "-" || path.starts_with("http://") || path.starts_with("https://") || extra.iter().any(|f: &InputFile| f.name == path) {
                continue;
            }
            if std::path::Path::new(&path).is_dir() {
                // `--from-file=DIR`, `-k DIR`: the regular files directly in it, as DIR/NAME.
                let mut names: Vec<String> = std::fs::read_dir(&path)
                    .map(|d| d.filter_map(|e| e.ok()).filter(|e| e.path().is_file()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
                    .unwrap_or_default();
                names.sort();
                for name in names {
                    let file = format!("{}/{name}", path.trim_end_matches('/'));
                    if let Ok(text) = std::fs::read_to_string(&file) {
                        if !extra.iter().any(|f: &InputFile| f.name == file) {
                            extra.push(InputFile { name: file, text });
                        }
                    }
                }
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(text) => extra.push(InputFile { name: path.to_string(), text }),
                Err(e) if required.contains(&path) => {
                    eprintln!("error: the path {path:?} cannot be read: {e}");
                    return Err(ExitCode::from(1));
                }
                Err(_) => {}
            }
        }
    }
    let (mut world, files, errors) = kubesim_sim::run::start(&options);
    for file in extra {
        world.add_file(&file.name, &file.text);
    }
    match options.duration_ms.take() {
        Some(duration) => world.run_until(duration),
        None => world.run_until_quiet(kubesim_sim::run::DEFAULT_LIMIT_MS),
    }
    Ok(kubesim_sim::RunOutcome { world, files, errors })
}

/// Only the `-f`/`--filename` arguments of an argv (the files that must exist).
fn filename_args(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let a = &argv[i];
        if a == "-f" || a == "--filename" {
            out.extend(argv[i..(i + 2).min(argv.len())].iter().cloned());
            i += 2;
            continue;
        }
        let filename = a.starts_with("--filename=") || (a.starts_with("-f") && !a.starts_with("--") && a.len() > 2);
        if filename || a == "logs" || a == "log" {
            out.push(a.clone());
        }
        i += 1;
    }
    out
}

fn cmd_kubectl(args: &[String]) -> ExitCode {
    let Some(split) = args.iter().position(|a| a == "--") else {
        eprintln!("error: kubesim kubectl needs '--' before the kubectl arguments\n\n{USAGE}");
        return ExitCode::from(2);
    };
    let mut options = RunOptions { seed: 1, ..Default::default() };
    let mut i = 0;
    let scenario = &args[..split];
    let usage_error = |message: String| {
        eprintln!("error: {message}\n\n{USAGE}");
        ExitCode::from(2)
    };
    while i < scenario.len() {
        let (flag, inline) = match scenario[i].split_once('=').filter(|(f, _)| f.starts_with("--")) {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (scenario[i].clone(), None),
        };
        let value = |i: &mut usize| -> Option<String> {
            match &inline {
                Some(v) => {
                    *i += 1;
                    Some(v.clone())
                }
                None => {
                    let v = scenario.get(*i + 1).cloned();
                    *i += 2;
                    v
                }
            }
        };
        match flag.as_str() {
            "--seed" => match value(&mut i).map(|v| v.parse::<u64>()) {
                Some(Ok(seed)) => options.seed = seed,
                _ => return usage_error("--seed needs a non-negative integer".into()),
            },
            "--for" => match value(&mut i).as_deref().and_then(parse_duration) {
                Some(ms) => options.duration_ms = Some(ms),
                None => return usage_error("--for needs a duration such as 90s, 10m or 1h30m".into()),
            },
            "--scheduler-annotations" => {
                options.scheduler_annotations = true;
                i += 1;
            }
            "--at" => {
                let t = value(&mut i);
                let command = scenario.get(i).cloned();
                i += 1;
                match (t.as_deref().and_then(parse_duration), command) {
                    (Some(ms), Some(c)) => options.commands.push((ms, c)),
                    _ => return usage_error("--at needs a time and a command".into()),
                }
            }
            flag if flag.starts_with('-') && flag != "-" => return usage_error(format!("unknown flag {flag:?}")),
            file => {
                let text = if file == "-" {
                    let mut text = String::new();
                    if let Err(e) = std::io::stdin().read_to_string(&mut text) {
                        eprintln!("error: reading stdin: {e}");
                        return ExitCode::from(1);
                    }
                    text
                } else {
                    match std::fs::read_to_string(file) {
                        Ok(text) => text,
                        Err(e) => {
                            eprintln!("error: the path {file:?} cannot be read: {e}");
                            return ExitCode::from(1);
                        }
                    }
                };
                options.files.push(InputFile { name: file.to_string(), text });
                i += 1;
            }
        }
    }
    // The kubectl arguments exactly as the shell passed them: no re-joining or re-splitting.
    let argv: Vec<String> = args[split + 1..].to_vec();
    let mut outcome = match run_with_files(options, Some(&argv)) {
        Ok(outcome) => outcome,
        Err(code) => return code,
    };
    // As `kubesim run`: invalid documents and apply warnings on stderr, exit status 1.
    for warning in outcome.files.iter().flat_map(|f| f.warnings.iter()) {
        eprintln!("{warning}");
    }
    for error in &outcome.errors {
        eprintln!("{error}");
    }
    if argv.iter().any(|a| a == "-") && kubesim_sim::commands::files_named(&argv).iter().any(|f| f == "-") {
        let mut text = String::new();
        if std::io::stdin().read_to_string(&mut text).is_ok() {
            outcome.world.add_file("-", &text);
        }
    }
    let (stdout, stderr, code) = kubesim_sim::commands::kubectl_argv(&mut outcome.world, &argv);
    print!("{stdout}");
    eprint!("{stderr}");
    let code = if code != 0 {
        code
    } else if outcome.errors.is_empty() {
        0
    } else {
        1
    };
    ExitCode::from(code.clamp(0, 255) as u8)
}

fn cmd_swarm(args: &[String]) -> ExitCode {
    let (mut seeds, mut from, mut minutes, mut jobs, mut shrink_runs) = (10u64, 1u64, 3u64, 1u64, 200u64);
    let mut repro_dir = ".".to_string();
    let verbose = args.iter().any(|a| a == "--verbose" || a == "-v");
    let args: Vec<String> = args.iter().filter(|a| *a != "--verbose" && *a != "-v").cloned().collect();
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--repro-dir" {
            let Some(dir) = args.get(i + 1) else {
                eprintln!("error: --repro-dir needs a directory\n\n{USAGE}");
                return ExitCode::from(2);
            };
            repro_dir = dir.clone();
            i += 2;
            continue;
        }
        let value = args.get(i + 1).and_then(|v| v.parse::<u64>().ok());
        let slot = match args[i].as_str() {
            "--seeds" => &mut seeds,
            "--from" => &mut from,
            "--virtual-minutes" => &mut minutes,
            "--jobs" => &mut jobs,
            "--shrink-runs" => &mut shrink_runs,
            other => {
                eprintln!("error: unknown flag {other:?}\n\n{USAGE}");
                return ExitCode::from(2);
            }
        };
        let Some(v) = value else {
            eprintln!("error: {} needs a non-negative integer\n\n{USAGE}", args[i]);
            return ExitCode::from(2);
        };
        *slot = v;
        i += 2;
    }
    let list: Vec<u64> = (from..from.saturating_add(seeds)).collect();
    let reports = kubesim_sim::swarm::run_seeds(&list, minutes, jobs.max(1) as usize, |report| {
        let verdict = if report.passed() { "ok  " } else { "FAIL" };
        let o = &report.outcome;
        println!(
            "{verdict} seed {}: {} nodes, {} actions{}, {} commits, ended at {} s, history {}",
            report.seed,
            report.nodes,
            report.actions,
            if report.faults { "" } else { " (no faults)" },
            o.revision,
            o.end_ms / 1000,
            o.hash
        );
        for v in &o.violations {
            println!("       violation: {v}");
        }
        if let Some(why) = &o.liveness {
            println!("       liveness: {why}");
        }
        if let Some(why) = &o.panic {
            println!("       panic: {why}");
        }
        if let Some(why) = &report.divergence {
            println!("       determinism: {why}");
        }
        if verbose || !report.passed() {
            for (at, line) in &report.plan.schedule {
                println!("       at {:>4} s: {line}", at / 1000);
            }
            for line in o.final_state.lines() {
                println!("       | {line}");
            }
        }
    });
    let failed: Vec<&kubesim_sim::swarm::SeedReport> = reports.iter().filter(|r| !r.passed()).collect();
    let Some(first) = failed.first() else {
        println!("{seeds} seeds passed (each run twice, identical histories)");
        return ExitCode::SUCCESS;
    };
    println!("{} of {seeds} seeds failed; run the first again with: kubesim swarm --seeds 1 --virtual-minutes {minutes} --from {}", failed.len(), first.seed);
    // A reproducer for the first failure: the plan shrunk while the same invariant fails.
    let mut plan = first.plan.clone();
    let end = first.outcome.end_ms;
    match first.outcome.signature() {
        Some(signature) if shrink_runs > 0 => {
            println!("shrinking seed {} ({signature}), at most {shrink_runs} runs ...", first.seed);
            plan = kubesim_sim::swarm::shrink(&plan, &signature, end, shrink_runs as usize);
            println!(
                "shrunk to {} of {} actions and {} of {} bytes of input",
                plan.schedule.len(),
                first.plan.schedule.len(),
                plan.input.len(),
                first.plan.input.len()
            );
        }
        _ => {}
    }
    let path = std::path::Path::new(&repro_dir).join(plan.file_name());
    match std::fs::write(&path, &plan.input) {
        Ok(()) => println!("reproducer ({}): cd {repro_dir} && {}", path.display(), plan.command_line(end)),
        Err(e) => eprintln!("error: writing {}: {e}", path.display()),
    }
    ExitCode::from(1)
}
