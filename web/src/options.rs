//! How an app instance starts: from the page URL (`?scenario=...&view=...&autoplay=1&speed=2
//! &embed=1&theme=dark&seed=7&scheduler-annotations=1`, and a share link's `t=42s`,
//! `select=pod/default/web-0` and `inputs=...`, see [`crate::share`]) or from the object given to
//! `kubesim.mount(element, options)`.

use crate::engine::{Millis, TimedInput};
use crate::share::{self, SharedSelection};
use crate::state::{Theme, View};
use wasm_bindgen::JsValue;

/// Start-up options.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Scenario name (see the gallery).
    pub scenario: String,
    /// Main view.
    pub view: View,
    /// Start playing.
    pub autoplay: bool,
    /// Speed factor (0 = max).
    pub speed: f64,
    /// Chrome-less embed: only the view, a small transport bar, no side panel.
    pub embed: bool,
    /// Theme.
    pub theme: Theme,
    /// The simulation seed.
    pub seed: u64,
    /// `scheduler-annotations`: the scheduler writes kube-scheduler-simulator's result
    /// annotations to the pods (off: kube-scheduler writes none).
    pub scheduler_annotations: bool,
    /// `t`: the virtual time to open at (a share link).
    pub t_ms: Option<Millis>,
    /// `select`: the pod or node to select (a share link).
    pub select: Option<SharedSelection>,
    /// `inputs`: what the user applied or ran, with when (a share link); replayed on top of
    /// the scenario's own inputs.
    pub inputs: Vec<TimedInput>,
    /// `fork` and `fork-inputs`: a fork to compare ("what if?"), branched at that virtual
    /// time, recreated from every user input of its history (a share link).
    pub fork: Option<(Millis, Vec<TimedInput>)>,
    /// Why a link's parameter was refused (shown once; the rest of the link still applies).
    pub link_error: Option<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            scenario: crate::scenarios::DEFAULT_SCENARIO.to_string(),
            view: View::Overview,
            autoplay: true,
            speed: 1.0,
            embed: false,
            theme: Theme::Light,
            seed: 1,
            scheduler_annotations: false,
            t_ms: None,
            select: None,
            inputs: Vec::new(),
            fork: None,
            link_error: None,
        }
    }
}

impl Options {
    /// Applies one `key=value` setting; unknown keys and bad values are ignored.
    pub fn set(&mut self, key: &str, value: &str) {
        match key {
            "scenario" if crate::scenarios::meta(value).is_some() => self.scenario = value.to_string(),
            "view" => {
                if let Some(view) = View::parse(value) {
                    self.view = view;
                }
            }
            "autoplay" => self.autoplay = !matches!(value, "0" | "false" | "no"),
            "speed" => {
                if value == "max" {
                    self.speed = 0.0;
                } else if let Ok(speed) = value.trim_end_matches('x').parse::<f64>() {
                    if speed.is_finite() && speed > 0.0 {
                        // Snap to the speeds the transport offers.
                        let speed = speed.clamp(0.25, 100.0);
                        self.speed = crate::state::SPEEDS
                            .iter()
                            .copied()
                            .filter(|s| *s > 0.0)
                            .min_by(|a, b| (a.ln() - speed.ln()).abs().total_cmp(&(b.ln() - speed.ln()).abs()))
                            .unwrap_or(1.0);
                    } else if speed == 0.0 {
                        self.speed = 0.0;
                    }
                }
            }
            "embed" => self.embed = !matches!(value, "0" | "false" | "no"),
            "theme" => {
                self.theme = match value {
                    "dark" => Theme::Dark,
                    _ => Theme::Light,
                }
            }
            "seed" => {
                if let Ok(seed) = value.parse() {
                    self.seed = seed;
                }
            }
            "scheduler-annotations" | "schedulerAnnotations" => self.scheduler_annotations = !matches!(value, "0" | "false" | "no"),
            "t" => match share::parse_time(value) {
                Some(t) => self.t_ms = Some(t),
                None => self.refuse(format!("The link's time {value:?} is not a time within a day (12500, 12.5s, 2m); it opens at the start.")),
            },
            "select" => match SharedSelection::parse(value) {
                Some(selection) => self.select = Some(selection),
                None => self.refuse(format!("The link's selection {value:?} is neither pod/<namespace>/<name> nor node/<name>; nothing is selected.")),
            },
            "fork" => match share::parse_time(value) {
                Some(t) => self.fork = Some((t, self.fork.take().map(|f| f.1).unwrap_or_default())),
                None => self.refuse(format!("The link's fork time {value:?} is not a time within a day; no fork is opened.")),
            },
            "fork-inputs" | "forkInputs" => match share::decode_inputs(value) {
                Ok(inputs) => self.fork = Some((self.fork.as_ref().map_or(0, |f| f.0), inputs)),
                Err(reason) => {
                    self.fork = None;
                    self.refuse(format!("The link's fork was not recreated: {reason}."));
                }
            },
            "inputs" => match share::decode_inputs(value) {
                Ok(inputs) => self.inputs = inputs,
                Err(reason) => {
                    self.inputs.clear();
                    self.refuse(format!("The link's inputs were not replayed: {reason}."));
                }
            },
            _ => {}
        }
    }

    /// Notes a refused link parameter (each reason once, in order).
    fn refuse(&mut self, reason: String) {
        self.link_error = Some(match self.link_error.take() {
            Some(before) => format!("{before} {reason}"),
            None => reason,
        });
    }

    /// Parses a query string (with or without the leading `?`).
    pub fn from_query(query: &str, mut base: Options) -> Options {
        for pair in query.trim_start_matches('?').split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, "1"));
            let value = js_sys::decode_uri_component(value).ok().and_then(|v| v.as_string()).unwrap_or_else(|| value.to_string());
            base.set(key, &value);
        }
        base
    }

    /// Reads a JS options object (`{scenario: "crashloop", view: "lifecycle", speed: 2}`).
    pub fn from_js(value: &JsValue, mut base: Options) -> Options {
        if !value.is_object() {
            return base;
        }
        for key in ["scenario", "view", "autoplay", "speed", "embed", "theme", "seed", "schedulerAnnotations", "t", "select", "inputs", "fork", "forkInputs"] {
            let Ok(field) = js_sys::Reflect::get(value, &JsValue::from_str(key)) else { continue };
            if field.is_undefined() || field.is_null() {
                continue;
            }
            let text = if let Some(b) = field.as_bool() {
                if b {
                    "1".to_string()
                } else {
                    "0".to_string()
                }
            } else if let Some(n) = field.as_f64() {
                n.to_string()
            } else {
                field.as_string().unwrap_or_default()
            };
            base.set(key, &text);
        }
        base
    }
}
