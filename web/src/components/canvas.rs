//! The canvas renderer of the cluster view, for clusters too big for DOM cards: one tile per
//! node with its requested-CPU bar and one square per pod coloured by STATUS.
//!
//! The tiles are laid out in "world" coordinates as a grid exactly as wide as the viewport at
//! the current zoom (zooming out reflows the grid into more columns, like a map of the fleet);
//! a camera (scale, vertical offset) maps them to the canvas. Only tiles inside the viewport are
//! drawn, labels are left out when zoomed far out, and hit-testing is arithmetic on the grid
//! (no per-pod hit list), so a frame costs the visible pods, not the cluster. Drag and the wheel
//! scroll, Ctrl+wheel (or a pinch, or the +/− buttons and keys) zooms keeping the tile under
//! the pointer in place; "Fit" picks the largest zoom that shows every node.

use crate::state::Selection;
use crate::text::status_class;
use kubesim_sim::view::ClusterSnapshot;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
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

const TILE_W: f64 = 180.0;
const CELL: f64 = 9.0;
const GAP: f64 = 10.0;
const HEAD: f64 = 34.0;
const MIN_SCALE: f64 = 0.04;
const MAX_SCALE: f64 = 6.0;

/// The tiles of one snapshot in world coordinates.
#[derive(Default)]
struct Layout {
    width: f64,
    height: f64,
    columns: usize,
    tile_w: f64,
    per_row: usize,
    row_tops: Vec<f64>,
    row_heights: Vec<f64>,
    /// Pod indexes (into `scene.pods`) per tile; the last tile holds unscheduled pods.
    pods_by_tile: Vec<Vec<usize>>,
    tiles: usize,
}

impl Layout {
    fn new(scene: &ClusterSnapshot, width: f64) -> Layout {
        let columns = ((width + GAP) / (TILE_W + GAP)).floor().max(1.0) as usize;
        let tile_w = (width - GAP * (columns as f64 - 1.0)) / columns as f64;
        let per_row = ((tile_w - 16.0) / CELL).floor().max(1.0) as usize;
        let index: BTreeMap<&str, usize> = scene.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
        let mut pods_by_tile: Vec<Vec<usize>> = vec![Vec::new(); scene.nodes.len() + 1];
        for (p, pod) in scene.pods.iter().enumerate() {
            let tile = pod.node.as_deref().and_then(|n| index.get(n).copied()).unwrap_or(scene.nodes.len());
            pods_by_tile[tile].push(p);
        }
        let tiles = scene.nodes.len() + usize::from(!pods_by_tile[scene.nodes.len()].is_empty());
        let rows = tiles.div_ceil(columns);
        // Each grid row is as tall as its fullest tile.
        let row_heights: Vec<f64> = (0..rows)
            .map(|r| {
                let most = (r * columns..((r + 1) * columns).min(tiles)).map(|t| pods_by_tile[t].len().div_ceil(per_row)).max().unwrap_or(1).max(1);
                HEAD + most as f64 * CELL + 10.0
            })
            .collect();
        let mut row_tops = Vec::with_capacity(rows);
        let mut top = 0.0;
        for h in &row_heights {
            row_tops.push(top);
            top += h + GAP;
        }
        Layout { width, height: (top - GAP).max(0.0), columns, tile_w, per_row, row_tops, row_heights, pods_by_tile, tiles }
    }

    /// The tile at or nearest to a world point, and the point's offset from the tile's origin.
    fn tile_near(&self, x: f64, y: f64) -> Option<(usize, f64, f64)> {
        if self.tiles == 0 {
            return None;
        }
        let row = self.row_tops.partition_point(|top| *top <= y).saturating_sub(1);
        let col = ((x.max(0.0) / (self.tile_w + GAP)) as usize).min(self.columns - 1);
        let tile = (row * self.columns + col).min(self.tiles - 1);
        let (tx, ty) = self.tile_origin(tile);
        Some((tile, x - tx, y - ty))
    }

    fn tile_origin(&self, tile: usize) -> (f64, f64) {
        ((tile % self.columns) as f64 * (self.tile_w + GAP), self.row_tops[tile / self.columns])
    }

