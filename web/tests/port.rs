//! Native tests of the port's simulation side ([`Host`]): each command's actions, in order, and
//! the queries' answers — what the views get back, whichever thread answers them.
#![cfg(not(target_arch = "wasm32"))]

use kubesim_web::port::{Answer, Command, ForkCommand, Host, Query, Start};
use kubesim_web::scenarios;
use kubesim_web::state::Action;

fn host(scenario: &str) -> Host {
    let scenario = scenarios::by_name(scenario).expect("scenario");
    Host::new(Start { scenario, seed: 1, scheduler_annotations: false, t_ms: None, fork: None })
}

/// Sends `command` at wall time `wall`, the clock standing still (no budget runs out).
fn send(host: &mut Host, command: Command, wall: f64) -> Vec<Action> {
    let mut actions = Vec::new();
    host.handle(command, wall, &|| wall, &mut |a| actions.push(a));
    actions
}

fn names(actions: &[Action]) -> Vec<&'static str> {
    actions
        .iter()
        .map(|a| match a {
            Action::Frame(_) => "Frame",
            Action::ForkFrame(..) => "ForkFrame",
            Action::Applied(_) => "Applied",
            Action::Console(_) => "Console",
            Action::Forked(Some(_)) => "Forked",
            Action::Forked(None) => "Unforked",
            Action::ForkTarget(_) => "ForkTarget",
            Action::Pause => "Pause",
            Action::Play => "Play",
            Action::ScenarioLoaded(..) => "ScenarioLoaded",
            Action::SetView(_) => "SetView",
            _ => "other",
        })
        .collect()
}

#[test]
fn ticks_hand_out_only_changed_frames_and_commands_answer_with_actions() {
    let mut host = host("nginx");
    // Playing at 1×: the first tick starts the clock, the next ones advance it.
    let mut t = 0.0;
    let mut frames = 0;
    for _ in 0..100 {
        t += 100.0;
        frames += names(&send(&mut host, Command::Tick { wall_ms: t, playing: true, speed: 1.0 }, t)).iter().filter(|n| **n == "Frame").count();
    }
    assert!(frames >= 10, "a playing world hands out frames: {frames}");
    assert!(host.frame().t_ms >= 9_000, "virtual time followed wall time: {}", host.frame().t_ms);
    // Paused, an unchanged world hands out nothing.
    send(&mut host, Command::Tick { wall_ms: t + 100.0, playing: false, speed: 1.0 }, t + 100.0);
    assert!(send(&mut host, Command::Tick { wall_ms: t + 200.0, playing: false, speed: 1.0 }, t + 200.0).is_empty());

    // The console is kubectl's: `get pods` runs as `kubectl get pods`.
    let actions = send(&mut host, Command::Run(" get pods ".into()), t);
    assert_eq!(names(&actions), ["Frame", "Console"]);
    let Action::Console(entry) = &actions[1] else { unreachable!() };
    assert_eq!(entry.line, "kubectl get pods");
    assert!(entry.stdout.starts_with("NAME"), "{entry:?}");
    assert!(send(&mut host, Command::Run("   ".into()), t).is_empty(), "an empty line runs nothing");

    let actions = send(&mut host, Command::Apply("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n".into()), t);
    assert_eq!(names(&actions), ["Frame", "Applied"]);
    let Action::Applied(result) = &actions[1] else { unreachable!() };
    assert_eq!(result.lines, ["configmap/c created"]);

    let actions = send(&mut host, Command::Seek(2_000), t);
    assert_eq!(names(&actions), ["Frame"]);
    assert_eq!(host.frame().t_ms, 2_000);
    assert_eq!(names(&send(&mut host, Command::Step(1), t)), ["Pause", "Frame"]);
    assert!(host.frame().t_ms > 2_000, "stepped to the next write");

    // The queries read the original's world now.
    let key = |kind: &str, name: &str| kubesim_sim::view::ObjectKey {
        group: if kind == "Deployment" { "apps" } else { "" }.into(),
        resource: if kind == "Deployment" { "deployments" } else { "configmaps" }.into(),
        kind: kind.into(),
        namespace: "default".into(),
        name: name.into(),
    };
    let Answer::ObjectKeys(keys) = host.answer(&Query::ObjectKeys) else { panic!("keys") };
    assert!(keys.contains(&key("Deployment", "nginx")), "{keys:?}");
    assert!(matches!(host.answer(&Query::ObjectJson(key("Deployment", "nginx"))), Answer::ObjectJson(Some(_))));
    // Travelled back before the ConfigMap: the store no longer has it.
    assert_eq!(host.answer(&Query::ObjectJson(key("ConfigMap", "c"))), Answer::ObjectJson(None));
    let Answer::Moment(moment) = host.answer(&Query::Moment) else { panic!("moment") };
    assert_eq!((moment.seed, moment.t_ms, moment.inputs.len(), moment.fork), (1, host.frame().t_ms, 2, None), "two user inputs");
}

#[test]
fn a_fork_takes_the_editor_and_console_when_targeted_and_is_compared() {
    let mut host = host("nginx");
    send(&mut host, Command::Seek(20_000), 0.0);
    let actions = send(&mut host, Command::Fork(ForkCommand::Open), 0.0);
    assert_eq!(names(&actions), ["Pause", "Forked"]);
    let Action::Forked(Some(fork)) = &actions[1] else { unreachable!() };
    assert_eq!((fork.at_ms, fork.to_fork, fork.diff.is_empty()), (20_000, true, true));

    // Targeted, the console acts on the fork: the original's frame stays, the fork's changes.
    let actions = send(&mut host, Command::Run("scale deployment nginx --replicas=1".into()), 0.0);
    assert_eq!(names(&actions), ["ForkFrame", "Console"]);
    let Action::Console(entry) = &actions[1] else { unreachable!() };
    assert_eq!(entry.line, "[fork] kubectl scale deployment nginx --replicas=1");
    let Action::ForkFrame(_, label, _) = &actions[0] else { unreachable!() };
    assert_eq!(label, "kubectl scale deployment nginx --replicas=1");

    // Following the original's clock, the fork is compared and differs.
    let mut diffs = Vec::new();
    for n in 1..=20 {
        let wall = 1_000.0 * n as f64;
        for action in send(&mut host, Command::Tick { wall_ms: wall, playing: false, speed: 1.0 }, wall) {
            if let Action::ForkFrame(_, _, Some(diff)) = action {
                diffs.push(diff);
            }
        }
        send(&mut host, Command::Seek(20_000 + 1_000 * n), wall);
    }
    assert!(diffs.last().is_some_and(|d| !d.is_empty()), "the fork scaled down: {diffs:?}");
    let Answer::Moment(moment) = host.answer(&Query::Moment) else { panic!("moment") };
    assert_eq!(moment.fork.map(|(at, inputs)| (at, inputs.len())), Some((20_000, 1)));

    // Untargeted, the original takes the console; closed, the fork is gone.
    assert_eq!(names(&send(&mut host, Command::Fork(ForkCommand::Target(false)), 0.0)), ["ForkTarget"]);
    assert_eq!(names(&send(&mut host, Command::Run("get pods".into()), 0.0)), ["Frame", "Console"]);
    assert_eq!(names(&send(&mut host, Command::Fork(ForkCommand::Close), 0.0)), ["Unforked"]);
    assert!(host.fork_state().is_none());

    // Loading a scenario starts it playing in its view.
    assert_eq!(names(&send(&mut host, Command::Load("service-dns".into()), 0.0)), ["ScenarioLoaded", "SetView", "Play"]);
    assert!(send(&mut host, Command::Load("no-such-scenario".into()), 0.0).is_empty());
}
