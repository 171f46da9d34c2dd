//! The control endpoint, `/kubesim/v1/...` (what `kubesim ctl` calls):
//!
//! | request | does |
//! |---|---|
//! | `GET status` | virtual time, speed, paused, revision, counters |
//! | `POST pause` / `POST resume` | freeze / unfreeze virtual time |
//! | `POST step?events=N` / `POST step?duration=10s` | run N events / a virtual duration now |
//! | `POST speed?value=2` (or `max`) | change the speed |
//! | `POST fault` (body: `node-down node-1`) | inject a fault (`kubesim_sim::Fault::parse`) |
//! | `GET trace?since=REV` | JSON lines of the trace after a revision |
//! | `POST kubectl` (body: a command line) | run kubesim's own kubectl layer on this world |
//! | `POST apply` (body: YAML) | apply documents through the one loader (`kubectl apply -f`) |

use crate::clock::Speed;
use crate::http::{Request, Response};
use crate::status::Failure;
use crate::Shared;
use serde_json::json;
use std::sync::atomic::Ordering;

fn body_text(req: &Request) -> Result<String, Failure> {
    String::from_utf8(req.body.clone()).map_err(|_| Failure::bad_request("the body is not UTF-8"))
}

fn status(shared: &Shared) -> serde_json::Value {
    let counters = json!({
        "requests": shared.requests.load(Ordering::SeqCst),
        "watchers": shared.watchers.load(Ordering::SeqCst),
        "connections": shared.connections.load(Ordering::SeqCst),
    });
    let mut status = shared.run(sim_status).unwrap_or_else(|f| f.status());
    if let (Some(s), Some(c)) = (status.as_object_mut(), counters.as_object()) {
        s.extend(c.clone());
    }
    status
}

fn sim_status(sim: &mut crate::clock::Sim) -> serde_json::Value {
    let now = sim.world.now();
    json!({
        "nowMs": now,
        "time": kubesim_api::time::time_at(now),
        "targetMs": sim.target(),
        "paused": sim.paused(),
        "speed": sim.speed().to_string(),
        "resourceVersion": sim.world.api().store().revision().to_string(),
        "busy": sim.world.busy(),
        "eventsRun": sim.events_run,
        "seed": sim.world.seed(),
    })
}

/// Handles `/kubesim/v1/<rest>`.
pub fn handle(shared: &Shared, req: &Request, rest: &[&str]) -> Result<Response, Failure> {
    let method = req.method.as_str();
    let ok = |shared: &Shared| Ok(Response::json(200, &status(shared)));
    match (method, rest) {
        ("GET", ["status"]) => ok(shared),
        ("POST", ["pause"]) => {
            shared.run(|sim| sim.pause())?;
            ok(shared)
        }
        ("POST", ["resume"]) => {
            shared.run(|sim| sim.resume())?;
            ok(shared)
        }
        ("POST", ["step"]) => {
            enum Step {
                Events(u64),
                For(u64),
            }
            let step = match (req.param("events"), req.param("duration")) {
                (Some(n), _) => Step::Events(n.parse().map_err(|_| Failure::bad_request(format!("invalid events {n:?}")))?),
                (None, Some(d)) => {
                    Step::For(kubesim_api::time::parse_duration(d).ok_or_else(|| Failure::bad_request(format!("invalid duration {d:?}: use 500ms, 10s, 2m")))?)
                }
                (None, None) => Step::Events(1),
            };
            let ran = shared.run(move |sim| match step {
                Step::Events(n) => sim.step_events(n),
                Step::For(ms) => sim.step_for(ms),
            })?;
            let mut s = status(shared);
            s["stepped"] = ran.into();
            Ok(Response::json(200, &s))
        }
        ("POST" | "PUT", ["speed"]) => {
            let text = match req.param("value") {
                Some(v) => v.to_string(),
                None => body_text(req)?,
            };
            let speed = Speed::parse(&text).map_err(Failure::bad_request)?;
            shared.run(move |sim| sim.set_speed(speed))?;
            ok(shared)
        }
        ("POST", ["fault"]) => {
            let spec = match req.param("spec") {
                Some(s) => s.to_string(),
                None => body_text(req)?,
            };
            let spec = spec.trim().trim_start_matches("fault ").to_string();
            let record = shared.run(move |sim| sim.world.run_command(&format!("fault {spec}")))?;
            let code = if record.exit_code == 0 { 200 } else { 400 };
            Ok(Response::json(code, &json!({ "stdout": record.stdout, "stderr": record.stderr, "exitCode": record.exit_code })))
        }
        ("GET", ["trace"]) => {
            let since: u64 = req.param("since").and_then(|s| s.parse().ok()).unwrap_or(0);
            let text = shared.run(move |sim| {
                let trace = sim.world.trace();
                let start = trace.partition_point(|r| r.revision <= since);
                trace[start..].iter().map(|r| r.to_json_line() + "\n").collect::<String>()
            })?;
            Ok(Response::typed(200, "application/jsonl", text.into_bytes()))
        }
        ("POST", ["kubectl"]) => {
            let line = body_text(req)?;
            let command = format!("kubectl {}", line.trim().trim_start_matches("kubectl "));
            let record = shared.run(move |sim| sim.world.run_command(&command))?;
            Ok(Response::json(200, &json!({ "stdout": record.stdout, "stderr": record.stderr, "exitCode": record.exit_code })))
        }
        ("POST", ["apply"]) => {
            let text = body_text(req)?;
            let name = req.param("name").unwrap_or("-").to_string();
            let outcome = shared.run(move |sim| kubesim_sim::loader::apply(&mut sim.world, &kubesim_sim::scenario::InputFile { name, text }))?;
            Ok(Response::json(
                200,
                &json!({ "lines": outcome.lines, "warnings": outcome.warnings, "errors": outcome.errors.iter().map(|e| e.message.clone()).collect::<Vec<_>>() }),
            ))
        }
        (_, ["status" | "pause" | "resume" | "step" | "speed" | "fault" | "trace" | "kubectl" | "apply"]) => Err(Failure::method_not_allowed()),
        _ => Err(Failure::not_found_path()),
    }
}
