//! The views. Each takes plain data (`Rc` parts of a frame) and callbacks; none touches the
//! simulation except through `Controls` (effects) or read-only queries while rendering.

pub mod app;
pub mod canvas;
pub mod cluster;
pub mod flow;
pub mod fork;
pub mod gallery;
pub mod header;
pub mod inspector;
pub mod lifecycle;
pub mod network;
pub mod panel;
pub mod pods;
pub mod storage;
pub mod timeline;

use wasm_bindgen::JsCast;
use yew::prelude::*;

/// A callback that keeps `state` equal to an `<input>`'s value.
pub fn set_from_input(state: &UseStateHandle<String>) -> Callback<InputEvent> {
    let state = state.clone();
    Callback::from(move |e: InputEvent| {
        if let Some(input) = e.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) {
            state.set(input.value());
        }
    })
}

/// A callback that keeps `state` equal to a `<select>`'s value.
pub fn set_from_select(state: &UseStateHandle<String>) -> Callback<Event> {
    let state = state.clone();
    Callback::from(move |e: Event| {
        if let Some(select) = e.target().and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok()) {
            state.set(select.value());
        }
    })
}

/// A filter `<select>`: "all" (shown as `all`) or one of `values`, bound to `state`.
pub fn filter_select(aria_label: String, class: &'static str, all: &str, values: &[String], state: &UseStateHandle<String>) -> Html {
    html! {
        <select class={class} onchange={set_from_select(state)} aria-label={aria_label}>
            <option value="all" selected={**state == "all"}>{ all }</option>
            { for values.iter().map(|v| html! { <option value={v.clone()} selected={**state == *v}>{ v }</option> }) }
        </select>
    }
}

/// The distinct non-empty `values`, sorted (the options of a filter).
pub fn distinct(values: impl Iterator<Item = String>) -> Vec<String> {
    let mut values: Vec<String> = values.filter(|v| !v.is_empty()).collect();
    kubesim_api::sort::sort(&mut values);
    values.dedup();
    values
}

/// Keyboard access for something clickable that is not a button (a table row, a list item):
/// with `tabindex="0"` on the element, Enter does what `onclick` does (Space stays the app's
/// play/pause key).
pub fn click_on_key(onclick: &Callback<MouseEvent>) -> Callback<KeyboardEvent> {
    let onclick = onclick.clone();
    Callback::from(move |e: KeyboardEvent| {
        if e.key() == "Enter" {
            e.prevent_default();
            if let Ok(click) = MouseEvent::new("click") {
                onclick.emit(click);
            }
        }
    })
}