    /// The tile and, if any, the pod slot under a world point.
    fn hit(&self, x: f64, y: f64) -> Option<(usize, Option<usize>)> {
        if x < 0.0 || y < 0.0 {
            return None;
        }
        // `tile_near` clamps to the nearest tile; points in the gaps or past the grid miss.
        let (tile, dx, dy) = self.tile_near(x, y)?;
        if dx < 0.0 || dy < 0.0 || dx > self.tile_w || dy > self.row_heights[tile / self.columns] {
            return None;
        }
        let (dx, dy) = (dx - 8.0, dy - HEAD);
        if dx < 0.0 || dy < 0.0 {
            return Some((tile, None));
        }
        let (cx, cy) = ((dx / CELL) as usize, (dy / CELL) as usize);
        let slot = cy * self.per_row + cx;
        let inside = cx < self.per_row && dx - cx as f64 * CELL < CELL - 2.0 && dy - cy as f64 * CELL < CELL - 2.0;
        Some((tile, (inside && slot < self.pods_by_tile[tile].len()).then_some(slot)))
    }
}

/// Screen = world × scale + offset (CSS pixels).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Camera {
    scale: f64,
    x: f64,
    y: f64,
}

impl Default for Camera {
    fn default() -> Camera {
        Camera { scale: 1.0, x: 0.0, y: 0.0 }
    }
}

/// Everything the event handlers and the draw share.
#[derive(Default)]
struct Surface {
    scene: Option<Rc<ClusterSnapshot>>,
    selection: Selection,
    layout: Layout,
    camera: Camera,
    drag: Option<(f64, f64, f64, f64, bool)>,
}

struct Palette {
    ok: String,
    wait: String,
    done: String,
    bad: String,
    term: String,
    card: String,
    line: String,
    text: String,
    muted: String,
    accent: String,
}

fn palette(window: &web_sys::Window, canvas: &web_sys::HtmlCanvasElement) -> Palette {
    let style = window.get_computed_style(canvas).ok().flatten();
    let pick = |name: &str, fallback: &str| {
        let value = style.as_ref().and_then(|s| s.get_property_value(name).ok()).unwrap_or_default();
        let value = value.trim();
        if value.is_empty() {
            fallback.to_string()
        } else {
            value.to_string()
        }
    };
    Palette {
        ok: pick("--ok", "#16a34a"),
        wait: pick("--wait", "#e0990b"),
        done: pick("--done", "#6b7a90"),
        bad: pick("--bad", "#e5484d"),
        term: pick("--term", "#8e4ec6"),
        card: pick("--card", "#ffffff"),
        line: pick("--line", "#e3e6eb"),
        text: pick("--text", "#131a26"),
        muted: pick("--muted", "#6a7486"),
        accent: pick("--accent", "#326ce5"),
    }
}

impl Surface {
    /// Lays the scene out for a viewport `view_w` wide at the current zoom.
    fn relayout(&mut self, view_w: f64) {
        let Some(scene) = &self.scene else { return };
        let width = view_w / self.camera.scale;
        if (self.layout.width - width).abs() > 0.5 || self.layout.tiles == 0 {
            self.layout = Layout::new(scene, width);
        }
    }

    fn clamp(&mut self, view_h: f64) {
        let c = &mut self.camera;
        c.scale = c.scale.clamp(MIN_SCALE, MAX_SCALE);
        c.x = 0.0;
        let h = self.layout.height * c.scale;
        c.y = if h <= view_h { 0.0 } else { c.y.clamp(view_h - h - 40.0, 40.0) };
    }

