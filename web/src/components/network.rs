//! The network view: every Service with its addresses, ports, endpoints and the traffic it got
//! in the last 10 s; each node's kube-proxy rules; and the latest packets container processes
//! sent, each named end to end (client pod → address → the Service rule that rewrote it → the
//! endpoint pod that answered) and coloured by outcome. New packets slide in as they happen.
//! With NetworkPolicies: the policies, the connectivity matrix of the pods outside kube-system
//! (`.` connected, `X` blocked, each cell's reasons on hover; cells a policy change flipped are
//! highlighted), and dropped packets labelled with the verdict that dropped them.

use crate::components::app::Controls;
use crate::text::clock;
use kubesim_sim::view::{LoadGeneratorView, MatrixView, NetworkView, PacketView, LOAD_INTERVAL_ENV};
use std::collections::BTreeSet;
use std::rc::Rc;
use yew::prelude::*;

/// Network view props.
#[derive(Properties, PartialEq)]
pub struct NetworkProps {
    /// Services, rules and packets.
    pub network: Rc<NetworkView>,
    /// Virtual now.
    pub now: u64,
    /// An external client's request to show at first (its answer, and its packet selected).
    #[prop_or_default]
    pub external: Option<Rc<ExternalResult>>,
}

/// What the external client sent from the workstation and what came back.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ExternalResult {
    /// When it was sent.
    pub t_ms: u64,
    /// The command line the workstation ran.
    pub line: String,
    /// What curl printed (the response with its headers, or curl's error).
    pub output: String,
    /// The request's packet (its sequence number in the packet log), whose hops the view shows.
    pub packet: Option<(u64, PacketView)>,
}

/// The workstation's command line for a request to `url` with an optional `Host` header: curl
/// printing the response's headers, or why the input is not a request.
pub fn external_request_line(url: &str, host: &str) -> Result<String, String> {
    let (url, host) = (url.trim(), host.trim());
    if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() <= "http://".len() {
        return Err("a URL: http://ADDRESS[:PORT]/PATH (a node's address and node port, a load balancer's address)".into());
    }
    let unsafe_char = |t: &str| t.chars().any(|c| c.is_whitespace() || matches!(c, '\'' | '"' | '\\' | '`' | '$' | ';' | '&' | '|' | '<' | '>'));
    if unsafe_char(url) || unsafe_char(host) {
        return Err("the URL and Host header take no spaces or shell characters".into());
    }
    let header = if host.is_empty() { String::new() } else { format!(" -H 'Host: {host}'") };
    Ok(format!("curl -sS -i --max-time 10{header} '{url}'"))
}

fn outcome_class(outcome: &str) -> &'static str {
    match outcome {
        "ok" => "s-ok",
        "timeout" | "NXDOMAIN" | "SERVFAIL" => "s-wait",
        "dropped" => "s-dropped",
        _ => "s-bad",
    }
}

fn packet_row(p: &PacketView, index: u64, selected: bool, fresh: bool, on_select: Callback<(u64, PacketView)>) -> Html {
    let via = match (&p.service, &p.endpoint) {
        (Some(service), Some(endpoint)) => {
            html! { <>{ " → " }<span class="ks-net-svc">{ service }</span>{ " → " }<span class="ks-mono">{ endpoint }</span></> }
        }
        (Some(service), None) => html! { <>{ " → " }<span class="ks-net-svc">{ service }</span>{ " (no endpoints: REJECT)" }</> },
        _ => html! {},
    };
    let onclick = {
        let p = p.clone();
        Callback::from(move |_: MouseEvent| on_select.emit((index, p.clone())))
    };
    html! {
        <li key={index.to_string()} class={classes!("ks-net-packet", selected.then_some("ks-selected"), fresh.then_some("ks-net-new"))} tabindex="0" aria-current={selected.then_some("true")} onkeydown={crate::components::click_on_key(&onclick)} {onclick} title="Show this packet's path">
            <span class="ks-mono ks-muted">{ clock(p.t_ms) }</span>
            <span class="ks-net-proto">{ p.protocol }</span>
            <span class="ks-net-path">
                <span class="ks-mono">{ &p.from }</span>
                { p.via.map(|v| html! { <span class="ks-muted">{ format!(" ({v})") }</span> }).unwrap_or_default() }
                { " → " }<span class="ks-mono">{ &p.dst }</span>{ via }
                { p.question.as_ref().map(|q| html! { <span class="ks-muted">{ format!(" · {q}") }</span> }).unwrap_or_default() }
            </span>
            <span class={classes!("ks-status-pill", outcome_class(&p.outcome))} title={p.dropped_by.clone().unwrap_or_default()}>{ &p.outcome }</span>
            <span class="ks-mono ks-muted">{ format!("{} ms", p.latency_ms) }</span>
            { p.dropped_by.as_ref().map(|why| html! { <span class="ks-net-dropped">{ format!("NetworkPolicy: {why}") }</span> }).unwrap_or_default() }
        </li>
    }
}

