//! The native kubesim command line.
//!
//! ```text
//! kubesim run [FILE ...] [--seed N] [--for DURATION] [--at TIME COMMAND]... [-o json|yaml] [--trace FILE]
//! ```

use kubesim_api::decode::to_yaml;
use kubesim_api::time::parse_duration;
use kubesim_sim::run::{list_all, RunOptions};
use kubesim_sim::scenario::InputFile;
use std::io::{Read, Write};

mod bench;
mod serve;
use std::process::ExitCode;

const USAGE: &str = "usage:
  kubesim run [FILE ...] [--seed N] [--for DURATION] [--at TIME COMMAND]... [-o json|yaml] [--trace FILE]

  FILE        multi-document Kubernetes YAML ('-' = stdin), applied at t=0 in order
  --seed N    the seed of the run's one RNG (default 1)
  --for D     run for virtual duration D (90s, 10m, 1h30m); default: until quiet, at most 10m
  --at T CMD  run CMD ('kubectl ...' or 'fault ...') at virtual time T (repeatable)
  -o FORMAT   print every object at the end as a v1 List (json or yaml)
  --trace F   write one JSON line per committed write to F

  kubesim bench cluster [--nodes N] [--pods M] [--per-deployment K]
              a cluster of N nodes and Deployments totalling M pods, run until all are Running
  kubesim bench scheduler [--nodes N] [--init-pods M] [--pods K] [--workload SchedulingBasic|SchedulingPodAntiAffinity|TopologySpreading]
              kube-scheduler throughput in the scheduler_perf shapes
  kubesim bench kubelet [--nodes N] [--pods M]
              pods pre-bound across N nodes: pods started per second
  kubesim bench store [--nodes N] [--pods M]
              store operations: create, update, list by label, watch fan-out

  kubesim kubectl [FILE ...] [--seed N] [--for DURATION] [--at TIME COMMAND]... -- KUBECTL ARGS...
              run the scenario, then one kubectl command on its final state
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("run") => cmd_run(&args[1..]),
        Some("kubectl") => cmd_kubectl(&args[1..]),
        Some("bench") => bench::cmd_bench(&args[1..]),
        Some("serve") => serve::cmd_serve(&args[1..]),
        Some("ctl") => serve::cmd_ctl(&args[1..]),
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
                i += 2;
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
    let outcome = match run_with_files(options) {
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
    if outcome.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Runs the scenario after pre-reading the files `kubectl ... -f PATH` commands refer to.
fn run_with_files(mut options: RunOptions) -> Result<kubesim_sim::RunOutcome, ExitCode> {
    let mut extra = Vec::new();
    for (_, command) in &options.commands {
        let words: Vec<&str> = command.split_whitespace().collect();
        for pair in words.windows(2) {
            let path = match pair {
                ["-f", path] | ["--filename", path] => Some(*path),
                _ => None,
            };
            if let Some(path) = path.filter(|p| *p != "-") {
                match std::fs::read_to_string(path) {
                    Ok(text) => extra.push(InputFile { name: path.to_string(), text }),
                    Err(e) => {
                        eprintln!("error: the path {path:?} cannot be read: {e}");
                        return Err(ExitCode::from(1));
                    }
                }
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

fn cmd_kubectl(args: &[String]) -> ExitCode {
    let Some(split) = args.iter().position(|a| a == "--") else {
        eprintln!("error: kubesim kubectl needs '--' before the kubectl arguments\n\n{USAGE}");
        return ExitCode::from(2);
    };
    let mut options = RunOptions { seed: 1, ..Default::default() };
    let mut i = 0;
    let scenario = &args[..split];
    while i < scenario.len() {
        match scenario[i].as_str() {
            "--seed" => {
                options.seed = scenario.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or(1);
                i += 2;
            }
            "--for" => {
                options.duration_ms = scenario.get(i + 1).and_then(|v| parse_duration(v));
                i += 2;
            }
            "--at" => {
                if let (Some(t), Some(c)) = (scenario.get(i + 1).and_then(|v| parse_duration(v)), scenario.get(i + 2)) {
                    options.commands.push((t, c.clone()));
                }
                i += 3;
            }
            file => {
                match std::fs::read_to_string(file) {
                    Ok(text) => options.files.push(InputFile { name: file.to_string(), text }),
                    Err(e) => {
                        eprintln!("error: the path {file:?} cannot be read: {e}");
                        return ExitCode::from(1);
                    }
                }
                i += 1;
            }
        }
    }
    let mut outcome = match run_with_files(options) {
        Ok(outcome) => outcome,
        Err(code) => return code,
    };
    let line = args[split + 1..].iter().map(|a| if a.contains(char::is_whitespace) { format!("'{a}'") } else { a.clone() }).collect::<Vec<_>>().join(" ");
    let record = outcome.world.run_command(&format!("kubectl {line}"));
    print!("{}", record.stdout);
    eprint!("{}", record.stderr);
    ExitCode::from(record.exit_code.clamp(0, 255) as u8)
}
