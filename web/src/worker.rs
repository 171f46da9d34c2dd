//! The simulation in a Web Worker, and the UI's end of the channel to it.
//!
//! The site ships two WebAssembly modules: the UI's (`kubesim-web`: Yew, the views, the port)
//! and the simulation's (`kubesim-worker`: the world, the engine, the [`Host`]). The UI starts a
//! Worker on `kubesim-worker_loader.js` and talks to it in [`wire`](crate::wire) messages, so
//! the simulation runs flat out without taking frames from the page. Where a Worker cannot be
//! started from there (a page on another origin), the worker is made from a blob that imports
//! the simulation's script; where no worker starts at all (a browser without workers, a page
//! forbidding `blob:` workers), the UI loads the same simulation module on its own thread and
//! talks to it through the same messages, ticking once per animation frame with the page's
//! budget, as everything ran before the split.
//!
//! Either way the simulation's end is [`Channel`]: bytes in (one [`ToSim`]), bytes out (a batch
//! of [`FromSim`], one per message, plus a first `[Ready]`).

use crate::port::Host;
use crate::wire::{Encoder, FromSim, ToSim};

/// Wall ms the simulation in a worker runs per tick: the page renders meanwhile, so a tick may
/// take longer than a frame (at max speed the views then refresh at 30-40 Hz, the page at 60).
pub const WORKER_TICK_BUDGET_MS: f64 = 24.0;

/// The simulation's end: a host (once started) and the encoder of what it sends.
pub struct Channel {
    host: Option<Host>,
    encoder: Encoder,
    /// Wall ms the simulation runs per tick.
    tick_budget_ms: f64,
}

impl Default for Channel {
    /// A channel in a worker ([`WORKER_TICK_BUDGET_MS`]).
    fn default() -> Channel {
        Channel::with_tick_budget(WORKER_TICK_BUDGET_MS)
    }
}

impl Channel {
    /// A channel whose simulation runs `ms` of wall time per tick (on the page's thread:
    /// [`crate::port::TICK_BUDGET_MS`], the page needs the rest of its frame).
    pub fn with_tick_budget(ms: f64) -> Channel {
        Channel { host: None, encoder: Encoder::default(), tick_budget_ms: ms }
    }

    /// Handles one message and returns the batch that answers it.
    pub fn handle(&mut self, message: ToSim, clock: &dyn Fn() -> f64) -> Vec<FromSim> {
        let mut actions = Vec::new();
        let mut out = Vec::new();
        match message {
            ToSim::Start(start) => {
                let mut host = Host::new(start);
                host.set_tick_budget(self.tick_budget_ms);
                actions.push(crate::state::Action::Frame(host.frame()));
                if let Some(fork) = host.fork_state() {
                    actions.push(crate::state::Action::Forked(Some(fork)));
                }
                self.host = Some(host);
            }
            ToSim::Command { wall_ms, command } => {
                if let Some(host) = self.host.as_mut() {
                    host.handle(command, wall_ms, clock, &mut |a| actions.push(a));
                }
            }
            ToSim::Query { id, query } => {
                let answer = self.host.as_ref().map_or(crate::port::Answer::Nothing, |h| h.answer(&query));
                out.push(FromSim::Answer(id, answer));
            }
            ToSim::External { id, wall_ms, url, host: header } => {
                let result = match self.host.as_mut() {
                    Some(host) => host.send_external(&url, &header, wall_ms, &mut |a| actions.push(a)),
                    None => Err("the simulation has not started".into()),
                };
                out.push(FromSim::External(id, result));
            }
        }
        let mut batch: Vec<FromSim> = actions.into_iter().filter_map(|a| self.encoder.encode(a)).collect();
        batch.extend(out);
        batch
    }

    /// [`Channel::handle`] on encoded bytes (a message that does not decode is answered with
    /// an empty batch, so the UI's count of answers stays right).
    pub fn handle_bytes(&mut self, bytes: &[u8], clock: &dyn Fn() -> f64) -> Vec<u8> {
        let batch = match serde_json::from_slice::<ToSim>(bytes) {
            Ok(message) => self.handle(message, clock),
            Err(_) => Vec::new(),
        };
        serde_json::to_vec(&batch).unwrap_or_else(|_| b"[]".to_vec())
    }

    /// The first batch: ready for messages.
    pub fn ready() -> Vec<u8> {
        serde_json::to_vec(&[FromSim::Ready]).unwrap_or_default()
    }
}

#[cfg(target_arch = "wasm32")]
pub use browser::{connect, serve, sim_channel};

/// Natively (server-side rendering in tests) there are no workers: the simulation runs here.
#[cfg(all(not(target_arch = "wasm32"), feature = "local"))]
pub fn connect(start: crate::port::Start) -> crate::port::Port {
    crate::port::Port::local_start(start)
}