/// The request rates the load-generator control offers (requests per second, all clients).
const RATES: &[u32] = &[10, 50, 100, 250, 500, 1000, 2000];

/// A load generator's row: its clients and nominal rate (replicas ÷ interval; each request's
/// own round trip and DNS lookup come on top), and a control that sets the interval with
/// `kubectl set env deployment/NAME REQUEST_INTERVAL=...` — a real rollout of new clients.
fn load_generator_row(g: &LoadGeneratorView, command: &Callback<String>) -> Html {
    let nominal = if g.interval_s > 0.0 { f64::from(g.replicas) / g.interval_s } else { 0.0 };
    let onchange = {
        let (command, namespace, name, replicas) = (command.clone(), g.namespace.clone(), g.name.clone(), g.replicas.max(1));
        Callback::from(move |e: Event| {
            let Some(select) = e.target_dyn_into::<web_sys::HtmlSelectElement>() else { return };
            let Ok(rate) = select.value().parse::<f64>() else { return };
            if rate > 0.0 {
                let interval = f64::from(replicas) / rate;
                command.emit(format!("kubectl set env deployment/{name} -n {namespace} {LOAD_INTERVAL_ENV}={interval:.4}"));
            }
        })
    };
    let current = RATES.iter().copied().min_by(|a, b| (f64::from(*a) - nominal).abs().total_cmp(&(f64::from(*b) - nominal).abs())).unwrap_or(100);
    html! {
        <tr key={format!("{}/{}", g.namespace, g.name)}>
            <td class="ks-mono">{ format!("{}/{}", g.namespace, g.name) }</td>
            <td>{ g.replicas }</td>
            <td class="ks-mono">{ format!("{} s", g.interval_s) }</td>
            <td class="ks-mono">{ format!("≤ {nominal:.0}/s") }</td>
            <td>
                <label class="ks-muted">{ "set " }
                    <select aria-label="requests per second" {onchange}>
                        { for RATES.iter().map(|r| html! { <option value={r.to_string()} selected={*r == current}>{ format!("{r}/s") }</option> }) }
                    </select>
                </label>
            </td>
        </tr>
    }
}

/// The path of one packet, hop by hop, as the model recorded it ([`PacketView::hops`]): the
/// sender and its node, the kube-proxy rule that rewrote a Service address and the endpoint it
/// chose (or REJECT), a load balancer or node port and the node's rule, ingress-nginx's server,
/// location and second connection, the fabric between nodes, the NetworkPolicy verdict, and the
/// answer.
fn packet_path(p: &PacketView) -> Html {
    html! {
        <div class="ks-net-detail" aria-label="Packet path">
            <div class="ks-section-head">
                <h3>{ format!("{} at {}", p.protocol.to_ascii_uppercase(), clock(p.t_ms)) }</h3>
                <span class={classes!("ks-status-pill", outcome_class(&p.outcome))}>{ &p.outcome }</span>
                <span class="ks-mono ks-muted">{ format!("round trip {} ms", p.latency_ms) }</span>
                { p.via.map(|v| html! { <span class="ks-muted">{ format!("sent by {v}") }</span> }).unwrap_or_default() }
            </div>
            <ol class="ks-net-hops">
                { for p.hops.iter().map(|h| html! {
                    <li class="ks-net-hop">
                        <div class="ks-net-hop-place ks-mono">{ &h.place }</div>
                        <div class={classes!("ks-net-hop-what", h.dropped.then_some("ks-net-dropped"))}>{ &h.what }</div>
                    </li>
                }) }
            </ol>
        </div>
    }
}

