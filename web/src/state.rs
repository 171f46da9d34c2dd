//! The UI state: one `AppState`, one `Action` enum, one pure reducer. Effects (running the
//! simulation, reading the clock, talking to the DOM) live in hooks and callbacks; the reducer
//! only records their results.

use crate::engine::InputResult;
use crate::frame::Frame;
use crate::options::Options;
use std::rc::Rc;
use yew::Reducible;

/// The main views.
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// Cluster and lifecycle side by side.
    Overview,
    /// Node cards with pod chips.
    Cluster,
    /// The pod lifecycle graph.
    Lifecycle,
    /// Messages between components.
    Flow,
    /// A searchable, sortable pod table.
    Pods,
    /// Services, kube-proxy rules and traffic.
    Network,
    /// StorageClasses, claims, volumes, attachments and each volume's path.
    Storage,
}

impl View {
    /// Every view, in tab order.
    pub const ALL: [View; 7] = [View::Overview, View::Cluster, View::Lifecycle, View::Flow, View::Pods, View::Network, View::Storage];

    /// URL name.
    pub fn name(self) -> &'static str {
        match self {
            View::Overview => "overview",
            View::Cluster => "cluster",
            View::Lifecycle => "lifecycle",
            View::Flow => "flow",
            View::Pods => "pods",
            View::Network => "network",
            View::Storage => "storage",
        }
    }

    /// Tab label.
    pub fn label(self) -> &'static str {
        match self {
            View::Overview => "Overview",
            View::Cluster => "Cluster",
            View::Lifecycle => "Lifecycle",
            View::Flow => "Flow",
            View::Pods => "Pods",
            View::Network => "Network",
            View::Storage => "Storage",
        }
    }

    /// Parses a URL name.
    pub fn parse(name: &str) -> Option<View> {
        View::ALL.into_iter().find(|v| v.name() == name)
    }
}

/// The side panel's tabs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Panel {
    /// YAML editor.
    Apply,
    /// kubectl console and fault buttons.
    Console,
    /// The selected object.
    Inspect,
    /// The event log.
    Events,
}

impl Panel {
    /// Every panel, in tab order.
    pub const ALL: [Panel; 4] = [Panel::Apply, Panel::Console, Panel::Inspect, Panel::Events];

    /// Tab label.
    pub fn label(self) -> &'static str {
        match self {
            Panel::Apply => "Apply",
            Panel::Console => "kubectl",
            Panel::Inspect => "Inspect",
            Panel::Events => "Events",
        }
    }
}

/// What is selected (shared by every view).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Selection {
    /// Nothing.
    #[default]
    None,
    /// A pod.
    Pod {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// UID (a pod recreated under the same name is another pod).
        uid: String,
    },
    /// A node.
    Node(String),
    /// Any other object.
    Object(kubesim_sim::view::ObjectKey),
}

/// Colour theme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Theme {
    /// Light.
    Light,
    /// Dark.
    Dark,
}

/// The speeds offered; 0 means as fast as possible.
pub const SPEEDS: [f64; 9] = [0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 25.0, 100.0, 0.0];

/// Label of a speed.
pub fn speed_label(speed: f64) -> String {
    if speed <= 0.0 {
        "max".to_string()
    } else if speed < 1.0 {
        format!("{speed}×")
    } else {
        format!("{}×", speed as u32)
    }
}

/// One line of the kubectl console.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ConsoleEntry {
    /// Virtual time it ran at.
    pub t_ms: u64,
    /// The command line.
    pub line: String,
    /// Output.
    pub stdout: String,
    /// Errors.
    pub stderr: String,
}

/// A fork of the history ("what if?") as the views show it next to the original.
#[derive(Clone, Debug, PartialEq)]
pub struct ForkState {
    /// The virtual time it branched off.
    pub at_ms: u64,
    /// What was done to it since (`fault node-down node-2`), or empty.
    pub label: String,
    /// Its latest frame.
    pub frame: Rc<Frame>,
    /// What differs from the original, as of the last comparison.
    pub diff: Rc<kubesim_sim::diff::WorldDiff>,
    /// The editor and the console act on the fork (not the original).
    pub to_fork: bool,
}

/// The whole UI state.
#[derive(Clone, Debug, PartialEq)]
pub struct AppState {
    /// Playing (virtual time follows wall time × speed).
    pub playing: bool,
    /// Speed factor; 0 = as fast as possible.
    pub speed: f64,
    /// Main view.
    pub view: View,
    /// Side panel tab.
    pub panel: Panel,
    /// Selection.
    pub selection: Selection,
    /// Theme.
    pub theme: Theme,
    /// The latest frame from the simulation.
    pub frame: Rc<Frame>,
    /// Current scenario name.
    pub scenario: String,
    /// The gallery overlay is open.
    pub gallery_open: bool,
    /// The keyboard help overlay is open.
    pub help_open: bool,
    /// Chrome-less embed.
    pub embed: bool,
    /// The result of the last apply from the editor.
    pub last_apply: Option<Rc<InputResult>>,
    /// Console history.
    pub console: Rc<Vec<ConsoleEntry>>,
    /// The share dialog is open.
    pub share_open: bool,
    /// A notice to show once (a share link's refused parameter).
    pub notice: Option<String>,
    /// The fork being compared, if any.
    pub fork: Option<ForkState>,
}

