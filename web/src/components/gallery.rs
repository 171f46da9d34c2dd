//! The scenario gallery.

use crate::components::app::Controls;
use crate::state::Action;
use yew::prelude::*;

/// Gallery props.
#[derive(Properties, PartialEq)]
pub struct GalleryProps {
    /// The current scenario's name.
    pub current: AttrValue,
}

/// The gallery overlay.
#[function_component(Gallery)]
pub fn gallery(props: &GalleryProps) -> Html {
    let controls = use_context::<Controls>().expect("controls");
    let close = controls.dispatch.reform(|_: MouseEvent| Action::Gallery(false));
    html! {
        <div class="ks-overlay" role="dialog" aria-modal="true" aria-label="Scenario gallery" onclick={close.clone()}>
            <div class="ks-dialog ks-gallery" onclick={Callback::from(|e: MouseEvent| e.stop_propagation())}>
                <div class="ks-dialog-head">
                    <h2>{ "Scenarios" }</h2>
                    <button class="ks-icon-button" onclick={close} aria-label="Close">{ "✕" }</button>
                </div>
                <div class="ks-cards">
                    { for crate::scenarios::CATALOG.iter().map(|s| {
                        let load = controls.load.clone();
                        let name = s.name.to_string();
                        let current = props.current == s.name;
                        html! {
                            <button class={classes!("ks-card", current.then_some("is-current"))} onclick={Callback::from(move |_: MouseEvent| load.emit(name.clone()))} aria-label={format!("Load scenario {}", s.title)}>
                                <span class="ks-card-title">{ s.title }</span>
                                <span class="ks-card-summary">{ s.summary }</span>
                                <span class="ks-card-foot">
                                    <span class="ks-tag">{ format!("?scenario={}", s.name) }</span>
                                    <span class="ks-tag">{ s.view }</span>
                                </span>
                            </button>
                        }
                    }) }
                </div>
            </div>
        </div>
    }
}