/// The external client: a request from the workstation (outside the pod network) to a URL,
/// with an optional Host header; its answer, and its packet selected so its hops show.
fn external_client(
    targets: &[String],
    url: &UseStateHandle<String>,
    host: &UseStateHandle<String>,
    result: Option<&ExternalResult>,
    error: Option<&String>,
    on_send: Callback<()>,
) -> Html {
    let on_url = {
        let url = url.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(input) = e.target_dyn_into::<web_sys::HtmlInputElement>() {
                url.set(input.value());
            }
        })
    };
    let on_host = {
        let host = host.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(input) = e.target_dyn_into::<web_sys::HtmlInputElement>() {
                host.set(input.value());
            }
        })
    };
    let onsubmit = Callback::from(move |e: SubmitEvent| {
        e.prevent_default();
        on_send.emit(());
    });
    let placeholder = targets.first().cloned().unwrap_or_else(|| "http://172.18.0.2:30080/".into());
    html! {
        <div class="ks-net-external" aria-label="External client">
            <h3>{ "External client" }<span class="ks-muted">{ format!(" a request from the {} — outside the pod network, in through a node port, a load balancer or the ingress", kubesim_sim::view::workstation_name()) }</span></h3>
            <form class="ks-net-external-form" {onsubmit}>
                <input class="ks-mono" type="text" aria-label="URL" list="ks-net-targets" placeholder={placeholder} value={(**url).clone()} oninput={on_url} />
                <datalist id="ks-net-targets">{ for targets.iter().map(|t| html! { <option value={t.clone()} /> }) }</datalist>
                <input class="ks-mono" type="text" aria-label="Host header" placeholder="Host header (optional)" value={(**host).clone()} oninput={on_host} />
                <button type="submit">{ "Send" }</button>
            </form>
            { error.map(|e| html! { <p class="ks-error">{ e }</p> }).unwrap_or_default() }
            { result.map(|r| html! {
                <div class="ks-net-external-result">
                    <div class="ks-mono ks-muted">{ format!("{} $ {}", clock(r.t_ms), r.line) }</div>
                    <pre class="ks-mono">{ &r.output }</pre>
                    { match &r.packet {
                        Some((_, p)) => html! { <p class="ks-muted">{ format!("its packet: {} → {}, {} — path below", p.from, p.dst, p.outcome) }</p> },
                        None => html! { <p class="ks-muted">{ "it sent no packet" }</p> },
                    } }
                </div>
            }).unwrap_or_default() }
        </div>
    }
}

/// The cells whose verdict differs between two matrices (by pod names).
fn flipped(old: &MatrixView, new: &MatrixView) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (i, from) in new.pods.iter().enumerate() {
        for (j, to) in new.pods.iter().enumerate() {
            let before = old.pods.iter().position(|p| p == from).zip(old.pods.iter().position(|p| p == to)).map(|(a, b)| old.allowed[a][b]);
            if before.is_some_and(|b| b != new.allowed[i][j]) {
                out.insert((from.clone(), to.clone()));
            }
        }
    }
    out
}

