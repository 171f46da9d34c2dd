//! The canvas renderer of the cluster view, for clusters too big for DOM cards: one tile per
//! node with its requested-CPU bar and one square per pod coloured by STATUS. Redrawn only
//! when the snapshot changes; clicks select the pod or node under the pointer.

use crate::state::Selection;
use crate::text::status_class;
use kubesim_sim::view::ClusterSnapshot;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Canvas props.
#[derive(Properties, PartialEq)]
pub struct CanvasProps {
    /// Nodes and pods.
    pub scene: Rc<ClusterSnapshot>,
    /// Selection.
    pub selection: Selection,
    /// Select something.
    pub on_select: Callback<Selection>,
}

#[derive(Default)]
struct HitMap {
    nodes: Vec<(f64, f64, f64, f64, String)>,
    pods: Vec<(f64, f64, f64, Selection)>,
}

const TILE_W: f64 = 180.0;
const CELL: f64 = 9.0;
const GAP: f64 = 10.0;
const HEAD: f64 = 34.0;

fn color(style: &web_sys::CssStyleDeclaration, name: &str, fallback: &str) -> String {
    let value = style.get_property_value(name).unwrap_or_default();
    let value = value.trim();
    if value.is_empty() { fallback.to_string() } else { value.to_string() }
}

fn draw(canvas: &web_sys::HtmlCanvasElement, scene: &ClusterSnapshot, selection: &Selection, hits: &mut HitMap) {
    let Some(window) = web_sys::window() else { return };
    let Ok(Some(context)) = canvas.get_context("2d") else { return };
    let Ok(ctx) = context.dyn_into::<web_sys::CanvasRenderingContext2d>() else { return };
    let style = window.get_computed_style(canvas).ok().flatten();
    let pick = |name: &str, fallback: &str| style.as_ref().map(|s| color(s, name, fallback)).unwrap_or_else(|| fallback.to_string());
    let (c_ok, c_wait, c_done, c_bad, c_term, c_card, c_line, c_text, c_muted, c_accent) = (
        pick("--ok", "#1f9d55"),
        pick("--wait", "#d69e2e"),
        pick("--done", "#64748b"),
        pick("--bad", "#e53e3e"),
        pick("--term", "#8b5cf6"),
        pick("--card", "#ffffff"),
        pick("--line", "#e2e8f0"),
        pick("--text", "#1a202c"),
        pick("--muted", "#718096"),
        pick("--accent", "#3b6ef5"),
    );
    let ratio = window.device_pixel_ratio().max(1.0);
    let width = canvas.parent_element().map(|p| p.client_width() as f64).unwrap_or(900.0).max(320.0);
    let columns = ((width + GAP) / (TILE_W + GAP)).floor().max(1.0) as usize;
    let tile_w = (width - GAP * (columns as f64 - 1.0)) / columns as f64;
    let per_row = ((tile_w - 16.0) / CELL).floor().max(1.0) as usize;
    let mut pods_by_node: Vec<Vec<&kubesim_sim::view::PodView>> = vec![Vec::new(); scene.nodes.len() + 1];
    for pod in &scene.pods {
        let index = pod.node.as_ref().and_then(|n| scene.nodes.iter().position(|x| x.name == *n)).unwrap_or(scene.nodes.len());
        pods_by_node[index].push(pod);
    }
    let tiles = scene.nodes.len() + usize::from(!pods_by_node[scene.nodes.len()].is_empty());
    // Each grid row is as tall as its fullest tile.
    let rows = tiles.div_ceil(columns);
    let row_heights: Vec<f64> = (0..rows)
        .map(|r| {
            let most = (r * columns..((r + 1) * columns).min(tiles)).map(|t| pods_by_node[t].len().div_ceil(per_row)).max().unwrap_or(1).max(1);
            HEAD + most as f64 * CELL + 10.0
        })
        .collect();
    let row_tops: Vec<f64> = row_heights.iter().scan(0.0, |top, h| { let t = *top; *top += h + GAP; Some(t) }).collect();
    let height = row_heights.iter().map(|h| h + GAP).sum::<f64>();
    canvas.set_width((width * ratio) as u32);
    canvas.set_height((height * ratio).max(1.0) as u32);
    let _ = canvas.style().set_property("height", &format!("{height}px"));
    let _ = canvas.style().set_property("width", &format!("{width}px"));
    let _ = ctx.set_transform(ratio, 0.0, 0.0, ratio, 0.0, 0.0);
    ctx.clear_rect(0.0, 0.0, width, height);
    hits.nodes.clear();
    hits.pods.clear();
    let selected_uid = match selection {
        Selection::Pod { uid, .. } => Some(uid.as_str()),
        _ => None,
    };
    #[allow(clippy::needless_range_loop)] // `tile` indexes nodes and pods_by_node alike
    for tile in 0..tiles {
        let (col, row) = (tile % columns, tile / columns);
        let (x, y) = (col as f64 * (tile_w + GAP), row_tops[row]);
        let tile_h = row_heights[row];
        let node = scene.nodes.get(tile);
        let selected_node = matches!((selection, node), (Selection::Node(n), Some(node)) if *n == node.name);
        ctx.set_fill_style_str(&c_card);
        ctx.set_stroke_style_str(if selected_node { &c_accent } else { &c_line });
        ctx.set_line_width(if selected_node { 2.0 } else { 1.0 });
        ctx.begin_path();
        let _ = ctx.round_rect_with_f64(x + 0.5, y + 0.5, tile_w - 1.0, tile_h - 1.0, 8.0);
        ctx.fill();
        ctx.stroke();
        ctx.set_font("600 12px system-ui, sans-serif");
        ctx.set_fill_style_str(&c_text);
        let title = node.map(|n| n.name.clone()).unwrap_or_else(|| "not scheduled".into());
        let _ = ctx.fill_text(&title, x + 10.0, y + 16.0);
        if let Some(node) = node {
            ctx.set_fill_style_str(if node.ready { &c_ok } else { &c_bad });
            ctx.begin_path();
            let _ = ctx.arc(x + tile_w - 14.0, y + 12.0, 4.0, 0.0, std::f64::consts::TAU);
            ctx.fill();
            let fraction = if node.cpu_allocatable_milli > 0 { (node.cpu_requested_milli as f64 / node.cpu_allocatable_milli as f64).clamp(0.0, 1.0) } else { 0.0 };
            ctx.set_fill_style_str(&c_line);
            ctx.fill_rect(x + 10.0, y + 23.0, tile_w - 20.0, 4.0);
            ctx.set_fill_style_str(if fraction > 0.9 { &c_bad } else { &c_accent });
            ctx.fill_rect(x + 10.0, y + 23.0, (tile_w - 20.0) * fraction, 4.0);
            hits.nodes.push((x, y, tile_w, HEAD, node.name.clone()));
        } else {
            ctx.set_fill_style_str(&c_muted);
            let _ = ctx.fill_text(&format!("{} pods", pods_by_node[tile].len()), x + 10.0, y + 28.0);
        }
        for (i, pod) in pods_by_node[tile].iter().enumerate() {
            let px = x + 8.0 + (i % per_row) as f64 * CELL;
            let py = y + HEAD + (i / per_row) as f64 * CELL;
            let fill = match status_class(&pod.status) {
                "ok" => &c_ok,
                "wait" => &c_wait,
                "done" => &c_done,
                "term" => &c_term,
                _ => &c_bad,
            };
            ctx.set_fill_style_str(fill);
            ctx.fill_rect(px, py, CELL - 2.0, CELL - 2.0);
            if selected_uid == Some(pod.uid.as_str()) {
                ctx.set_stroke_style_str(&c_text);
                ctx.set_line_width(2.0);
                ctx.stroke_rect(px - 1.5, py - 1.5, CELL + 1.0, CELL + 1.0);
            }
            hits.pods.push((px, py, CELL, Selection::Pod { namespace: pod.namespace.clone(), name: pod.name.clone(), uid: pod.uid.clone() }));
        }
    }
}