impl AppState {
    /// The initial state for the given options.
    pub fn new(options: &Options, frame: Rc<Frame>) -> AppState {
        let selection = match &options.select {
            Some(crate::share::SharedSelection::Pod { namespace, name }) => frame
                .scene
                .pods
                .iter()
                .find(|p| &p.namespace == namespace && &p.name == name)
                .map(|p| Selection::Pod { namespace: namespace.clone(), name: name.clone(), uid: p.uid.clone() })
                .unwrap_or_default(),
            Some(crate::share::SharedSelection::Node(name)) if frame.scene.nodes.iter().any(|n| &n.name == name) => Selection::Node(name.clone()),
            _ => Selection::None,
        };
        AppState {
            playing: options.autoplay,
            speed: options.speed,
            view: options.view,
            panel: if selection == Selection::None { Panel::Apply } else { Panel::Inspect },
            selection,
            theme: options.theme,
            frame,
            scenario: options.scenario.clone(),
            gallery_open: false,
            help_open: false,
            embed: options.embed,
            last_apply: None,
            console: Rc::new(Vec::new()),
            share_open: false,
            notice: options.link_error.clone(),
            fork: None,
        }
    }
}

/// Everything that changes the UI state.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Start playing.
    Play,
    /// Pause.
    Pause,
    /// Toggle play/pause.
    TogglePlay,
    /// Set the speed (0 = max).
    SetSpeed(f64),
    /// One speed step faster (+1) or slower (-1).
    NudgeSpeed(i32),
    /// Switch the main view.
    SetView(View),
    /// Switch the side panel.
    SetPanel(Panel),
    /// Select something (also opens the inspector when it is an object).
    Select(Selection),
    /// Switch theme.
    ToggleTheme,
    /// A new frame from the simulation.
    Frame(Rc<Frame>),
    /// The editor applied YAML.
    Applied(Rc<InputResult>),
    /// The console ran a command.
    Console(ConsoleEntry),
    /// Open or close the gallery.
    Gallery(bool),
    /// Open or close the help overlay.
    Help(bool),
    /// Open or close the share dialog.
    Share(bool),
    /// Dismiss the notice.
    DismissNotice,
    /// Show a notice (the simulation could not be loaded).
    Notice(String),
    /// A fork was opened (or replaced), or closed (`None`).
    Forked(Option<ForkState>),
    /// The fork's new frame and label, with a new comparison when one was made.
    ForkFrame(Rc<Frame>, String, Option<Rc<kubesim_sim::diff::WorldDiff>>),
    /// The editor and console act on the fork (true) or the original.
    ForkTarget(bool),
    /// A scenario was loaded (the driver has rebuilt the world).
    ScenarioLoaded(String, Rc<Frame>),
}

impl Reducible for AppState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            Action::Play => next.playing = true,
            Action::Pause => next.playing = false,
            Action::TogglePlay => next.playing = !next.playing,
            Action::SetSpeed(speed) => next.speed = speed,
            Action::NudgeSpeed(delta) => {
                let index = SPEEDS.iter().position(|s| *s == next.speed).unwrap_or(2) as i32;
                let index = (index + delta).clamp(0, SPEEDS.len() as i32 - 1);
                next.speed = SPEEDS[index as usize];
            }
            Action::SetView(view) => next.view = view,
            Action::SetPanel(panel) => next.panel = panel,
            Action::Select(selection) => {
                if selection != Selection::None {
                    next.panel = Panel::Inspect;
                }
                next.selection = selection;
            }
            Action::ToggleTheme => {
                next.theme = match next.theme {
                    Theme::Light => Theme::Dark,
                    Theme::Dark => Theme::Light,
                }
            }
            Action::Frame(frame) => {
                if Rc::ptr_eq(&frame, &self.frame) {
                    return self;
                }
                next.frame = frame;
            }
            Action::Applied(result) => next.last_apply = Some(result),
            Action::Console(entry) => {
                let mut console = (*next.console).clone();
                console.push(entry);
                if console.len() > 200 {
                    console.remove(0);
                }
                next.console = Rc::new(console);
            }
            Action::Gallery(open) => next.gallery_open = open,
            Action::Help(open) => next.help_open = open,
            Action::Share(open) => next.share_open = open,
            Action::DismissNotice => next.notice = None,
            Action::Notice(text) => next.notice = Some(text),
            Action::Forked(fork) => next.fork = fork,
            Action::ForkFrame(frame, label, diff) => {
                if let Some(fork) = next.fork.as_mut() {
                    fork.frame = frame;
                    fork.label = label;
                    if let Some(diff) = diff {
                        fork.diff = diff;
                    }
                }
            }
            Action::ForkTarget(to_fork) => {
                if let Some(fork) = next.fork.as_mut() {
                    fork.to_fork = to_fork;
                }
            }
            Action::ScenarioLoaded(name, frame) => {
                next.scenario = name;
                next.frame = frame;
                next.selection = Selection::None;
                next.gallery_open = false;
                next.last_apply = None;
                next.fork = None;
            }
        }
        Rc::new(next)
    }
}