fn matrix_table(m: &MatrixView, changed: &BTreeSet<(String, String)>) -> Html {
    let disagree: BTreeSet<(usize, usize)> = m.disagreements().into_iter().collect();
    let probed = m.probed_at.map(|t| {
        let cells = m.probed.iter().flatten().filter(|p| p.is_some()).count();
        if disagree.is_empty() {
            format!("confirmed by {cells} connection probes at {}: they agree", clock(t))
        } else {
            format!("{cells} connection probes at {}: {} cells disagree (marked !)", clock(t), disagree.len())
        }
    });
    html! {
        <div class="ks-table-wrap">
            { probed.map(|p| html! { <p class={classes!("ks-muted", (!disagree.is_empty()).then_some("ks-net-disagree-note"))}>{ p }</p> }).unwrap_or_default() }
            <table class="ks-table ks-net-matrix" aria-label="Connectivity matrix">
                <thead>
                    <tr>
                        <th title="from ↓ / to →">{ "from \\ to" }</th>
                        { for m.pods.iter().zip(&m.ports).enumerate().map(|(i, (p, port))| html! { <th class="ks-mono ks-net-col" title={format!("{p} on {port}")}>{ i + 1 }</th> }) }
                    </tr>
                </thead>
                <tbody>
                    { for m.pods.iter().enumerate().map(|(i, from)| html! {
                        <tr key={from.clone()}>
                            <th class="ks-mono"><span class="ks-muted">{ format!("{} ", i + 1) }</span>{ from }</th>
                            { for m.pods.iter().enumerate().map(|(j, to)| {
                                let ok = m.allowed[i][j];
                                let flip = changed.contains(&(from.clone(), to.clone()));
                                let disagrees = disagree.contains(&(i, j));
                                let probe = m.probed.get(i).and_then(|r| r.get(j)).cloned().flatten();
                                let probe_text = probe.map(|p| format!("\nprobe: {}", p.describe())).unwrap_or_default();
                                let verdict = if ok { "allowed" } else { "blocked" };
                                let title = format!("{from} → {to} ({}): policies say {verdict}{probe_text}{}\n{}", m.ports[j], if disagrees { " — the probe disagrees" } else { "" }, m.reasons[i][j]);
                                html! {
                                    <td class={classes!("ks-net-cell", if ok { "ok" } else { "blocked" }, flip.then_some("flipped"), disagrees.then_some("disagree"))} {title}>
                                        { if ok { "." } else { "X" } }{ if disagrees { "!" } else { "" } }
                                    </td>
                                }
                            }) }
                        </tr>
                    }) }
                </tbody>
            </table>
            if m.omitted > 0 {
                <p class="ks-muted">{ format!("{} more pods not shown (netpol matrix NAMESPACE in the console shows any namespace)", m.omitted) }</p>
            }
        </div>
    }
}

