//! The native kubesim command line.
//!
//! ```text
//! kubesim run [FILE ...] [--seed N] [--for DURATION] [--at TIME COMMAND]... [-o json|yaml] [--trace FILE]
//! ```

use kubesim_api::decode::to_yaml;
use kubesim_api::time::parse_duration;
use kubesim_sim::run::{list_all, run, RunOptions};
use kubesim_sim::scenario::{ApplyOutcome, InputFile};
use std::io::{Read, Write};
use std::process::ExitCode;

const USAGE: &str = "usage:
  kubesim run [FILE ...] [--seed N] [--for DURATION] [--at TIME COMMAND]... [-o json|yaml] [--trace FILE]

  FILE        multi-document Kubernetes YAML ('-' = stdin), applied at t=0 in order
  --seed N    the seed of the run's one RNG (default 1)
  --for D     run for virtual duration D (90s, 10m, 1h30m); default: until quiet, at most 10m
  --at T CMD  run CMD ('kubectl ...' or 'fault ...') at virtual time T (repeatable)
  -o FORMAT   print every object at the end as a v1 List (json or yaml)
  --trace F   write one JSON line per committed write to F
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("run") => cmd_run(&args[1..]),
        Some("-h") | Some("--help") | Some("help") | None => {
            print!("{USAGE}");
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
    let outcome = run(options);
    for applied in &outcome.applied {
        if let ApplyOutcome::Warning(w) = applied {
            eprintln!("{w}");
        }
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
        let text = if format == "json" {
            serde_json::to_string_pretty(&list).expect("lists serialize") + "\n"
        } else {
            to_yaml(&list)
        };
        let _ = std::io::stdout().write_all(text.as_bytes());
    }
    if outcome.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