    /// Zooms by `factor` keeping the tile under the screen point (`sx`, `sy`) at that height.
    fn zoom_at(&mut self, factor: f64, sx: f64, sy: f64, view_w: f64) {
        let old = self.camera.scale;
        let new = (old * factor).clamp(MIN_SCALE, MAX_SCALE);
        if (new - old).abs() < 1e-9 {
            return;
        }
        // Where the pointer is, as a fraction down the anchor tile's row (rows change height as
        // the grid reflows).
        let anchor = self.layout.tile_near((sx - self.camera.x) / old, (sy - self.camera.y) / old).map(|(tile, _, dy)| {
            let height = self.layout.row_heights[tile / self.layout.columns];
            (tile, (dy / height).clamp(0.0, 1.0))
        });
        self.camera.scale = new;
        self.relayout(view_w);
        match anchor {
            Some((tile, fraction)) if tile < self.layout.tiles => {
                let (_, ty) = self.layout.tile_origin(tile);
                let height = self.layout.row_heights[tile / self.layout.columns];
                self.camera.y = sy - (ty + fraction * height) * new;
            }
            _ => self.camera.y = sy - (sy - self.camera.y) * (new / old),
        }
        self.camera.x = 0.0;
    }

    /// The largest zoom (at most 100%) at which every tile fits in `view_w` × `view_h`.
    fn fit(&mut self, view_w: f64, view_h: f64) {
        let Some(scene) = self.scene.clone() else { return };
        let fits = |scale: f64| Layout::new(&scene, view_w / scale).height * scale <= view_h;
        let (mut low, mut high) = (MIN_SCALE, 1.0);
        if fits(high) {
            low = high;
        } else {
            for _ in 0..24 {
                let mid = (low + high) / 2.0;
                if fits(mid) {
                    low = mid
                } else {
                    high = mid
                }
            }
        }
        self.camera = Camera { scale: low, x: 0.0, y: 0.0 };
        self.relayout(view_w);
    }

    /// The tallest the viewport may grow (most of the window).
    fn max_view_h() -> f64 {
        (web_sys::window().and_then(|w| w.inner_height().ok()).and_then(|h| h.as_f64()).unwrap_or(900.0) * 0.72).max(240.0)
    }

