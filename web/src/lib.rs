//! kubesim-web: the browser visualizer. A Yew app over `kubesim_sim`.
//!
//! Code map:
//! - [`engine`]: one `World` plus the inputs that drove it; time travel restores the latest
//!   periodic snapshot (a clone of the world) and runs forward, or rebuilds and replays.
//! - [`driver`]: wall time → virtual time per animation frame, and the [`frame::Frame`] the
//!   views draw (with message and pod animations).
//! - [`port`]: the UI's one door to the simulation: commands in, frames and answers out
//!   (plain data; its [`port::Host`] is the simulation's side).
//! - [`wire`]: the port's messages as bytes (frames as deltas); [`worker`]: the simulation in a
//!   Web Worker (the `kubesim-worker` binary) and the UI's end of the channel to it.
//! - [`state`]: the UI state, its `Action`s and the pure reducer.
//! - [`components`]: the views (cluster, lifecycle graph, component flow, pods table,
//!   timeline, inspectors, editor, console, gallery).
//! - [`scenarios`]: the gallery's inputs; [`options`]: URL / `kubesim.mount` options.
//!
//! Architecture invariants: everything drawn comes from the world's state and trace (no
//! scripted animation); the model crates never import yew; the reducer does no I/O.

#![deny(missing_docs)]

pub mod components;
pub mod driver;
pub mod engine;
pub mod frame;
pub mod options;
pub mod port;
pub mod scenarios;
pub mod share;
pub mod state;
pub mod text;
pub mod wire;
pub mod worker;

use options::Options;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

const STYLE: &str = include_str!("../style.css");

/// Adds the stylesheet to the document once.
pub fn install_style() {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else { return };
    if document.get_element_by_id("kubesim-style").is_some() {
        return;
    }
    if let Ok(style) = document.create_element("style") {
        style.set_id("kubesim-style");
        style.set_text_content(Some(STYLE));
        if let Some(head) = document.head() {
            let _ = head.append_child(&style);
        }
    }
}

/// The theme the user's system prefers.
pub fn preferred_theme() -> state::Theme {
    let dark = web_sys::window().and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten()).is_some_and(|m| m.matches());
    if dark {
        state::Theme::Dark
    } else {
        state::Theme::Light
    }
}

/// Mounts an app into `element` with `options`, its simulation in a Web Worker (on this thread
/// when no worker can be started). Destroying the handle stops the simulation (terminating its
/// worker) and its animation loop and removes the app from the element.
#[cfg(any(target_arch = "wasm32", feature = "local"))]
pub fn mount(element: web_sys::Element, options: Options) -> yew::AppHandle<components::app::App> {
    mount_with(element, options, components::app::Connect(worker::connect))
}

/// [`mount`] with the simulation reached through `connect` ([`port::Port::local_start`]: on
/// this thread, in the same module — tests).
pub fn mount_with(element: web_sys::Element, options: Options, connect: components::app::Connect) -> yew::AppHandle<components::app::App> {
    install_style();
    yew::Renderer::<components::app::App>::with_root_and_props(element, components::app::AppProps { options, connect }).render()
}

/// Registers `window.kubesim.mount(element, options)` (which returns `{ unmount() }`) and
/// mounts the full app into `#kubesim-app` when the page has one (options from the URL).
pub fn start() {
    let Some(window) = web_sys::window() else { return };
    let mount_fn = Closure::<dyn Fn(JsValue, JsValue) -> JsValue>::new(|target: JsValue, options: JsValue| -> JsValue {
        let element = if let Some(selector) = target.as_string() {
            web_sys::window().and_then(|w| w.document()).and_then(|d| d.query_selector(&selector).ok().flatten())
        } else {
            target.dyn_into::<web_sys::Element>().ok()
        };
        let Some(element) = element else { return JsValue::NULL };
        let base = Options { theme: preferred_theme(), ..Options::default() };
        let handle = std::cell::RefCell::new(Some(mount(element, Options::from_js(&options, base))));
        // `unmount()` destroys the app once; later calls do nothing.
        let unmount = Closure::<dyn Fn()>::new(move || {
            if let Some(handle) = handle.borrow_mut().take() {
                handle.destroy();
            }
        });
        let api = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&api, &JsValue::from_str("unmount"), unmount.as_ref());
        unmount.forget();
        api.into()
    });
    let api = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&api, &JsValue::from_str("mount"), mount_fn.as_ref());
    let scenarios = js_sys::Array::new();
    for scenario in scenarios::CATALOG {
        scenarios.push(&JsValue::from_str(scenario.name));
    }
    let _ = js_sys::Reflect::set(&api, &JsValue::from_str("scenarios"), &scenarios);
    mount_fn.forget();
    let _ = js_sys::Reflect::set(&window, &JsValue::from_str("kubesim"), &api);
    if let Some(document) = window.document() {
        if let Some(element) = document.get_element_by_id("kubesim-app") {
            let query = window.location().search().unwrap_or_default();
            let base = Options { theme: preferred_theme(), ..Options::default() };
            // The page's own app lives as long as the page.
            let _ = mount(element, Options::from_query(&query, base));
        }
        if let Ok(event) = web_sys::CustomEvent::new("kubesim-ready") {
            let _ = document.dispatch_event(&event);
        }
    }
}