/// The canvas cluster view.
#[function_component(ClusterCanvas)]
pub fn cluster_canvas(props: &CanvasProps) -> Html {
    let canvas = use_node_ref();
    let hits = use_mut_ref(HitMap::default);
    let width = use_state(|| 0i32);
    {
        let (canvas, hits) = (canvas.clone(), hits.clone());
        use_effect_with((props.scene.clone(), props.selection.clone(), *width), move |(scene, selection, _)| {
            if let Some(element) = canvas.cast::<web_sys::HtmlCanvasElement>() {
                draw(&element, scene, selection, &mut hits.borrow_mut());
            }
        });
    }
    {
        // Redraw when the container is resized.
        let (canvas, width) = (canvas.clone(), width.clone());
        use_effect_with((), move |_| {
            let closure = wasm_bindgen::closure::Closure::<dyn Fn()>::new(move || {
                if let Some(parent) = canvas.cast::<web_sys::Element>().and_then(|c| c.parent_element()) {
                    width.set(parent.client_width());
                }
            });
            let window = web_sys::window();
            if let Some(w) = &window {
                let _ = w.add_event_listener_with_callback("resize", closure.as_ref().unchecked_ref());
            }
            move || {
                if let Some(w) = &window {
                    let _ = w.remove_event_listener_with_callback("resize", closure.as_ref().unchecked_ref());
                }
                drop(closure);
            }
        });
    }
    let onclick = {
        let (hits, on_select, canvas) = (hits.clone(), props.on_select.clone(), canvas.clone());
        Callback::from(move |e: MouseEvent| {
            let Some(element) = canvas.cast::<web_sys::Element>() else { return };
            let rect = element.get_bounding_client_rect();
            let (x, y) = (e.client_x() as f64 - rect.left(), e.client_y() as f64 - rect.top());
            let hits = hits.borrow();
            if let Some((_, _, _, selection)) = hits.pods.iter().find(|(px, py, size, _)| x >= *px && x < px + size && y >= *py && y < py + size) {
                on_select.emit(selection.clone());
            } else if let Some((_, _, _, _, name)) = hits.nodes.iter().find(|(nx, ny, w, h, _)| x >= *nx && x < nx + w && y >= *ny && y < ny + h) {
                on_select.emit(Selection::Node(name.clone()));
            }
        })
    };
    let scene = &props.scene;
    let running = scene.pods.iter().filter(|p| p.status == "Running").count();
    html! {
        <section class="ks-cluster is-canvas" aria-label="Nodes (canvas)">
            <div class="ks-section-head">
                <h2>{ "Cluster" }</h2>
                <span class="ks-muted">{ format!("{} nodes · {} pods · {} running · canvas renderer", scene.nodes.len(), scene.pods.len(), running) }</span>
            </div>
            <div class="ks-canvas-wrap">
                <canvas ref={canvas} {onclick} role="img" aria-label={format!("{} nodes and {} pods; click a square to inspect a pod", scene.nodes.len(), scene.pods.len())} />
            </div>
        </section>
    }
}
