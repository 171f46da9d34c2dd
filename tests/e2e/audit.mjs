// In-page audits for the end-to-end test (each runs inside the page via page.evaluate):
// the label boxes of an SVG drawing (flow view, lifecycle graph), accessible names and keyboard
// reach of every control, and WCAG text contrast. They return plain data; e2e.mjs asserts.

/**
 * The text labels of the SVG `selector`: pairs that overlap, labels outside the drawing (its
 * viewBox, in user units) and labels wider or taller than the box (`rect`) of their own group.
 * Boxes are in the drawing's user units (getBBox through the transforms on the way), so the
 * layout result holds at every rendered width; `scale` is the rendered px per user unit and
 * `smallest` the smallest label's rendered font size in px.
 */
export function svgLabelBoxes(selector) {
  const svg = document.querySelector(selector);
  if (!svg) return null;
  const [vx, vy, vw, vh] = (svg.getAttribute("viewBox") || "0 0 0 0").split(/[ ,]+/).map(Number);
  const slack = 0.5; // sub-pixel rounding of glyph boxes
  // An element's box in the drawing's user units (through any transforms on the way).
  const toSvg = svg.getScreenCTM().inverse();
  const box = (el) => {
    const b = el.getBBox();
    const m = toSvg.multiply(el.getScreenCTM());
    const pts = [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]].map(([x, y]) => new DOMPoint(x, y).matrixTransform(m));
    const xs = pts.map((p) => p.x), ys = pts.map((p) => p.y);
    return { x: Math.min(...xs), y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs), height: Math.max(...ys) - Math.min(...ys) };
  };
  const labels = [...svg.querySelectorAll("text")]
    .filter((t) => t.textContent.trim() && t.getBBox().width > 0 && getComputedStyle(t).visibility !== "hidden")
    .map((t) => {
      const b = box(t);
      // A label's own box: the first rect of its group (a component or a state), if any.
      const group = t.closest("g");
      const rect = group && group !== svg ? group.querySelector(":scope > rect") : null;
      const r = rect ? box(rect) : null;
      const where = group?.getAttribute("aria-label")?.split(":")[0] || "";
      return { name: t.textContent.trim() + (where && !where.startsWith(t.textContent.trim()) ? ` (in ${where})` : ""), x: b.x, y: b.y, w: b.width, h: b.height, box: r && { x: r.x, y: r.y, w: r.width, h: r.height } };
    });
  const overlaps = [];
  for (let i = 0; i < labels.length; i++) {
    for (let j = i + 1; j < labels.length; j++) {
      const a = labels[i], b = labels[j];
      const dx = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
      const dy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
      if (dx > slack && dy > slack) overlaps.push(`${a.name} × ${b.name}`);
    }
  }
  const outside = labels.filter((l) => l.x < vx - slack || l.y < vy - slack || l.x + l.w > vx + vw + slack || l.y + l.h > vy + vh + slack).map((l) => l.name);
  const overflowing = labels
    .filter((l) => l.box && l.box.w > 0 && (l.x < l.box.x - slack || l.x + l.w > l.box.x + l.box.w + slack || l.y < l.box.y - slack || l.y + l.h > l.box.y + l.box.h + slack))
    .map((l) => `${l.name} (${l.w.toFixed(0)} wide in a ${l.box.w.toFixed(0)} box)`);
  const scale = svg.getBoundingClientRect().width / (vw || 1);
  const smallest = Math.min(...[...svg.querySelectorAll("text")].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale));
  return { count: labels.length, overlaps, outside, overflowing, scale, smallest };
}

/**
 * Every visible control: its accessible name (aria-labelledby, aria-label, a label, the text, a
 * title, a placeholder) and whether Tab reaches it; plus elements that look clickable (a pointer
 * cursor of their own) but are no control, have no control inside or around them and so cannot
 * be reached by keyboard.
 */
