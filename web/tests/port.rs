//! Native tests of the port's simulation side ([`Host`]): each command's actions, in order, and
//! the queries' answers — what the views get back, whichever thread answers them.
#![cfg(not(target_arch = "wasm32"))]

use kubesim_web::port::{Answer, Command, ForkCommand, Host, Query, Start};
use kubesim_web::scenarios;
use kubesim_web::state::Action;

fn host(scenario: &str) -> Host {
    assert!(scenarios::meta(scenario).is_some(), "{scenario}");
    Host::new(Start { scenario: scenario.into(), inputs: Vec::new(), seed: 1, scheduler_annotations: false, t_ms: None, fork: None })
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

/// The same session twice: once on a local host, once through the worker's channel as bytes
/// (JSON messages, frames as deltas) and decoded on the UI's side. Every frame, console line,
/// answer and fork state the UI gets must be the same.
#[test]
fn the_worker_channel_delivers_the_same_frames_and_answers_as_a_local_host() {
    use kubesim_web::wire::{Decoder, FromSim, Received, ToSim};
    use kubesim_web::worker::Channel;
    let start = Start { scenario: "service-dns".into(), inputs: Vec::new(), seed: 7, scheduler_annotations: false, t_ms: None, fork: None };
    let mut local = Host::new(start.clone());
    let mut channel = Channel::default();
    let mut decoder = Decoder::default();
    let ready: Vec<FromSim> = serde_json::from_slice(&Channel::ready()).expect("ready");
    assert_eq!(ready, [FromSim::Ready]);
    // Sends one message through the channel; what the UI's side decodes.
    let mut remote = |message: ToSim, wall: f64| -> Vec<Received> {
        let bytes = serde_json::to_vec(&message).expect("encode");
        let out = channel.handle_bytes(&bytes, &|| wall);
        let batch: Vec<FromSim> = serde_json::from_slice(&out).expect("decode");
        batch.into_iter().map(|m| decoder.decode(m)).collect()
    };
    let actions = |received: Vec<Received>| -> Vec<Action> {
        received
            .into_iter()
            .map(|r| match r {
                Received::Action(a) => a,
                _ => panic!("an answer where actions were expected"),
            })
            .collect()
    };
    let first = actions(remote(ToSim::Start(start), 0.0));
    let [Action::Frame(frame)] = &first[..] else { panic!("{first:?}") };
    assert_eq!(**frame, *local.frame(), "the first frame");

    let mut script: Vec<Command> = Vec::new();
    for n in 1..=120 {
        script.push(Command::Tick { wall_ms: 100.0 * n as f64, playing: true, speed: 5.0 });
        if n == 40 {
            script.push(Command::Run("get svc".into()));
            script.push(Command::Fork(ForkCommand::Open));
            script.push(Command::Run("scale deployment web --replicas=0".into()));
        }
        if n == 80 {
            script.push(Command::Seek(3_000));
            script.push(Command::Fork(ForkCommand::Close));
        }
    }
    let mut frames = 0;
    let mut tails = 0;
    for (n, command) in script.into_iter().enumerate() {
        let wall = 100.0 * (n + 1) as f64;
        let mut expected = Vec::new();
        local.handle(command.clone(), wall, &|| wall, &mut |a| expected.push(a));
        let got = actions(remote(ToSim::Command { wall_ms: wall, command: command.clone() }, wall));
        assert_eq!(got.len(), expected.len(), "{command:?}: {got:?} vs {expected:?}");
        for (got, expected) in got.iter().zip(&expected) {
            match (got, expected) {
                (Action::Frame(a), Action::Frame(b)) => {
                    assert_eq!(**a, **b, "{command:?}");
                    frames += 1;
                    tails += usize::from(!a.activity.is_empty());
                }
                (Action::ForkFrame(a, la, da), Action::ForkFrame(b, lb, db)) => {
                    assert_eq!((&**a, la, da.as_deref()), (&**b, lb, db.as_deref()), "{command:?}");
                }
                (Action::Forked(Some(a)), Action::Forked(Some(b))) => assert_eq!(a, b, "{command:?}"),
                (a, b) => assert_eq!(a, b, "{command:?}"),
            }
        }
    }
    assert!(frames >= 30 && tails > 0, "{frames} frames compared");

    // Answers cross as they are.
    let query = Query::PodContainers("default".into(), "client".into());
    let expected = local.answer(&query);
    assert!(matches!(&expected, Answer::PodContainers(c) if !c.is_empty()), "{expected:?}");
    let got = remote(ToSim::Query { id: 9, query }, 0.0);
    assert!(matches!(&got[..], [Received::Answer(9, a)] if *a == expected));
    let got = remote(ToSim::Query { id: 10, query: Query::Moment }, 0.0);
    assert!(matches!(&got[..], [Received::Answer(10, a)] if *a == local.answer(&Query::Moment)));
    // A message that does not decode is answered with an empty batch.
    assert_eq!(channel_reply(b"{not json"), "[]");
}

fn channel_reply(bytes: &[u8]) -> String {
    String::from_utf8(kubesim_web::worker::Channel::default().handle_bytes(bytes, &|| 0.0)).expect("utf-8")
}
