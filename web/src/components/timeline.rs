//! The timeline: transport (step back, play/pause, step), speed, the virtual clock, and a
//! scrubbable track with API activity, input markers and the playhead. Scrubbing backwards
//! restores the latest snapshot of the world before that moment and runs it forward
//! (deterministic), so every moment is real.

use crate::components::app::Controls;
use crate::engine::Millis;
use crate::frame::Frame;
use crate::state::{speed_label, Action, SPEEDS};
use crate::text::{clock, short_duration};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Small transport icons (SVG, so they never depend on the fonts installed).
pub fn icon(name: &str) -> Html {
    let d = match name {
        "play" => "M5 3.5v9l8-4.5z",
        "pause" => "M4.5 3h2.6v10H4.5zM8.9 3h2.6v10H8.9z",
        "back" => "M12 3.5v9L5.5 8zM3.5 3.5h2v9h-2z",
        "forward" => "M4 3.5v9L10.5 8zM10.5 3.5h2v9h-2z",
        "restart" => "M3 3h2v10H3zM13 3.5v9L6 8z",
        "fork" => "M3 1.5h2v4.3l3 3 3-3V1.5h2v5.1l-4 4v3.9H7v-3.9l-4-4z",
        _ => "",
    };
    html! { <svg class="ks-icon" viewBox="0 0 16 16" aria-hidden="true"><path d={d} /></svg> }
}

/// Timeline props.
#[derive(Properties, PartialEq)]
pub struct TimelineProps {
    /// The frame.
    pub frame: Rc<Frame>,
    /// Playing.
    pub playing: bool,
    /// Speed.
    pub speed: f64,
    /// Embedded (smaller).
    pub compact: bool,
    /// Where the fork being compared branched off.
    #[prop_or_default]
    pub fork_at: Option<Millis>,
}

const SCALES: [Millis; 12] = [30_000, 60_000, 120_000, 300_000, 600_000, 1_200_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 43_200_000, 86_400_000];

/// The track's full length for a history reaching `high_water_ms`.
pub fn scale_for(high_water_ms: Millis) -> Millis {
    SCALES.iter().copied().find(|s| *s >= high_water_ms + high_water_ms / 20).unwrap_or(high_water_ms * 2)
}

fn tick_step(scale: Millis) -> Millis {
    match scale {
        s if s <= 30_000 => 5_000,
        s if s <= 60_000 => 10_000,
        s if s <= 120_000 => 20_000,
        s if s <= 300_000 => 60_000,
        s if s <= 600_000 => 120_000,
        s if s <= 1_800_000 => 300_000,
        s if s <= 3_600_000 => 600_000,
        s => s / 6,
    }
}