export function controlAudit() {
  const visible = (el) => {
    if (!el.getClientRects().length) return false;
    const s = getComputedStyle(el);
    return s.visibility !== "hidden" && s.display !== "none" && !el.closest("[hidden], [inert]");
  };
  const describe = (el) => {
    const cls = typeof el.className === "string" ? el.className : el.className?.baseVal || "";
    const text = (el.getAttribute("aria-label") || el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 40);
    return `<${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${cls ? "." + cls.trim().split(/\s+/).join(".") : ""}>${text ? " " + JSON.stringify(text) : ""}`;
  };
  const textOf = (el) => {
    // Text content, with images' alt text and without aria-hidden parts.
    let out = "";
    for (const n of el.childNodes) {
      if (n.nodeType === 3) out += n.textContent;
      else if (n.nodeType === 1 && n.getAttribute("aria-hidden") !== "true") out += n.tagName === "IMG" ? n.alt || "" : n.tagName.toLowerCase() === "title" ? "" : textOf(n);
    }
    return out;
  };
  const name = (el) => {
    const by = el.getAttribute("aria-labelledby");
    if (by) return by.split(/\s+/).map((id) => document.getElementById(id)?.textContent || "").join(" ").trim();
    if (el.getAttribute("aria-label")?.trim()) return el.getAttribute("aria-label").trim();
    if (["INPUT", "SELECT", "TEXTAREA"].includes(el.tagName)) {
      const labels = [...(el.labels || [])].map((l) => textOf(l)).join(" ").trim();
      if (labels) return labels;
      if (el.type === "submit" || el.type === "button") return (el.value || "").trim();
    } else {
      const text = textOf(el).trim();
      if (text) return text;
      const svgTitle = el.querySelector(":scope > svg > title, :scope > title");
      if (svgTitle?.textContent.trim()) return svgTitle.textContent.trim();
    }
    return (el.getAttribute("title") || el.getAttribute("placeholder") || "").trim();
  };
  const interactive = "button, a[href], input:not([type=hidden]), select, textarea, summary, [role=button], [role=tab], [role=checkbox], [role=switch], [role=link], [role=menuitem], [role=option], [role=slider], [role=combobox], [tabindex]:not([tabindex='-1'])";
  const controls = [...document.querySelectorAll(interactive)].filter(visible).filter((el) => !el.disabled);
  const unnamed = controls.filter((el) => !name(el)).map(describe);
  // Keyboard reach: a control's tabIndex must be >= 0, except the tabs of a tablist that moves
  // focus with the arrow keys (one tab in the tab order).
  const unreachable = controls
    .filter((el) => el.tabIndex < 0)
    .filter((el) => !(el.getAttribute("role") === "tab" && [...el.closest("[role=tablist]")?.querySelectorAll("[role=tab]") || []].some((t) => t.tabIndex >= 0)))
    .map(describe);
  // Clickable-looking elements outside any control: a pointer cursor that is not inherited.
  const isControl = (el) => el.matches(interactive) || el.tagName === "LABEL";
  const clickable = [...document.querySelectorAll("body *")]
    .filter((el) => getComputedStyle(el).cursor === "pointer" && (!el.parentElement || getComputedStyle(el.parentElement).cursor !== "pointer"))
    .filter(visible)
    .filter((el) => !el.closest(interactive) && !isControl(el) && !el.querySelector(interactive))
    .map(describe);
  return { controls: controls.length, unnamed, unreachable, clickable: [...new Set(clickable)] };
}

/**
 * WCAG 2.x contrast of every visible text: its colour (fill for SVG) against what is behind it
 * (the nearest opaque backgrounds of its ancestors composited, or for SVG text the rect of its
 * group), after opacity. Needs 4.5:1, or 3:1 for large text (24 px, or 18.66 px bold). Returns
 * the failures grouped by element kind and colours, the worst first.
 */
export function contrastAudit(scope = "body") {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  const cache = new Map();
  const rgba = (css) => {
    if (!cache.has(css)) {
      ctx.clearRect(0, 0, 1, 1);
      ctx.fillStyle = "rgba(0,0,0,0)";
      ctx.fillStyle = css;
      ctx.fillRect(0, 0, 1, 1);
      const [r, g, b, a] = ctx.getImageData(0, 0, 1, 1).data;
      cache.set(css, [r, g, b, a / 255]);
    }
    return cache.get(css);
  };
  const over = (top, bottom) => {
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat(1);
  };
  const lum = ([r, g, b]) => {
    const f = (c) => ((c /= 255) <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const ratio = (a, b) => {
    const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  };
  // The backdrop of an HTML element: ancestors' background colours composited bottom-up.
  const backdrop = (el) => {
    const layers = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const s = getComputedStyle(e);
      const bg = rgba(s.backgroundColor);
      if (bg[3] > 0) layers.push(bg);
      if (bg[3] >= 1) break;
    }
    let color = [255, 255, 255, 1];
    for (const layer of layers.reverse()) color = over(layer, color);
    return color;
  };
  const opacity = (el) => {
    let o = 1;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity);
    return o;
  };
  const failures = new Map();
  let checked = 0;
  const root = document.querySelector(scope) || document.body;
  for (const el of root.querySelectorAll("*")) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length) continue;
    const s = getComputedStyle(el);
    if (s.visibility === "hidden" || el.closest("[hidden], [aria-hidden=true], title, option") || el.closest(":disabled")) continue;
    const svgText = el instanceof SVGElement;
    let fg = rgba(svgText ? s.fill : s.color);
    let bg;
    if (svgText) {
      const svg = el.ownerSVGElement;
      bg = backdrop(svg);
      const rect = el.closest("g")?.querySelector(":scope > rect");
      if (rect) {
        const rs = getComputedStyle(rect);
        const fill = rgba(rs.fill);
        bg = over([fill[0], fill[1], fill[2], fill[3] * parseFloat(rs.fillOpacity) * parseFloat(rs.opacity)], bg);
      }
    } else {
      bg = backdrop(el);
    }
    fg = [fg[0], fg[1], fg[2], fg[3] * opacity(el)];
    const shown = over(fg, bg);
    const size = parseFloat(s.fontSize);
    const bold = parseInt(s.fontWeight, 10) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    const r = ratio(shown, bg);
    checked++;
    if (r + 0.005 < need) {
      const cls = (typeof el.className === "string" ? el.className : el.className?.baseVal || "").trim().split(/\s+/).filter(Boolean).slice(0, 2).join(".");
      const hex = (c) => "#" + c.slice(0, 3).map((v) => Math.round(v).toString(16).padStart(2, "0")).join("");
      const key = `${el.tagName.toLowerCase()}${cls ? "." + cls : ""} ${hex(shown)} on ${hex(bg)}`;
      const prev = failures.get(key);
      if (!prev || prev.ratio > r) failures.set(key, { key, ratio: r, need, sample: el.textContent.trim().slice(0, 30), count: (prev?.count || 0) + 1 });
      else prev.count++;
    }
  }
  return { checked, failures: [...failures.values()].sort((a, b) => a.ratio - b.ratio) };
}