    fn draw(&mut self, canvas: &web_sys::HtmlCanvasElement) {
        let Some(scene) = self.scene.clone() else { return };
        let Some(window) = web_sys::window() else { return };
        let Ok(Some(context)) = canvas.get_context("2d") else { return };
        let Ok(ctx) = context.dyn_into::<web_sys::CanvasRenderingContext2d>() else { return };
        let started = window.performance().map(|p| p.now());
        let colours = palette(&window, canvas);
        let ratio = window.device_pixel_ratio().max(1.0);
        let parent = canvas.parent_element();
        let view_w = parent.as_ref().map(|p| p.client_width() as f64).unwrap_or(900.0).max(320.0);
        self.relayout(view_w);
        // The viewport is as tall as the layout at this zoom, up to most of the window.
        let view_h = (self.layout.height * self.camera.scale + 2.0).clamp(160.0, Surface::max_view_h()).round();
        if let Some(parent) = parent.as_ref().and_then(|p| p.dyn_ref::<web_sys::HtmlElement>()) {
            let _ = parent.style().set_property("height", &format!("{view_h}px"));
        }
        let _ = canvas.style().set_property("width", &format!("{view_w}px"));
        let _ = canvas.style().set_property("height", &format!("{view_h}px"));
        self.clamp(view_h);
        let (pw, ph) = ((view_w * ratio) as u32, (view_h * ratio) as u32);
        if canvas.width() != pw || canvas.height() != ph {
            canvas.set_width(pw);
            canvas.set_height(ph);
        }
        let _ = ctx.set_transform(ratio, 0.0, 0.0, ratio, 0.0, 0.0);
        ctx.clear_rect(0.0, 0.0, view_w, view_h);
        let Camera { scale, x: ox, y: oy } = self.camera;
        let _ = ctx.set_transform(ratio * scale, 0.0, 0.0, ratio * scale, ratio * ox, ratio * oy);
        // The visible world rectangle.
        let (wx0, wy0) = (-ox / scale, -oy / scale);
        let (wx1, wy1) = (wx0 + view_w / scale, wy0 + view_h / scale);
        let layout = &self.layout;
        let selected_uid = match &self.selection {
            Selection::Pod { uid, .. } => Some(uid.as_str()),
            _ => None,
        };
        let labels = scale >= 0.45;
        let first_row = layout.row_tops.partition_point(|top| *top <= wy0).saturating_sub(1);
        let mut drawn = 0;
        for row in first_row..layout.row_tops.len() {
            let top = layout.row_tops[row];
            if top > wy1 {
                break;
            }
            let tile_h = layout.row_heights[row];
            for col in 0..layout.columns {
                let tile = row * layout.columns + col;
                if tile >= layout.tiles {
                    break;
                }
                let (x, y) = layout.tile_origin(tile);
                if x > wx1 || x + layout.tile_w < wx0 || y + tile_h < wy0 {
                    continue;
                }
                let node = scene.nodes.get(tile);
                let selected_node = matches!((&self.selection, node), (Selection::Node(n), Some(node)) if *n == node.name);
                ctx.set_fill_style_str(&colours.card);
                ctx.set_stroke_style_str(if selected_node { &colours.accent } else { &colours.line });
                ctx.set_line_width(if selected_node { 2.0 } else { 1.0 } / scale.min(1.0));
                if labels {
                    ctx.begin_path();
                    let _ = ctx.round_rect_with_f64(x + 0.5, y + 0.5, layout.tile_w - 1.0, tile_h - 1.0, 8.0);
                    ctx.fill();
                    ctx.stroke();
                } else {
                    ctx.fill_rect(x, y, layout.tile_w, tile_h);
                    ctx.stroke_rect(x, y, layout.tile_w, tile_h);
                }
                if let Some(node) = node {
                    if labels {
                        ctx.set_font("600 12px system-ui, sans-serif");
                        ctx.set_fill_style_str(&colours.text);
                        let _ = ctx.fill_text(&node.name, x + 10.0, y + 16.0);
                    }
                    ctx.set_fill_style_str(if node.ready { &colours.ok } else { &colours.bad });
                    ctx.fill_rect(x + layout.tile_w - 18.0, y + 8.0, 8.0, 8.0);
                    let fraction = if node.cpu_allocatable_milli > 0 {
                        (node.cpu_requested_milli as f64 / node.cpu_allocatable_milli as f64).clamp(0.0, 1.0)
                    } else {
                        0.0
                    };
                    ctx.set_fill_style_str(&colours.line);
                    ctx.fill_rect(x + 10.0, y + 23.0, layout.tile_w - 20.0, 4.0);
                    ctx.set_fill_style_str(if fraction > 0.9 { &colours.bad } else { &colours.accent });
                    ctx.fill_rect(x + 10.0, y + 23.0, (layout.tile_w - 20.0) * fraction, 4.0);
                } else if labels {
                    ctx.set_font("600 12px system-ui, sans-serif");
                    ctx.set_fill_style_str(&colours.text);
                    let _ = ctx.fill_text("not scheduled", x + 10.0, y + 16.0);
                    ctx.set_fill_style_str(&colours.muted);
                    let _ = ctx.fill_text(&format!("{} pods", layout.pods_by_tile[tile].len()), x + 10.0, y + 28.0);
                }
                // Pods, batched by colour (one fill style change per status class).
                let pods = &layout.pods_by_tile[tile];
                for (class, colour) in [("ok", &colours.ok), ("wait", &colours.wait), ("done", &colours.done), ("term", &colours.term), ("bad", &colours.bad)] {
                    ctx.set_fill_style_str(colour);
                    for (i, &p) in pods.iter().enumerate() {
                        let pod = &scene.pods[p];
                        let c = match status_class(&pod.status) {
                            c @ ("ok" | "wait" | "done" | "term") => c,
                            _ => "bad",
                        };
                        if c != class {
                            continue;
                        }
                        let px = x + 8.0 + (i % layout.per_row) as f64 * CELL;
                        let py = y + HEAD + (i / layout.per_row) as f64 * CELL;
                        ctx.fill_rect(px, py, CELL - 2.0, CELL - 2.0);
                    }
                }
                drawn += pods.len();
                if let Some(uid) = selected_uid {
                    if let Some(i) = pods.iter().position(|&p| scene.pods[p].uid == uid) {
                        let px = x + 8.0 + (i % layout.per_row) as f64 * CELL;
                        let py = y + HEAD + (i / layout.per_row) as f64 * CELL;
                        ctx.set_stroke_style_str(&colours.text);
                        ctx.set_line_width(2.0);
                        ctx.stroke_rect(px - 1.5, py - 1.5, CELL + 1.0, CELL + 1.0);
                    }
                }
            }
        }
        // Pods drawn by this redraw, for the e2e benchmark.
        let _ = canvas.set_attribute("data-drawn-pods", &drawn.to_string());
        let _ = canvas.set_attribute("data-scale", &format!("{scale:.3}"));
        // The cost of this redraw, for the e2e benchmark (wall ms; never used by the model).
        if let (Some(started), Some(performance)) = (started, window.performance()) {
            let _ = canvas.set_attribute("data-draw-ms", &format!("{:.2}", performance.now() - started));
        }
    }