#[cfg(target_arch = "wasm32")]
mod browser {
    use super::*;
    use crate::port::{Port, Transport};
    use crate::wire::{Decoder, Received};
    use std::cell::RefCell;
    use std::rc::Rc;
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    use wasm_bindgen::JsValue;

    fn bytes_of(data: &JsValue) -> Vec<u8> {
        js_sys::Uint8Array::new(data).to_vec()
    }

    /// The simulation module's entry: in a worker, answer the page's messages; elsewhere (the
    /// page loaded the module itself) wait for [`sim_channel`].
    pub fn serve() {
        let Ok(scope) = js_sys::global().dyn_into::<web_sys::DedicatedWorkerGlobalScope>() else { return };
        let channel = RefCell::new(Channel::default());
        let reply_scope = scope.clone();
        let onmessage = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            let out = channel.borrow_mut().handle_bytes(&bytes_of(&event.data()), &crate::port::wall_now);
            let array = js_sys::Uint8Array::from(&out[..]);
            let transfer = js_sys::Array::of1(&array.buffer());
            let _ = reply_scope.post_message_with_transfer(&array, &transfer);
        });
        scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
        onmessage.forget();
        let ready = js_sys::Uint8Array::from(&Channel::ready()[..]);
        let _ = scope.post_message(&ready);
    }

    /// A simulation on the page's thread (no worker): returns `post(bytes)`; each answer goes
    /// to `reply(bytes)` as it is made (the first is `[Ready]`, sent once the page's next task
    /// runs). The simulation module exports it (`src/bin/kubesim-worker.rs`); the UI's module
    /// must not (an export keeps the whole simulation in the module).
    pub fn sim_channel(reply: js_sys::Function) -> js_sys::Function {
        let channel = RefCell::new(Channel::with_tick_budget(crate::port::TICK_BUDGET_MS));
        let reply = Rc::new(reply);
        let answer = reply.clone();
        let post = Closure::<dyn Fn(JsValue)>::new(move |data: JsValue| {
            let out = channel.borrow_mut().handle_bytes(&bytes_of(&data), &crate::port::wall_now);
            let _ = answer.call1(&JsValue::NULL, &js_sys::Uint8Array::from(&out[..]));
        });
        // Ready after this call returns (the page sets up its end first).
        let ready = Closure::once_into_js(move || {
            let _ = reply.call1(&JsValue::NULL, &js_sys::Uint8Array::from(&Channel::ready()[..]));
        });
        if let Some(window) = web_sys::window() {
            let _ = window.set_timeout_with_callback(ready.unchecked_ref());
        }
        post.into_js_value().unchecked_into()
    }

    /// The UI's end: a Worker, or the module on this thread.
    struct Remote {
        /// Messages wait here until the simulation is ready.
        queue: RefCell<Vec<Vec<u8>>>,
        ready: std::cell::Cell<bool>,
        target: RefCell<Target>,
    }

    enum Target {
        Loading,
        Worker(web_sys::Worker),
        Page(js_sys::Function),
        Failed,
    }

    impl Remote {
        fn send_bytes(&self, bytes: Vec<u8>) {
            match &*self.target.borrow() {
                Target::Worker(worker) => {
                    let array = js_sys::Uint8Array::from(&bytes[..]);
                    let transfer = js_sys::Array::of1(&array.buffer());
                    let _ = worker.post_message_with_transfer(&array, &transfer);
                }
                Target::Page(post) => {
                    let _ = post.call1(&JsValue::NULL, &js_sys::Uint8Array::from(&bytes[..]));
                }
                Target::Loading | Target::Failed => {}
            }
        }

        fn flush(&self) {
            let queued = std::mem::take(&mut *self.queue.borrow_mut());
            for bytes in queued {
                self.send_bytes(bytes);
            }
        }
    }

    /// A transport over [`Remote`] for one port.
    struct RemoteTransport(Rc<Remote>);

    impl Transport for RemoteTransport {
        fn post(&self, message: ToSim, _port: &Port) {
            let Ok(bytes) = serde_json::to_vec(&message) else { return };
            if self.0.ready.get() {
                self.0.send_bytes(bytes);
            } else {
                self.0.queue.borrow_mut().push(bytes);
            }
        }

        fn is_local(&self) -> bool {
            false
        }

        fn answer_now(&self, _: &crate::port::Query) -> Option<crate::port::Answer> {
            None
        }

        fn paces_by_answers(&self) -> bool {
            matches!(&*self.0.target.borrow(), Target::Worker(_))
        }

        fn close(&self) {
            if let Target::Worker(worker) = &*self.0.target.borrow() {
                worker.terminate();
            }
            *self.0.target.borrow_mut() = Target::Failed;
            self.0.queue.borrow_mut().clear();
        }
    }

    /// What arrives from the simulation: decoded into actions and answers for the port.
    fn on_batch(remote: &Rc<Remote>, decoder: &RefCell<Decoder>, port: &Port, bytes: &[u8]) {
        let batch = match serde_json::from_slice::<Vec<FromSim>>(bytes) {
            Ok(batch) => batch,
            Err(error) => {
                // Still an answer (the next tick goes), and said: a view may now be stale.
                let text = format!("A message from the simulation could not be read ({error}); some views may be out of date.");
                port.receive(vec![Received::Action(crate::state::Action::Notice(text))], true);
                return;
            }
        };
        let received: Vec<Received> = {
            let mut decoder = decoder.borrow_mut();
            batch.into_iter().map(|m| decoder.decode(m)).collect()
        };
        let ready = matches!(received.as_slice(), [Received::Ready]);
        if ready {
            remote.ready.set(true);
            remote.flush();
        }
        port.receive(received, !ready);
    }

    /// The URL of the simulation module's file `name`: next to the page's own module (its JS
    /// glue's `import.meta.url`), so a page on another origin that imports kubesim from its
    /// site finds the worker there too; next to the page where that is not known (tests).
    fn asset(name: &str) -> String {
        let base = module_url::get().or_else(|| web_sys::window().and_then(|w| w.document()).and_then(|d| d.base_uri().ok().flatten())).unwrap_or_default();
        web_sys::Url::new_with_base(name, &base).map(|u| u.href()).unwrap_or_else(|_| name.to_string())
    }

    /// The page's module's URL. Only the UI's module (built without `local`) asks: the
    /// simulation's is built for classic scripts (a worker's `importScripts`), where
    /// `import.meta` does not exist.
    #[cfg(not(feature = "local"))]
    mod module_url {
        use wasm_bindgen::prelude::*;

        #[wasm_bindgen]
        extern "C" {
            type Meta;
            #[wasm_bindgen(thread_local_v2, js_namespace = import, js_name = meta)]
            static META: Meta;
            #[wasm_bindgen(method, getter)]
            fn url(this: &Meta) -> String;
        }

        pub fn get() -> Option<String> {
            Some(META.with(|meta| meta.url())).filter(|u| !u.is_empty())
        }
    }

    #[cfg(feature = "local")]
    mod module_url {
        pub fn get() -> Option<String> {
            None
        }
    }

    /// A worker on the simulation's files. A worker script on another origin is refused
    /// (`new Worker` only takes same-origin scripts): then a worker made here whose script
    /// imports the simulation's from there (CORS permitting the module's fetch).
    fn start_worker() -> Result<web_sys::Worker, JsValue> {
        web_sys::Worker::new(&asset("kubesim-worker_loader.js")).or_else(|_| {
            let source = format!("importScripts({:?}); wasm_bindgen({:?});", asset("kubesim-worker.js"), asset("kubesim-worker_bg.wasm"));
            let parts = js_sys::Array::of1(&JsValue::from_str(&source));
            let options = web_sys::BlobPropertyBag::new();
            options.set_type("text/javascript");
            let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)?;
            let url = web_sys::Url::create_object_url_with_blob(&blob)?;
            web_sys::Worker::new(&url)
        })
    }

    /// A port to a simulation of `start` in a Web Worker, or on this thread when no worker can
    /// be started.
    pub fn connect(start: crate::port::Start) -> Port {
        let port = Port::unconnected();
        let remote = Rc::new(Remote { queue: RefCell::default(), ready: std::cell::Cell::new(false), target: RefCell::new(Target::Loading) });
        port.set_transport(Rc::new(RemoteTransport(remote.clone())));
        let decoder = Rc::new(RefCell::new(Decoder::default()));
        // The first message: build the world.
        port.start(start);
        // The page may have started the worker already (boot.js), its first messages queued.
        let (worker, queued) = match take_prestarted() {
            Some(Ok((worker, queued))) => (Ok(worker), queued),
            Some(Err(())) => (Err(JsValue::NULL), Vec::new()),
            None => (start_worker(), Vec::new()),
        };
        match worker {
            Ok(worker) => {
                let (r, d, p) = (remote.clone(), decoder.clone(), port.clone());
                let onmessage = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
                    on_batch(&r, &d, &p, &bytes_of(&event.data()));
                });
                worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
                onmessage.forget();
                // A worker that never becomes ready (its script missing or refused): run here.
                let (r, d, p) = (remote.clone(), decoder.clone(), port.clone());
                let onerror = Closure::<dyn Fn(web_sys::Event)>::new(move |event: web_sys::Event| {
                    if r.ready.get() {
                        // The simulation stopped (a trap in the worker): say so.
                        let why = event.dyn_ref::<web_sys::ErrorEvent>().map(|e| e.message()).unwrap_or_default();
                        let text = format!("The simulation stopped: {why}. Reload the page to start again.");
                        p.receive(vec![Received::Action(crate::state::Action::Notice(text))], false);
                    } else {
                        if let Target::Worker(worker) = &*r.target.borrow() {
                            worker.terminate();
                        }
                        *r.target.borrow_mut() = Target::Loading;
                        on_page(r.clone(), d.clone(), p.clone());
                    }
                });
                worker.set_onerror(Some(onerror.as_ref().unchecked_ref()));
                onerror.forget();
                *remote.target.borrow_mut() = Target::Worker(worker);
                for data in queued {
                    on_batch(&remote, &decoder, &port, &bytes_of(&data));
                }
            }
            Err(_) => on_page(remote, decoder, port.clone()),
        }
        port
    }

    /// The worker the page started before the app (boot.js: `window.__kubesimWorker`), taken
    /// once: with the messages it sent meanwhile, or `Err` when it failed to start.
    fn take_prestarted() -> Option<Result<(web_sys::Worker, Vec<JsValue>), ()>> {
        let window = web_sys::window()?;
        let key = JsValue::from_str("__kubesimWorker");
        let started = js_sys::Reflect::get(&window, &key).ok().filter(|v| v.is_object())?;
        let _ = js_sys::Reflect::delete_property(&window, &key);
        let field = |name: &str| js_sys::Reflect::get(&started, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED);
        if field("failed").is_truthy() {
            return Some(Err(()));
        }
        let worker = field("worker").dyn_into::<web_sys::Worker>().ok()?;
        let queue: Vec<JsValue> = field("queue").dyn_into::<js_sys::Array>().map(|a| a.iter().collect()).unwrap_or_default();
        Some(Ok((worker, queue)))
    }

    /// Loads the simulation module on this thread and connects to it.
    fn on_page(remote: Rc<Remote>, decoder: Rc<RefCell<Decoder>>, port: Port) {
        wasm_bindgen_futures::spawn_local(async move {
            let connected = async {
                let global = js_sys::global();
                // Named by the glue's last line (scripts/trunk-post-build.sh).
                let key = JsValue::from_str("__kubesimSimulation");
                if !js_sys::Reflect::has(&global, &key).unwrap_or(false) {
                    load_script(&asset("kubesim-worker.js")).await?;
                }
                let bindgen: js_sys::Function = js_sys::Reflect::get(&global, &key)?.dyn_into()?;
                let init = bindgen.call1(&JsValue::NULL, &JsValue::from_str(&asset("kubesim-worker_bg.wasm")))?;
                wasm_bindgen_futures::JsFuture::from(js_sys::Promise::from(init)).await?;
                let make: js_sys::Function = js_sys::Reflect::get(&bindgen, &JsValue::from_str("sim_channel"))?.dyn_into()?;
                let (r, d, p) = (remote.clone(), decoder.clone(), port.clone());
                let reply = Closure::<dyn Fn(JsValue)>::new(move |data: JsValue| on_batch(&r, &d, &p, &bytes_of(&data)));
                let post: js_sys::Function = make.call1(&JsValue::NULL, reply.as_ref())?.dyn_into()?;
                reply.forget();
                Ok::<_, JsValue>(post)
            };
            *remote.target.borrow_mut() = match connected.await {
                Ok(post) => Target::Page(post),
                Err(error) => {
                    // Say so, instead of a loading notice that never ends.
                    let why = error.as_string().or_else(|| error.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message()))).unwrap_or_default();
                    let text = format!(
                        "The simulation could not be loaded: no Web Worker started, and {} {} here.{}",
                        asset("kubesim-worker.js"),
                        "(with kubesim-worker_bg.wasm) did not load",
                        if why.is_empty() { String::new() } else { format!(" ({why})") }
                    );
                    port.receive(vec![Received::Action(crate::state::Action::Notice(text))], false);
                    Target::Failed
                }
            };
        });
    }

    /// Adds a classic script to the page and waits for it to load.
    async fn load_script(src: &str) -> Result<(), JsValue> {
        let document = web_sys::window().and_then(|w| w.document()).ok_or_else(|| JsValue::from_str("no document"))?;
        let script: web_sys::HtmlScriptElement = document.create_element("script")?.dyn_into()?;
        script.set_src(src);
        let loaded = js_sys::Promise::new(&mut |resolve, reject| {
            script.set_onload(Some(&resolve));
            script.set_onerror(Some(&reject));
        });
        document.head().ok_or_else(|| JsValue::from_str("no head"))?.append_child(&script)?;
        wasm_bindgen_futures::JsFuture::from(loaded).await.map(|_| ())
    }
}