/// The network view.
#[function_component(NetworkViewPanel)]
pub fn network_view(props: &NetworkProps) -> Html {
    let net = &props.network;
    let show_system = use_state(|| false);
    let toggle = {
        let show_system = show_system.clone();
        Callback::from(move |_: Event| show_system.set(!*show_system))
    };
    let services: Vec<_> = net.services.iter().filter(|s| *show_system || s.namespace != "kube-system").collect();
    // The last matrix seen, and the cells the latest policy change flipped (shown for 10 s).
    let memory = use_mut_ref(|| (None::<MatrixView>, BTreeSet::<(String, String)>::new(), 0u64));
    let changed = {
        let mut m = memory.borrow_mut();
        if let Some(new) = &net.matrix {
            if m.0.as_ref() != Some(new) {
                if let Some(old) = &m.0 {
                    let flips = flipped(old, new);
                    if !flips.is_empty() {
                        m.1 = flips;
                        m.2 = props.now;
                    }
                }
                m.0 = Some(new.clone());
            }
        }
        if props.now.saturating_sub(m.2) > 10_000 {
            m.1.clear();
        }
        m.1.clone()
    };
    // The packet whose path is shown: its sequence number and a copy (it stays shown after it
    // scrolls out of the list).
    let selected = {
        let initial = props.external.as_ref().and_then(|r| r.packet.clone());
        use_state(move || initial)
    };
    let on_select = {
        let selected = selected.clone();
        Callback::from(move |(seq, p): (u64, PacketView)| {
            let same = selected.as_ref().is_some_and(|(s, _)| *s == seq);
            selected.set(if same { None } else { Some((seq, p)) });
        })
    };
    let selected_seq = selected.as_ref().map(|(s, _)| *s);
    // Rows new since the last render slide in, unless so many arrive at once (heavy traffic)
    // that every row would be mid-animation, and so invisible, on every frame.
    let seen = use_mut_ref(|| 0u64);
    let fresh_from = {
        let mut seen = seen.borrow_mut();
        let new = net.total_packets.saturating_sub(*seen);
        let from = if new <= 8 { *seen } else { u64::MAX };
        *seen = net.total_packets;
        from
    };
    let controls = use_context::<Controls>();
    // The external client's form and its last request.
    let url = use_state(String::new);
    let host = use_state(String::new);
    let external = {
        let initial = props.external.clone();
        use_state(move || initial)
    };
    let external_error = use_state(|| None::<String>);
    let on_send = {
        let (controls, url, host, external, external_error, selected) =
            (controls.clone(), url.clone(), host.clone(), external.clone(), external_error.clone(), selected.clone());
        let fallback = net.external_targets.first().cloned().unwrap_or_default();
        Callback::from(move |()| {
            let Some(controls) = &controls else { return };
            let target = if url.trim().is_empty() { fallback.clone() } else { (*url).clone() };
            let (selected, external, external_error) = (selected.clone(), external.clone(), external_error.clone());
            controls.port.send_external(&target, &host, move |sent| match sent {
                Ok(result) => {
                    selected.set(result.packet.clone());
                    external_error.set(None);
                    external.set(Some(result));
                }
                Err(why) => external_error.set(Some(why)),
            });
        })
    };
    let external_html = external_client(&net.external_targets, &url, &host, external.as_deref(), external_error.as_ref(), on_send);
    let load_generators = match (&controls, net.load_generators.is_empty()) {
        (Some(controls), false) => html! {
            <>
                <div class="ks-section-head"><h2>{ "Load generators" }</h2><span class="ks-muted">{ format!("Deployments whose clients sleep ${LOAD_INTERVAL_ENV} between requests; setting a rate rolls out new clients") }</span></div>
                <div class="ks-table-wrap">
                    <table class="ks-table ks-net-load">
                        <thead><tr><th>{ "DEPLOYMENT" }</th><th>{ "CLIENTS" }</th><th>{ "INTERVAL" }</th><th>{ "RATE" }</th><th>{ "REQUESTS / s" }</th></tr></thead>
                        <tbody>{ for net.load_generators.iter().map(|g| load_generator_row(g, &controls.command)) }</tbody>
                    </table>
                </div>
            </>
        },
        _ => html! {},
    };
    html! {
        <section class="ks-network" aria-label="Network">
            <div class="ks-section-head">
                <h2>{ "Services" }</h2>
                <label class="ks-muted"><input type="checkbox" checked={*show_system} onchange={toggle} />{ " kube-system" }</label>
                <span class="ks-muted">{ format!("{} packets so far", net.total_packets) }</span>
            </div>
            <div class="ks-table-wrap">
                <table class="ks-table ks-net-services">
                    <thead><tr><th>{ "NAME" }</th><th>{ "TYPE" }</th><th>{ "CLUSTER-IP" }</th><th>{ "EXTERNAL-IP" }</th><th>{ "PORT(S)" }</th><th>{ "ENDPOINTS" }</th><th title="requests and queries to the Service in the window the packet log covers">{ if net.recent_window_ms >= 10_000 { "LAST 10 s".to_string() } else { format!("LAST {:.1} s", net.recent_window_ms as f64 / 1000.0) } }</th></tr></thead>
                    <tbody>
                        { for services.iter().map(|s| {
                            let full = s.endpoints_total > 0 && s.endpoints_ready == s.endpoints_total;
                            html! {
                                <tr key={format!("{}/{}", s.namespace, s.name)}>
                                    <td class="ks-mono">{ format!("{}/{}", s.namespace, s.name) }</td>
                                    <td>{ &s.type_ }</td>
                                    <td class="ks-mono">{ &s.cluster_ip }</td>
                                    <td class="ks-mono">{ s.external_ip.clone().unwrap_or_else(|| if s.type_ == "LoadBalancer" { "<pending>".into() } else { "<none>".into() }) }</td>
                                    <td class="ks-mono">{ &s.ports }</td>
                                    <td><span class={classes!("ks-status-pill", if full { "s-ok" } else if !s.selector && s.endpoints_total == 0 { "s-done" } else if s.endpoints_ready > 0 { "s-wait" } else { "s-bad" })} title={if s.selector { "ready / all endpoints in its EndpointSlices" } else { "no selector: its endpoints are managed outside the EndpointSlice controller" }}>{ format!("{}/{}", s.endpoints_ready, s.endpoints_total) }</span></td>
                                    <td class="ks-mono">{ if s.recent.0 == 0 { "–".to_string() } else if s.recent.1 == 0 { format!("{} ok", s.recent.0) } else { format!("{} ({} failed)", s.recent.0, s.recent.1) } }</td>
                                </tr>
                            }
                        }) }
                    </tbody>
                </table>
            </div>
            { load_generators }
            if !net.policies.is_empty() {
                <div class="ks-section-head"><h2>{ "NetworkPolicies" }</h2><span class="ks-muted">{ "enforced by each node's policy agent: egress where a packet leaves, ingress where it arrives" }</span></div>
                <div class="ks-net-columns">
                    <div class="ks-net-rules">
                        <table class="ks-table">
                            <thead><tr><th>{ "NAME" }</th><th>{ "POD-SELECTOR" }</th><th>{ "TYPES" }</th><th>{ "RULES" }</th></tr></thead>
                            <tbody>
                                { for net.policies.iter().map(|p| html! {
                                    <tr key={format!("{}/{}", p.namespace, p.name)}>
                                        <td class="ks-mono">{ format!("{}/{}", p.namespace, p.name) }</td>
                                        <td class="ks-mono">{ &p.pod_selector }</td>
                                        <td>{ &p.types }</td>
                                        <td>{ format!("{} ingress, {} egress", p.rules.0, p.rules.1) }</td>
                                    </tr>
                                }) }
                            </tbody>
                        </table>
                    </div>
                    <div class="ks-net-traffic">
                        <h3>{ "Who can connect" }<span class="ks-muted">{ " . connected  X blocked (by the policies) · ! a probe disagrees · hover a cell for why" }</span></h3>
                        { net.matrix.as_ref().map(|m| matrix_table(m, &changed)).unwrap_or_default() }
                    </div>
                </div>
            }
            <div class="ks-net-columns">
                <div class="ks-net-rules">
                    <h3>{ "kube-proxy rules" }</h3>
                    <table class="ks-table">
                        <thead><tr><th>{ "NODE" }</th><th>{ "SERVICE PORTS" }</th><th>{ "NODE PORTS" }</th><th>{ "ENDPOINTS" }</th><th>{ "SYNCED" }</th></tr></thead>
                        <tbody>
                            { for net.nodes.iter().map(|n| html! {
                                <tr key={n.node.clone()}>
                                    <td class="ks-mono">{ &n.node }</td><td>{ n.vips }</td><td>{ n.node_ports }</td><td>{ n.endpoints }</td>
                                    <td class="ks-mono ks-muted">{ n.synced_at.map(|t| format!("{} ago", crate::text::short_duration(props.now.saturating_sub(t)))).unwrap_or_else(|| "never".into()) }</td>
                                </tr>
                            }) }
                        </tbody>
                    </table>
                </div>
                <div class="ks-net-traffic">
                    { external_html }
                    <h3>{ "Traffic" }<span class="ks-muted">{ " newest first · click a packet for its path" }</span></h3>
                    { selected.as_ref().map(|(_, p)| packet_path(p)).unwrap_or_default() }
                    if net.packets.is_empty() {
                        <p class="ks-muted">{ "No packets yet: run a client (kubectl run -i --rm client --image=busybox -- wget -qO- http://SERVICE) or pick the “Service and DNS” scenario." }</p>
                    } else {
                        <ol class="ks-net-packets">
                            { for net.packets.iter().take(80).enumerate().map(|(i, p)| {
                                let seq = net.total_packets.saturating_sub(1 + i as u64);
                                packet_row(p, seq, selected_seq == Some(seq), seq >= fresh_from, on_select.clone())
                            }) }
                        </ol>
                    }
                </div>
            </div>
        </section>
    }
}
