//! The simulation's WebAssembly module (trunk builds it as a Web Worker: `index.html`). It
//! answers the UI's messages ([`kubesim_web::worker`]); natively it has nothing to do.

fn main() {
    #[cfg(target_arch = "wasm32")]
    kubesim_web::worker::serve();
}

/// The simulation on the page's thread, where no worker can start
/// ([`kubesim_web::worker::sim_channel`]).
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn sim_channel(reply: js_sys::Function) -> js_sys::Function {
    kubesim_web::worker::sim_channel(reply)
}