/// The timeline.
#[function_component(Timeline)]
pub fn timeline(props: &TimelineProps) -> Html {
    let controls = use_context::<Controls>().expect("controls");
    let frame = &props.frame;
    let scale = scale_for(frame.high_water_ms.max(frame.t_ms));
    let track = use_node_ref();
    let dragging = use_mut_ref(|| false);
    // While dragging, the playhead previews the target; the world travels there on release
    // (travelling back restores a snapshot and runs forward, which is not free for big worlds).
    let preview = use_state(|| None::<Millis>);

    let time_at = {
        let track = track.clone();
        move |client_x: i32| -> Option<Millis> {
            let element = track.cast::<web_sys::Element>()?;
            let rect = element.get_bounding_client_rect();
            if rect.width() <= 0.0 {
                return None;
            }
            let fraction = ((client_x as f64 - rect.left()) / rect.width()).clamp(0.0, 1.0);
            Some((fraction * scale as f64).round() as Millis)
        }
    };
    let on_down = {
        let (time_at, dragging, dispatch, preview) = (time_at.clone(), dragging.clone(), controls.dispatch.clone(), preview.clone());
        Callback::from(move |e: PointerEvent| {
            if let Some(target) = e.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) {
                let _ = target.set_pointer_capture(e.pointer_id());
            }
            *dragging.borrow_mut() = true;
            dispatch.emit(Action::Pause);
            preview.set(time_at(e.client_x()));
        })
    };
    let on_move = {
        let (time_at, dragging, preview) = (time_at.clone(), dragging.clone(), preview.clone());
        Callback::from(move |e: PointerEvent| {
            if *dragging.borrow() {
                preview.set(time_at(e.client_x()));
            }
        })
    };
    let on_up = {
        let (dragging, preview, seek) = (dragging.clone(), preview.clone(), controls.seek.clone());
        Callback::from(move |_: PointerEvent| {
            if std::mem::replace(&mut *dragging.borrow_mut(), false) {
                if let Some(t) = *preview {
                    seek.emit(t);
                }
                preview.set(None);
            }
        })
    };
    let on_key = {
        let (seek, t) = (controls.seek.clone(), frame.t_ms);
        Callback::from(move |e: KeyboardEvent| match e.key().as_str() {
            "Home" => seek.emit(0),
            "PageDown" => seek.emit(t + 10_000),
            "PageUp" => seek.emit(t.saturating_sub(10_000)),
            _ => {}
        })
    };

    // API activity histogram: 120 bins over the scale.
    let bins = 120usize;
    let mut counts = vec![0u32; bins];
    for t in frame.activity.iter() {
        let bin = ((*t as f64 / scale as f64) * bins as f64) as usize;
        if bin < bins {
            counts[bin] += 1;
        }
    }
    let max = counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    let bars = counts.iter().enumerate().filter(|(_, c)| **c > 0).map(|(i, c)| {
        let h = 4.0 + 22.0 * (*c as f64 / max).sqrt();
        let x = i as f64 / bins as f64 * 100.0;
        html! { <rect x={format!("{x:.2}%")} y={format!("{:.1}", 30.0 - h)} width={format!("{:.2}%", 100.0 / bins as f64 * 0.7)} height={format!("{h:.1}")} class={if (i as f64 / bins as f64 * scale as f64) as Millis <= frame.t_ms { "ks-act is-past" } else { "ks-act" }} /> }
    });
    let step = tick_step(scale);
    let ticks = (0..=scale / step).map(|n| {
        let t = n * step;
        let x = t as f64 / scale as f64 * 100.0;
        html! {
            <g key={t}>
                <line x1={format!("{x:.2}%")} x2={format!("{x:.2}%")} y1="30" y2="35" class="ks-tick" />
                <text x={format!("{x:.2}%")} y="46" class="ks-tick-label" text-anchor={if n == 0 { "start" } else if t == scale { "end" } else { "middle" }}>{ short_duration(t) }</text>
            </g>
        }
    });
    let markers = frame.markers.iter().map(|m| {
        let x = (m.t_ms as f64 / scale as f64 * 100.0).min(100.0);
        let seek = controls.seek.clone();
        let t = m.t_ms;
        let onclick = Callback::from(move |e: MouseEvent| {
            e.stop_propagation();
            seek.emit(t);
        });
        html! {
            <g class={classes!("ks-marker", m.user.then_some("is-user"), m.error.then_some("is-error"))} {onclick}>
                <line x1={format!("{x:.2}%")} x2={format!("{x:.2}%")} y1="2" y2="30" />
                <circle cx={format!("{x:.2}%")} cy="5" r="4.5" />
                <title>{ format!("{} at {}", m.label, clock(m.t_ms)) }</title>
            </g>
        }
    });
    // Warning events (BackOff, FailedScheduling, ...) as red ticks under the activity.
    let mut warned: Vec<(Millis, String)> = Vec::new();
    for e in frame.events.iter().filter(|e| e.type_ == "Warning") {
        if !warned.iter().any(|(t, r)| *t == e.first_ms && *r == e.reason) {
            warned.push((e.first_ms, format!("{} {}: {}", e.reason, e.object, e.message)));
        }
    }
    let warnings = warned.iter().take(200).map(|(t, text)| {
        let x = (*t as f64 / scale as f64 * 100.0).min(100.0);
        html! {
            <g class="ks-warning-tick">
                <rect x={format!("{x:.2}%")} y="33" width="3" height="6" />
                <title>{ format!("{} · {}", clock(*t), text) }</title>
            </g>
        }
    });
    let played = frame.t_ms as f64 / scale as f64 * 100.0;
    let ghost = preview.map(|t| (t as f64 / scale as f64 * 100.0, t));
    let reached = frame.high_water_ms as f64 / scale as f64 * 100.0;

    let toggle = controls.dispatch.reform(|_: MouseEvent| Action::TogglePlay);
    let back = controls.step.reform(|_: MouseEvent| -1);
    let forward = controls.step.reform(|_: MouseEvent| 1);
    let restart = controls.seek.reform(|_: MouseEvent| 0);
    let what_if = controls.fork.reform(|_: MouseEvent| crate::components::app::ForkCommand::Open);
    let on_speed = controls.dispatch.reform(|e: Event| {
        let value = e.target().and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok()).map(|s| s.value()).unwrap_or_default();
        Action::SetSpeed(value.parse().unwrap_or(1.0))
    });
    let status = if frame.lagging {
        ("lag", "simulation behind real time")
    } else if frame.busy {
        ("busy", "working")
    } else {
        ("idle", "settled")
    };
    html! {
        <footer class={classes!("ks-timeline", props.compact.then_some("is-compact"))} aria-label="Timeline">
            <div class="ks-transport" role="toolbar" aria-label="Playback">
                <button class="ks-round" onclick={restart} aria-label="Back to the start" title="Back to t=0">{ icon("restart") }</button>
                <button class="ks-round" onclick={back} aria-label="Step back" title="Step back (←)">{ icon("back") }</button>
                <button class={classes!("ks-round", "ks-play", props.playing.then_some("is-playing"))} onclick={toggle} aria-label={if props.playing { "Pause" } else { "Play" }} aria-pressed={props.playing.to_string()} title="Play / pause (space)">
                    { if props.playing { icon("pause") } else { icon("play") } }
                </button>
                <button class="ks-round" onclick={forward} aria-label="Step forward" title="Step to the next API write (→)">{ icon("forward") }</button>
                <label class="ks-speed">
                    <span class="ks-visually-hidden">{ "Speed" }</span>
                    <select onchange={on_speed} aria-label="Speed" title="Speed ([ and ])">
                        { for SPEEDS.iter().map(|s| html! { <option value={s.to_string()} selected={*s == props.speed}>{ speed_label(*s) }</option> }) }
                    </select>
                </label>
                <div class="ks-clock" aria-label="Virtual time" title="Virtual time since the cluster started">
                    <span class="ks-clock-value">{ clock(frame.t_ms) }</span>
                    <span class={classes!("ks-status", status.0)} title={status.1}>{ status.1 }</span>
                </div>
                if !props.compact {
                    <button class="ks-button ks-small ks-whatif" onclick={what_if} aria-label="What if? Fork the history here"
                        title="What if? Fork the history at this moment, change the fork, and play both futures side by side">
                        { icon("fork") }{ if props.fork_at.is_some() { "Fork again" } else { "What if?" } }
                    </button>
                }
            </div>
            <div class="ks-track" ref={track} onpointerdown={on_down} onpointermove={on_move} onpointerup={on_up.clone()} onpointercancel={on_up}
                onkeydown={on_key} tabindex="0" role="slider" aria-label="Virtual time" aria-valuemin="0" aria-valuemax={scale.to_string()} aria-valuenow={frame.t_ms.to_string()} aria-valuetext={clock(frame.t_ms)}>
                <svg class="ks-track-svg" preserveAspectRatio="none" aria-hidden="true">
                    <rect x="0" y="30" width={format!("{reached:.2}%")} height="2" class="ks-reached" />
                    <rect x="0" y="30" width={format!("{played:.2}%")} height="2" class="ks-played" />
                    { for bars }
                    { for ticks }
                    { for warnings }
                    { for markers }
                    if let Some(at) = props.fork_at {
                        <g class="ks-fork-mark">
                            <line x1={format!("{:.2}%", (at as f64 / scale as f64 * 100.0).min(100.0))} x2={format!("{:.2}%", (at as f64 / scale as f64 * 100.0).min(100.0))} y1="0" y2="36" />
                            <title>{ format!("the fork branched here, at {}", clock(at)) }</title>
                        </g>
                    }
                    <line x1={format!("{played:.2}%")} x2={format!("{played:.2}%")} y1="0" y2="36" class="ks-playhead" />
                    <circle cx={format!("{played:.2}%")} cy="31" r="5" class="ks-playhead-knob" />
                    if let Some((x, t)) = ghost {
                        <line x1={format!("{x:.2}%")} x2={format!("{x:.2}%")} y1="0" y2="36" class="ks-ghost" />
                        <text x={format!("{x:.2}%")} y="-4" text-anchor="middle" class="ks-ghost-label">{ clock(t) }</text>
                    }
                </svg>
            </div>
        </footer>
    }
}