    /// What is under a point in CSS pixels relative to the canvas.
    fn pick(&self, sx: f64, sy: f64) -> Option<Selection> {
        let scene = self.scene.as_ref()?;
        let (x, y) = ((sx - self.camera.x) / self.camera.scale, (sy - self.camera.y) / self.camera.scale);
        let (tile, slot) = self.layout.hit(x, y)?;
        if let Some(slot) = slot {
            let pod = &scene.pods[self.layout.pods_by_tile[tile][slot]];
            return Some(Selection::Pod { namespace: pod.namespace.clone(), name: pod.name.clone(), uid: pod.uid.clone() });
        }
        scene.nodes.get(tile).map(|n| Selection::Node(n.name.clone()))
    }
}

fn local_point(canvas: &web_sys::Element, client_x: i32, client_y: i32) -> (f64, f64, f64, f64) {
    let rect = canvas.get_bounding_client_rect();
    (client_x as f64 - rect.left(), client_y as f64 - rect.top(), rect.width(), rect.height())
}

/// The canvas cluster view.
#[function_component(ClusterCanvas)]
pub fn cluster_canvas(props: &CanvasProps) -> Html {
    let canvas = use_node_ref();
    let surface: Rc<RefCell<Surface>> = use_mut_ref(Surface::default);
    let zoom_label = use_state(|| 100u32);
    let redraw = {
        let (canvas, surface, zoom_label) = (canvas.clone(), surface.clone(), zoom_label.clone());
        Rc::new(move || {
            if let Some(element) = canvas.cast::<web_sys::HtmlCanvasElement>() {
                let mut surface = surface.borrow_mut();
                surface.draw(&element);
                zoom_label.set((surface.camera.scale * 100.0).round() as u32);
            }
        })
    };
    {
        let (surface, redraw) = (surface.clone(), redraw.clone());
        use_effect_with((props.scene.clone(), props.selection.clone()), move |(scene, selection)| {
            {
                let mut s = surface.borrow_mut();
                if s.scene.as_ref().is_none_or(|old| !Rc::ptr_eq(old, scene)) {
                    s.layout = Layout::default();
                }
                s.scene = Some(scene.clone());
                s.selection = selection.clone();
            }
            redraw();
        });
    }
    {
        // Redraw on resize; wheel scrolls (Ctrl/pinch zooms) — registered non-passive so the
        // page does not scroll under the canvas.
        let (canvas, surface, redraw) = (canvas.clone(), surface.clone(), redraw.clone());
        use_effect_with((), move |_| {
            let on_resize = {
                let (surface, redraw) = (surface.clone(), redraw.clone());
                Closure::<dyn Fn()>::new(move || {
                    surface.borrow_mut().layout = Layout::default();
                    redraw();
                })
            };
            let on_wheel = {
                let (canvas, surface, redraw) = (canvas.clone(), surface.clone(), redraw.clone());
                Closure::<dyn Fn(web_sys::WheelEvent)>::new(move |e: web_sys::WheelEvent| {
                    let Some(element) = canvas.cast::<web_sys::Element>() else { return };
                    e.prevent_default();
                    let (sx, sy, _, _) = local_point(&element, e.client_x(), e.client_y());
                    {
                        let mut s = surface.borrow_mut();
                        if e.ctrl_key() || e.meta_key() {
                            s.zoom_at((-e.delta_y() * 0.002).exp(), sx, sy, element.client_width() as f64);
                        } else {
                            s.camera.y -= e.delta_y();
                        }
                    }
                    redraw();
                })
            };
            let window = web_sys::window();
            if let Some(w) = &window {
                let _ = w.add_event_listener_with_callback("resize", on_resize.as_ref().unchecked_ref());
            }
            let element: Option<web_sys::EventTarget> = canvas.cast::<web_sys::Element>().map(Into::into);
            if let Some(target) = &element {
                let options = web_sys::AddEventListenerOptions::new();
                options.set_passive(false);
                let _ = target.add_event_listener_with_callback_and_add_event_listener_options("wheel", on_wheel.as_ref().unchecked_ref(), &options);
            }
            move || {
                if let Some(w) = &window {
                    let _ = w.remove_event_listener_with_callback("resize", on_resize.as_ref().unchecked_ref());
                }
                if let Some(target) = &element {
                    let _ = target.remove_event_listener_with_callback("wheel", on_wheel.as_ref().unchecked_ref());
                }
                drop((on_resize, on_wheel));
            }
        });
    }
    let onpointerdown = {
        let (surface, canvas) = (surface.clone(), canvas.clone());
        Callback::from(move |e: PointerEvent| {
            let Some(element) = canvas.cast::<web_sys::Element>() else { return };
            let _ = element.set_pointer_capture(e.pointer_id());
            let camera = surface.borrow().camera;
            surface.borrow_mut().drag = Some((e.client_x() as f64, e.client_y() as f64, camera.x, camera.y, false));
        })
    };
    let onpointermove = {
        let (surface, redraw) = (surface.clone(), redraw.clone());
        Callback::from(move |e: PointerEvent| {
            let moved = {
                let mut s = surface.borrow_mut();
                let Some((x0, y0, cx, cy, moved)) = s.drag else { return };
                let (dx, dy) = (e.client_x() as f64 - x0, e.client_y() as f64 - y0);
                let moved = moved || dx.abs() + dy.abs() > 4.0;
                s.drag = Some((x0, y0, cx, cy, moved));
                if moved {
                    s.camera.x = cx;
                    s.camera.y = cy + dy;
                }
                moved
            };
            if moved {
                redraw();
            }
        })
    };
    let onpointerup = {
        let (surface, canvas, on_select) = (surface.clone(), canvas.clone(), props.on_select.clone());
        Callback::from(move |e: PointerEvent| {
            let drag = surface.borrow_mut().drag.take();
            let Some((_, _, _, _, moved)) = drag else { return };
            if moved {
                return;
            }
            let Some(element) = canvas.cast::<web_sys::Element>() else { return };
            let (sx, sy, _, _) = local_point(&element, e.client_x(), e.client_y());
            if let Some(selection) = surface.borrow().pick(sx, sy) {
                on_select.emit(selection);
            }
        })
    };
    let zoom = |factor: f64| {
        let (surface, canvas, redraw) = (surface.clone(), canvas.clone(), redraw.clone());
        Callback::from(move |_: MouseEvent| {
            let Some(element) = canvas.cast::<web_sys::Element>() else { return };
            let rect = element.get_bounding_client_rect();
            surface.borrow_mut().zoom_at(factor, rect.width() / 2.0, rect.height() / 2.0, rect.width());
            redraw();
        })
    };
    let fit = {
        let (surface, canvas, redraw) = (surface.clone(), canvas.clone(), redraw.clone());
        Callback::from(move |_: MouseEvent| {
            let Some(element) = canvas.cast::<web_sys::Element>() else { return };
            let rect = element.get_bounding_client_rect();
            surface.borrow_mut().fit(rect.width(), Surface::max_view_h());
            redraw();
        })
    };
    let onkeydown = {
        let (surface, canvas, redraw) = (surface.clone(), canvas.clone(), redraw.clone());
        Callback::from(move |e: KeyboardEvent| {
            let Some(element) = canvas.cast::<web_sys::Element>() else { return };
            let rect = element.get_bounding_client_rect();
            let (cx, cy) = (rect.width() / 2.0, rect.height() / 2.0);
            {
                let mut s = surface.borrow_mut();
                match e.key().as_str() {
                    "+" | "=" => s.zoom_at(1.25, cx, cy, rect.width()),
                    "-" | "_" => s.zoom_at(0.8, cx, cy, rect.width()),
                    "0" => s.fit(rect.width(), Surface::max_view_h()),
                    "ArrowUp" => s.camera.y += 60.0,
                    "ArrowDown" => s.camera.y -= 60.0,
                    "PageUp" => s.camera.y += rect.height() * 0.9,
                    "PageDown" => s.camera.y -= rect.height() * 0.9,
                    _ => return,
                }
            }
            // Keep the app's own shortcuts (arrows step the timeline) off while the map has focus.
            e.prevent_default();
            e.stop_propagation();
            redraw();
        })
    };
    let scene = &props.scene;
    let running = scene.pods.iter().filter(|p| p.status == "Running").count();
    html! {
        <section class="ks-cluster is-canvas" aria-label="Nodes (canvas)">
            <div class="ks-section-head">
                <h2>{ "Cluster" }</h2>
                <span class="ks-muted">{ format!("{} nodes · {} pods · {} running · canvas renderer", scene.nodes.len(), scene.pods.len(), running) }</span>
                <span class="ks-canvas-tools" role="group" aria-label="Zoom">
                    <button class="ks-icon-button" onclick={zoom(0.8)} aria-label="Zoom out" title="Zoom out (−)">{ "−" }</button>
                    <span class="ks-mono ks-zoom" aria-live="polite">{ format!("{}%", *zoom_label) }</span>
                    <button class="ks-icon-button" onclick={zoom(1.25)} aria-label="Zoom in" title="Zoom in (+)">{ "+" }</button>
                    <button class="ks-link-button" onclick={fit} title="Show every node (0)">{ "Fit" }</button>
                </span>
            </div>
            <div class="ks-canvas-wrap">
                <canvas ref={canvas} tabindex="0" {onpointerdown} {onpointermove} {onpointerup} {onkeydown}
                    role="img" aria-label={format!("{} nodes and {} pods; drag or arrow keys to scroll, Ctrl+wheel or +/− to zoom, click a square to inspect a pod", scene.nodes.len(), scene.pods.len())} />
            </div>
            <p class="ks-muted ks-canvas-hint">{ "Drag or wheel to scroll · Ctrl+wheel, pinch or +/− to zoom (the grid reflows) · 0 or Fit shows every node · click a square to inspect" }</p>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubesim_sim::view::{Lifecycle, NodeView, PodView};

    fn scene(nodes: usize, pods_per_node: usize) -> ClusterSnapshot {
        let node_views: Vec<NodeView> = (0..nodes)
            .map(|i| NodeView {
                name: format!("node-{i}"),
                zone: String::new(),
                ready: true,
                unschedulable: false,
                taints: Vec::new(),
                cpu_allocatable_milli: 4000,
                memory_allocatable: 0,
                pods_allocatable: 110,
                cpu_requested_milli: 0,
                memory_requested: 0,
                pod_count: 0,
            })
            .collect();
        let pod = |name: String, uid: String, node: Option<String>, status: &str, lifecycle: Lifecycle| PodView {
            namespace: "default".into(),
            name,
            uid,
            node,
            phase: String::new(),
            status: status.into(),
            ready: String::new(),
            restarts: 0,
            owner: None,
            ip: None,
            lifecycle,
            created_ms: 0,
            labels: Vec::new(),
        };
        let mut pods = Vec::new();
        for n in 0..nodes {
            for p in 0..pods_per_node {
                pods.push(pod(format!("p-{n}-{p}"), format!("{n}-{p}"), Some(format!("node-{n}")), "Running", Lifecycle::Ready));
            }
        }
        pods.push(pod("pending".into(), "x".into(), None, "Pending", Lifecycle::Pending));
        ClusterSnapshot { t_ms: 0, revision: 0, nodes: node_views, pods }
    }

    #[test]
    fn layout_places_every_pod_and_hit_testing_finds_them() {
        let scene = scene(12, 25);
        let layout = Layout::new(&scene, 1000.0);
        assert_eq!(layout.columns, 5);
        assert_eq!(layout.tiles, 13, "12 nodes and the unscheduled tile");
        assert_eq!(layout.pods_by_tile.iter().map(Vec::len).sum::<usize>(), scene.pods.len());
        for tile in [0, 4, 5, 11] {
            for slot in [0, 7, 24] {
                let (x, y) = layout.tile_origin(tile);
                let px = x + 8.0 + (slot % layout.per_row) as f64 * CELL + 3.0;
                let py = y + HEAD + (slot / layout.per_row) as f64 * CELL + 3.0;
                assert_eq!(layout.hit(px, py), Some((tile, Some(slot))), "tile {tile} slot {slot}");
            }
            let (x, y) = layout.tile_origin(tile);
            assert_eq!(layout.hit(x + 20.0, y + 10.0), Some((tile, None)), "a tile's header selects the node");
        }
        assert_eq!(layout.hit(-1.0, 5.0), None);
        assert_eq!(layout.hit(layout.tile_w + GAP / 2.0, 40.0), None, "the gap between tiles");
    }

    #[test]
    fn zooming_out_reflows_into_more_columns_and_picking_follows_the_camera() {
        let scene = Rc::new(scene(400, 10));
        let mut surface = Surface { scene: Some(scene.clone()), ..Surface::default() };
        surface.relayout(900.0);
        assert_eq!(surface.layout.columns, 4);
        let (sx, sy) = (450.0, 300.0);
        for factor in [0.5, 0.5, 0.8, 1.6] {
            let (anchor, _, _) = surface.layout.tile_near(sx / surface.camera.scale, (sy - surface.camera.y) / surface.camera.scale).unwrap();
            surface.zoom_at(factor, sx, sy, 900.0);
            let expected = ((900.0 / surface.camera.scale + GAP) / (TILE_W + GAP)).floor() as usize;
            assert_eq!(surface.layout.columns, expected, "the grid is as wide as the viewport at scale {}", surface.camera.scale);
            // The anchored tile's row stays at the pointer's height.
            let (_, ty) = surface.layout.tile_origin(anchor);
            let top = ty * surface.camera.scale + surface.camera.y;
            let bottom = top + surface.layout.row_heights[anchor / surface.layout.columns] * surface.camera.scale;
            assert!(top <= sy + 1e-6 && sy <= bottom + 1e-6, "row of tile {anchor} spans {top}..{bottom}");
            // Every pod of a tile is found where it is drawn.
            let tile = 123;
            let (x, y) = surface.layout.tile_origin(tile);
            let slot = 7;
            let world = (x + 8.0 + (slot % surface.layout.per_row) as f64 * CELL + 2.0, y + HEAD + (slot / surface.layout.per_row) as f64 * CELL + 2.0);
            let screen = (world.0 * surface.camera.scale + surface.camera.x, world.1 * surface.camera.scale + surface.camera.y);
            let uid = scene.pods[surface.layout.pods_by_tile[tile][slot]].uid.clone();
            match surface.pick(screen.0, screen.1) {
                Some(Selection::Pod { uid: picked, .. }) => assert_eq!(picked, uid),
                other => panic!("picked {other:?}"),
            }
        }
        surface.fit(900.0, 600.0);
        assert!(surface.layout.height * surface.camera.scale <= 600.0 + 1e-6, "fit shows every row");
        assert!(surface.layout.columns > 10, "fit spreads 400 nodes over many columns ({})", surface.layout.columns);
        let scale = surface.camera.scale;
        assert!(Layout::new(&scene, 900.0 / (scale * 1.02)).height * scale * 1.02 > 600.0, "fit picks (nearly) the largest zoom that fits");
    }
}
