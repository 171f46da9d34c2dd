// End-to-end test of the built app (dist/): serves it with a tiny static server, drives it in
// Debian's headless Chromium through playwright-core, asserts on what the views show, saves
// screenshots of every view and prints measurements (wasm size, first render, frame times).
//
// Usage: node tests/e2e/e2e.mjs [--dist dist] [--out tests/e2e/screenshots] [--quick]
//        [--only main,churn,gallery,flow,a11y] [--gallery NAME,NAME]
// Needs: `trunk build --release` first; playwright-core from .tools/node_modules (scripts/setup.sh).
// Sections: main (the views, inputs, time travel, scale benchmarks, embeds), churn (wasm memory
// over three virtual hours of churn at max speed; skipped with --quick), gallery (every
// scenario, gallery.mjs), flow (label boxes of the flow view, audit.mjs), a11y (names, keyboard
// reach and contrast in both themes, the 768 px embed, audit.mjs).
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { helpers, scenariosFromSource, sweep } from "./gallery.mjs";
import { contrastAudit, controlAudit, svgLabelBoxes } from "./audit.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const args = process.argv.slice(2);
const opt = (name, fallback) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : fallback; };
const dist = path.resolve(root, opt("--dist", "dist"));
const out = path.resolve(root, opt("--out", "tests/e2e/screenshots"));
const quick = args.includes("--quick"); // skip the slow scale scenarios (debug builds)
const only = opt("--only", "main,churn,gallery,flow,a11y").split(",");
const want = (section) => only.includes(section);
const galleryNames = opt("--gallery", null)?.split(",") ?? null; // sweep only these scenarios
const galleryDir = path.join(out, "gallery");
const startedAt = Date.now();
const sectionTimes = [];
const timed = async (name, body) => { const t = Date.now(); await body(); sectionTimes.push(`${name} ${((Date.now() - t) / 1000).toFixed(0)} s`); };
const require = createRequire(path.join(root, ".tools/node_modules/"));
const { chromium } = require("playwright-core");

const types = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm", ".css": "text/css", ".png": "image/png", ".svg": "image/svg+xml" };
function serve(dir) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    let file = path.join(dir, decodeURIComponent(url.pathname));
    if (!file.startsWith(dir)) { res.writeHead(403); return res.end(); }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, "index.html");
    if (!fs.existsSync(file)) { res.writeHead(404); return res.end("not found"); }
    // Another origin may import the site's files (a docs page embedding kubesim from it).
    res.writeHead(200, { "content-type": types[path.extname(file)] || "application/octet-stream", "cache-control": "no-store", "access-control-allow-origin": "*" });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/** A page on its own origin that imports kubesim from `site` and mounts one embed. */
function serveEmbedder(site) {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<!doctype html><html><body><div id="embed" style="height:600px"></div><script type="module">
  import init from "${site}/kubesim-web.js";
  await init();
  window.kubesim.mount("#embed", { scenario: "nginx", view: "cluster", embed: true });
</script></body></html>`);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

let failures = 0;
const check = (ok, what) => { console.log(`${ok ? "ok  " : "FAIL"} ${what}`); if (!ok) failures++; };

// Two modules: the page's (the UI, the initial download) and the simulation's (loaded by its
// Web Worker meanwhile).
const sizes = {};
for (const file of ["kubesim-web_bg.wasm", "kubesim-web.js", "kubesim-worker_bg.wasm", "kubesim-worker.js"]) {
  const bytes = fs.readFileSync(path.join(dist, file));
  const gzip = zlib.gzipSync(bytes, { level: 9 }).length;
  const brotli = zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  sizes[file] = { raw: bytes.length, gzip, brotli };
  console.log(`${file}: ${(bytes.length / 1024).toFixed(0)} KiB raw, ${(gzip / 1024).toFixed(0)} KiB gzip, ${(brotli / 1024).toFixed(0)} KiB brotli`);
}
const initial = sizes["kubesim-web_bg.wasm"].gzip + sizes["kubesim-web.js"].gzip;
// The 800 KiB gzip bundle target is a quality bar we measure and report, not a test.
const measure = (ok, what) => console.log(`${ok ? "ok  " : "OVER"} ${what} (measured, not asserted)`);
measure(initial <= 800 * 1024, `initial download (the UI's module and its glue) <= 800 KiB gzip (${(initial / 1024).toFixed(0)} KiB)`);

const server = await serve(dist);
const base = `http://127.0.0.1:${server.address().port}`;
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
fs.mkdirSync(galleryDir, { recursive: true });
const shot = async (page, name) => { await page.screenshot({ path: path.join(out, `${name}.png`) }); console.log(`     screenshot ${name}.png`); };

try {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1, colorScheme: "light" });
  await context.addInitScript(helpers);
  const page = await context.newPage();
  // Frame intervals (ms, sorted) of the next n animation frames, measured in the page.
  const frameTimes = (n) => page.evaluate((n) => new Promise((resolve) => {
    const times = []; let last = performance.now();
    const tick = (t) => { times.push(t - last); last = t; if (times.length < n) requestAnimationFrame(tick); else resolve(times.sort((a, b) => a - b)); };
    requestAnimationFrame(tick);
  }), n);
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });

  if (want("main")) await timed("main", async () => {
  // 1. First render of the default scenario.
  const t0 = Date.now();
  await page.goto(`${base}/index.html`);
  await page.waitForSelector(".ks-node", { timeout: 20000 });
  const firstRender = Date.now() - t0;
  const nav = await page.evaluate(() => { const n = performance.getEntriesByType("navigation")[0]; return { domContentLoaded: Math.round(n.domContentLoadedEventEnd), }; });
  const paint = await page.evaluate(() => Math.round(performance.now()));
  console.log(`first render: ${firstRender} ms from navigation to node cards (page clock ${paint} ms, DOMContentLoaded ${nav.domContentLoaded} ms)`);
  measure(firstRender <= 1500, `first render <= 1.5 s (${firstRender} ms)`);
  // The simulation runs in a Web Worker: the page's thread only draws.
  check(page.workers().length === 1, `the simulation runs in a Web Worker (${page.workers().length} worker)`);
  const simMemory = await page.evaluate(() => Number(document.querySelector(".ks")?.dataset.simMemory || 0));
  check(simMemory > 0, `the worker reports its memory with each frame (${(simMemory / 1048576).toFixed(0)} MiB)`);
  check(await page.locator(".ks-node:not(.ks-unscheduled)").count() === 3, "default cluster shows 3 node cards");
  check(await page.locator(".ks-state-node").count() === 15, "lifecycle graph shows 15 states");

  // Let the default scenario play: the nginx Deployment rolls out.
  await page.waitForFunction(() => [...document.querySelectorAll(".ks-chip .ks-chip-status")].filter((e) => e.textContent === "Running").length >= 3, null, { timeout: 30000 });
  check(true, "default scenario: at least 3 pods reach Running");
  await page.waitForTimeout(600);
  await shot(page, "01-overview");

  // 2. Apply a manifest through the editor, then play and watch it run.
  await page.click("button.ks-round[aria-label='Pause']").catch(() => {});
  await page.fill(".ks-textarea", `apiVersion: v1
kind: Pod
metadata:
  name: e2e-web
  labels:
    app: e2e
spec:
  containers:
  - name: web
    image: nginx:1.27
    resources:
      requests:
        cpu: 300m
        memory: 64Mi
`);
  await page.click("#ks-apply");
  await page.waitForSelector(".ks-result .ks-ok-line", { timeout: 5000 });
  const applied = await page.textContent(".ks-result");
  check(/pod\/e2e-web created/.test(applied), `editor apply prints "pod/e2e-web created" (${applied.trim()})`);
  const chip = page.locator(".ks-chip", { hasText: "e2e-web" });
  await chip.first().waitFor({ timeout: 5000 });
  check(true, "the new pod appears in the cluster view");
  await page.click("button.ks-play");
  await page.waitForFunction(() => [...document.querySelectorAll(".ks-chip")].some((c) => c.textContent.includes("e2e-web") && c.textContent.includes("Running")), null, { timeout: 30000 });
  check(true, "the new pod reaches Running in the cluster view");
  await chip.first().click();
  await page.waitForSelector(".ks-path-steps li", { timeout: 5000 });
  const steps = await page.locator(".ks-path-steps .ks-path-state").allTextContents();
  console.log(`     e2e-web path: ${steps.join(" → ")}`);
  check(steps[0] === "Pending" && steps.includes("Ready"), "the new pod moved through the lifecycle graph from Pending to Ready");
  await page.waitForTimeout(400);
  await shot(page, "02-overview-selected-pod");

  // Inspectors.
  await page.click(".ks-subtab:has-text('Scheduling')");
  await page.waitForTimeout(200);
  await shot(page, "03-inspector-scheduling");
  await page.click(".ks-subtab:has-text('History')");
  await page.waitForTimeout(200);
  await shot(page, "04-inspector-history");

  // 3. Each view.
  for (const [view, name] of [["Cluster", "05-cluster"], ["Lifecycle", "06-lifecycle"], ["Flow", "07-flow"], ["Pods", "08-pods"]]) {
    await page.click(`.ks-tab:has-text('${view}')`);
    if (view === "Flow") {
      // Scale the Deployment through the console so messages are in flight in the screenshot.
      await page.click(".ks-ptab:has-text('kubectl')");
      await page.fill(".ks-console-in input", "scale deployment/nginx --replicas=5");
      await page.press(".ks-console-in input", "Enter");
      await page.waitForTimeout(350);
    } else {
      await page.waitForTimeout(500);
    }
    await shot(page, name);
  }
  // The cluster DNS add-on's two CoreDNS pods (kube-system) are listed too.
  const scaled = await page.locator(".ks-pod-table tbody tr").filter({ hasNotText: "coredns" }).count();
  check(scaled === 7, `kubectl scale through the console: the pods table lists 7 pods besides CoreDNS (${scaled})`);

  // Frame times while playing the flow view at 10x.
  await page.click(".ks-tab:has-text('Flow')");
  await page.selectOption(".ks-speed select", "10");
  const frames = await frameTimes(120);
  const p50 = frames[Math.floor(frames.length * 0.5)], p95 = frames[Math.floor(frames.length * 0.95)];
  console.log(`frame times (flow view, 10x, 3 nodes): p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms`);

  // 4. Console, events, gallery, dark theme.
  await page.click(".ks-tab:has-text('Overview')");
  await page.click(".ks-ptab:has-text('kubectl')");
  await page.fill(".ks-console-in input", "get pods -o wide");
  await page.press(".ks-console-in input", "Enter");
  await page.waitForSelector(".ks-console-entry", { timeout: 5000 });
  await shot(page, "09-console");
  await page.click(".ks-ptab:has-text('Events')");
  await page.waitForTimeout(200);
  await shot(page, "10-events");
  await page.click(".ks-scenario");
  await page.waitForSelector(".ks-card");
  await shot(page, "11-gallery");
  await page.keyboard.press("Escape");

  // 5. Time travel: scrub back to 2 s and check the new pod is gone from that moment.
  await page.click("button.ks-round[aria-label='Pause']").catch(() => {});
  const box = await page.locator(".ks-track").boundingBox();
  await page.mouse.click(box.x + 2, box.y + box.height / 2);
  await page.waitForTimeout(300);
  const clock = await page.textContent(".ks-clock-value");
  check(clock.startsWith("00:00"), `scrubbing to the start travels back in time (clock ${clock})`);

  // 6. Scenarios through URL parameters, dark theme, embeds.
  await page.goto(`${base}/index.html?scenario=crashloop&view=lifecycle&speed=10&theme=dark`);
  await page.waitForFunction(() => [...document.querySelectorAll(".ks-state-node.is-occupied .ks-state-label")].some((e) => e.textContent === "CrashLoopBackOff"), null, { timeout: 30000 });
  check(true, "?scenario=crashloop reaches CrashLoopBackOff in the lifecycle graph");
  await shot(page, "12-crashloop-dark");
  if (!quick) {
  // The scheduler's explanation of an unschedulable pod (filter verdicts per node).
  await page.goto(`${base}/index.html?scenario=unschedulable&view=cluster&speed=5`);
  await page.waitForSelector(".ks-chip:has-text('too-big')", { timeout: 20000 });
  await page.waitForTimeout(3000);
  await page.click(".ks-chip:has-text('too-big')");
  await page.click(".ks-subtab:has-text('Scheduling')");
  await page.waitForTimeout(300);
  const failures = await page.locator(".ks-fail").count();
  check(failures >= 3, `unschedulable pod: the explanation shows a failed filter on every node (${failures} failures)`);
  await shot(page, "18-unschedulable-explain");
  await page.goto(`${base}/index.html?scenario=job&view=overview&speed=2&theme=dark`);
  await page.waitForTimeout(7000);
  await shot(page, "19-job-overview-dark");
  await page.goto(`${base}/index.html?scenario=node-failure&view=cluster&speed=100`);
  await page.waitForSelector(".ks-node.is-down", { timeout: 30000 });
  // The node controller's grace period (40 s) and the pods' not-ready toleration (300 s).
  await page.waitForFunction(() => (document.querySelector(".ks-clock-value")?.textContent || "") >= "07:00", null, { timeout: 60000 });
  await page.click("button.ks-play");
  const replaced = await page.evaluate(() => [...document.querySelectorAll(".ks-node:not(.is-down) .ks-chip")].length);
  console.log(`     node failure at ${await page.textContent(".ks-clock-value")}: ${replaced} pods on the healthy nodes`);
  await shot(page, "13-node-failure");
  await page.goto(`${base}/index.html?scenario=rolling-update&view=overview&speed=4`);
  await page.waitForFunction(() => (document.querySelector(".ks-clock-value")?.textContent || "") >= "00:23", null, { timeout: 60000 });
  await page.click("button.ks-play");
  const replicaSets = await page.locator(".ks-wl-child").count();
  console.log(`     rolling update at ${await page.textContent(".ks-clock-value")}: ${replicaSets} replica sets with pods`);
  await shot(page, "17-rolling-update");
  // The network view: a client resolving and fetching a Service once a second.
  await page.goto(`${base}/index.html?scenario=service-dns&view=network&speed=4`);
  // The client's first lookups are refused until the CoreDNS pods are ready; then its requests
  // reach web through the Service.
  await page.waitForFunction(() => [...document.querySelectorAll(".ks-net-packet")].filter((r) => r.textContent.includes("default/web")).length >= 3, null, { timeout: 60000 });
  await page.click("button.ks-play");
  const webRow = await page.locator(".ks-net-services tbody tr").filter({ hasText: "default/web" }).count();
  check(webRow === 1, "the network view lists the web Service");
  const served = await page.locator(".ks-net-packet").filter({ hasText: "default/client" }).filter({ hasText: "default/web" }).count();
  check(served > 0, `the network view names packets from the client through the web Service (${served})`);
  // Clicking a packet shows its path: the client's node's kube-proxy rule and the endpoint.
  await page.locator(".ks-net-packet").filter({ hasText: "default/client" }).filter({ hasText: "default/web:" }).first().click();
  const hops = await page.locator(".ks-net-detail .ks-net-hop").count();
  const rule = await page.locator(".ks-net-detail").filter({ hasText: "kube-proxy rules" }).filter({ hasText: "DNATs it to" }).count();
  check(hops >= 3 && rule === 1, `a selected packet shows its hops through the kube-proxy rule to the endpoint (${hops} hops)`);
  await shot(page, "20-network");
  // A thousand requests a second (25 busybox clients through kube-dns and kube-proxy): the
  // traffic the world carries per wall second at 1x, and the frame times while the network
  // view draws it. Benchmarks only (no timing assertions).
  await page.goto(`${base}/index.html?scenario=traffic&view=network&speed=1`);
  await page.waitForFunction(() => (document.querySelector(".ks-clock-value")?.textContent || "") >= "00:15", null, { timeout: 120000 });
  const packetsNow = async () => Number(((await page.textContent(".ks-network .ks-section-head .ks-muted:last-child")) || "").replace(/[^0-9]/g, ""));
  const clockNow = async () => { const [m, s] = ((await page.textContent(".ks-clock-value")) || "0:0").split(":").map(Number); return m * 60 + s; };
  const [p0, c0, w0] = [await packetsNow(), await clockNow(), Date.now()];
  const trafficFrames = await frameTimes(180);
  const [p1, c1, w1] = [await packetsNow(), await clockNow(), Date.now()];
  const wall = (w1 - w0) / 1000;
  console.log(`frame times at 1x with ~1,000 requests a virtual second (network view): p50 ${trafficFrames[90].toFixed(1)} ms, p95 ${trafficFrames[171].toFixed(1)} ms`);
  console.log(`     benchmark: ${((p1 - p0) / wall).toFixed(0)} packets (requests and DNS queries) per wall second; virtual clock ${((c1 - c0) / wall).toFixed(2)}x wall; ${(1000 / trafficFrames[90]).toFixed(0)} fps (p50) (bar: 1,000 requests/s at 60 fps)`);
  check(p1 > p0, `the traffic scenario's packets keep flowing (${p1 - p0} in ${wall.toFixed(1)} s)`);
  await shot(page, "20b-network-traffic");
  // The requests-per-second control: 100/s sets REQUEST_INTERVAL on the clients' Deployment
  // (kubectl set env), which the load generators' table then shows.
  await page.selectOption(".ks-net-load select", "100");
  await page.waitForFunction(() => (document.querySelector(".ks-net-load tbody tr")?.textContent || "").includes("0.25 s"), null, { timeout: 30000 });
  check(true, "the load generator's rate control sets the clients' interval (0.25 s for 100/s over 25 clients)");
  await page.click("button.ks-play");
  // NetworkPolicy: default deny at 20 s, allow role=frontend at 40 s.
  await page.goto(`${base}/index.html?scenario=netpol&view=network&speed=4`);
  await page.waitForFunction(() => (document.querySelector(".ks-clock-value")?.textContent || "") >= "00:48", null, { timeout: 90000 });
  await page.click("button.ks-play");
  const cells = await page.locator(".ks-net-matrix td.ks-net-cell").count();
  check(cells > 0, `the network view shows the connectivity matrix (${cells} cells)`);
  const dropped = await page.locator(".ks-net-packet").filter({ hasText: "default/intruder" }).filter({ hasText: "NetworkPolicy:" }).count();
  check(dropped > 0, `dropped packets from the intruder name the policy verdict (${dropped})`);
  const admitted = await page.locator(".ks-net-packet").filter({ hasText: "default/frontend" }).filter({ has: page.locator(".ks-status-pill.s-ok") }).count();
  check(admitted > 0, `the frontend's packets are admitted after the allow policy (${admitted})`);
  await shot(page, "21-network-policy");
  // The storage view: the block disk provisioned, attached, staged and published on a1.
  await page.goto(`${base}/index.html?scenario=block-storage&view=storage&speed=4`);
  await page.waitForSelector(".ks-storage", { timeout: 30000 });
  await page.waitForFunction(() => document.querySelector("tr[data-claim='default/data-db-0']")?.dataset.stage === "Published", null, { timeout: 60000 });
  await page.click("button.ks-play");
  const lit = await page.locator("tr[data-claim='default/data-db-0'] .ks-sto-step.done").count();
  check(lit === 5, `the claim's path lights all five steps once published (${lit})`);
  const attached = await page.locator(".ks-storage tr").filter({ hasText: "disk.csi.kubesim.io" }).filter({ has: page.locator(".ks-status-pill.s-ok") }).count();
  check(attached > 0, "the VolumeAttachment is attached");
  // The claim is published a moment before db-0's container writes its line: play on until the
  // details show it.
  await page.click("tr[data-claim='default/data-db-0']");
  await page.click("button.ks-play[aria-label='Play']");
  await page.waitForFunction(() => (document.querySelector(".ks-sto-detail .ks-sto-preview")?.textContent || "").includes("started on"), null, { timeout: 30000 }).catch(() => {});
  await page.click("button.ks-play[aria-label='Pause']").catch(() => {});
  const log = (await page.locator(".ks-sto-detail .ks-sto-preview").first().textContent({ timeout: 5000 }).catch(() => "")) || "";
  check(log.includes("started on a1"), `the claim's details show the file in its volume (${JSON.stringify(log)})`);
  await shot(page, "22-storage");
  // A volume that cannot attach: the attach step is failed and says why.
  await page.goto(`${base}/index.html?scenario=attach-failure&view=storage&speed=4`);
  await page.waitForFunction(() => document.querySelector("tr[data-claim='default/vault-data'] .ks-sto-step[data-step='attach']")?.dataset.state === "failed", null, { timeout: 60000 });
  await page.click("button.ks-play");
  const why = await page.locator("tr[data-claim='default/vault-data'] .ks-sto-problem").textContent();
  check(why.includes("encryption key is disabled"), `the failed attach names the driver's error (${why.slice(0, 60)}…)`);
  await shot(page, "23-storage-attach-failure");
  await page.goto(`${base}/index.html?scenario=big-cluster&view=cluster&speed=max`);
  await page.waitForSelector("canvas", { timeout: 30000 });
  const rollout = await frameTimes(120);
  console.log(`frame times while 1,000 pods roll out at max speed: p50 ${rollout[60].toFixed(1)} ms, p95 ${rollout[114].toFixed(1)} ms`);
  await page.waitForFunction(() => /1002\/1002 pods running/.test(document.querySelector(".ks-summary")?.textContent || ""), null, { timeout: 120000 });
  check(true, "1,000 pods (and the 2 CoreDNS pods) running on 40 nodes");
  await page.selectOption(".ks-speed select", "1");
  await page.waitForTimeout(500);
  const steady = await frameTimes(180);
  console.log(`frame times at 1x with 1,000 running pods (canvas cluster view): p50 ${steady[90].toFixed(1)} ms, p95 ${steady[171].toFixed(1)} ms`);
  console.log(`     benchmark: ${(1000 / steady[90]).toFixed(0)} fps (p50) with 1,000 pods in the canvas cluster view (bar: 60)`);
  await shot(page, "14-big-cluster-canvas");
  fs.copyFileSync(path.join(out, "14-big-cluster-canvas.png"), path.join(galleryDir, "big-cluster.png"));
  await page.click(".ks-tab:has-text('Lifecycle')");
  await page.waitForTimeout(500);
  const steadyGraph = await frameTimes(180);
  console.log(`frame times at 1x with 1,000 running pods (lifecycle graph): p50 ${steadyGraph[90].toFixed(1)} ms, p95 ${steadyGraph[171].toFixed(1)} ms`);
  console.log(`     benchmark: ${(1000 / steadyGraph[90]).toFixed(0)} fps (p50) with 1,000 pods in the lifecycle graph (bar: 60)`);

  // 10,000 pods on 1,000 nodes: convergence time, then frame times in the canvas at 1x, while
  // panning, and zoomed out to the whole fleet (benchmarks, reported, not asserted).
  const hugeStart = Date.now();
  await page.goto(`${base}/index.html?scenario=huge-cluster&view=cluster&speed=max`);
  await page.waitForSelector("canvas", { timeout: 60000 });
  const hugeRollout = await frameTimes(60);
  console.log(`frame times while 10,000 pods roll out at max speed: p50 ${hugeRollout[30].toFixed(1)} ms, p95 ${hugeRollout[57].toFixed(1)} ms`);
  await page.waitForFunction(() => /10002\/10002 pods running/.test(document.querySelector(".ks-summary")?.textContent || ""), null, { timeout: 600000, polling: 1000 });
  console.log(`     10,000 pods Running after ${((Date.now() - hugeStart) / 1000).toFixed(0)} s wall (virtual ${await page.textContent(".ks-clock-value")})`);
  check(true, "10,000 pods (and the 2 CoreDNS pods) running on 1,000 nodes");
  await page.selectOption(".ks-speed select", "1");
  await page.waitForTimeout(500);
  const huge = await frameTimes(180);
  const drawn = await page.getAttribute("canvas", "data-drawn-pods");
  console.log(`frame times at 1x with 10,000 running pods (canvas, ${drawn} pods in view): p50 ${huge[90].toFixed(1)} ms, p95 ${huge[171].toFixed(1)} ms`);
  console.log(`     benchmark: ${(1000 / huge[90]).toFixed(0)} fps (p50) with 10,000 pods in the canvas view (bar: 30)`);
  const box = await page.locator("canvas").boundingBox();
  const panning = frameTimes(90); // measured while the drag below runs
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  for (let i = 0; i < 60; i++) await page.mouse.move(box.x + box.width / 2 - i * 3, box.y + box.height / 2 - i * 8);
  await page.mouse.up();
  const pan = await panning;
  console.log(`frame times while dragging the 10,000-pod canvas: p50 ${pan[45].toFixed(1)} ms, p95 ${pan[85].toFixed(1)} ms`);
  await page.click(".ks-canvas-tools button:has-text('Fit')");
  await page.waitForTimeout(300);
  const fitted = await frameTimes(120);
  const drawnAll = await page.getAttribute("canvas", "data-drawn-pods");
  console.log(`frame times zoomed out to all 1,000 nodes (${drawnAll} pods drawn per redraw): p50 ${fitted[60].toFixed(1)} ms, p95 ${fitted[114].toFixed(1)} ms`);
  console.log(`     benchmark: ${(1000 / fitted[60]).toFixed(0)} fps (p50) with all 10,000 pods on screen (bar: 30)`);
  check(Number(drawnAll) === 10002, `zoomed out, the canvas draws every pod, CoreDNS's two included (${drawnAll})`);
  // Force a full redraw of all 10,000 pods on every frame: drag across the fitted canvas (each
  // pointer move redraws), and read the canvas's own timing of its last redraw.
  const fullRedraws = frameTimes(90); // measured while the drag below runs
  const fbox = await page.locator("canvas").boundingBox();
  await page.mouse.move(fbox.x + 40, fbox.y + 40);
  await page.mouse.down();
  for (let i = 0; i < 90; i++) await page.mouse.move(fbox.x + 40 + (i % 30) * 6, fbox.y + 40 + (i % 20) * 4);
  await page.mouse.up();
  const full = await fullRedraws;
  const drawMs = await page.getAttribute("canvas", "data-draw-ms");
  console.log(`frame times while every frame redraws all 10,000 pods: p50 ${full[45].toFixed(1)} ms, p95 ${full[85].toFixed(1)} ms; one full redraw ${drawMs} ms`);
  console.log(`     benchmark: ${(1000 / full[45]).toFixed(0)} fps (p50) redrawing 10,000 pods each frame (bar: 30)`);
  await shot(page, "20-huge-cluster-fit");
  fs.copyFileSync(path.join(out, "20-huge-cluster-fit.png"), path.join(galleryDir, "huge-cluster.png"));
  await page.click(".ks-canvas-tools button[aria-label='Zoom in']");
  await page.click(".ks-canvas-tools button[aria-label='Zoom in']");
  await page.waitForTimeout(300);
  await shot(page, "21-huge-cluster-zoomed");
  }
  await page.goto(`${base}/embed-example.html`);
  await page.waitForSelector("#lifecycle .ks-graph", { timeout: 20000 });
  await page.waitForSelector("#flow .ks-flow-svg", { timeout: 20000 });
  await page.waitForTimeout(3000);
  await page.screenshot({ path: path.join(out, "15-embed-example.png"), fullPage: true });
  console.log("     screenshot 15-embed-example.png");
  check(await page.locator(".ks.ks-embed").count() === 2, "the docs page embeds two views");
  // A page on another origin (another port) importing kubesim from the site: a worker script
  // on another origin is refused, so the simulation's worker starts from a blob that imports it.
  {
    const embedder = await serveEmbedder(base);
    const other = await browser.newPage({ viewport: { width: 1200, height: 700 } });
    await other.goto(`http://127.0.0.1:${embedder.address().port}/`);
    const shown = await other.waitForSelector(".ks-node", { timeout: 20000 }).then(() => true, () => false);
    const workers = other.workers().map((w) => w.url().split(":")[0]);
    check(shown && workers.length === 1, `a page on another origin embeds kubesim, its simulation in a worker (${workers.join(", ") || "no worker"})`);
    await other.close();
    embedder.close();
  }
  // A browser without Web Workers: the page loads the simulation's module itself and runs it
  // between its frames.
  {
    const plain = await browser.newPage({ viewport: { width: 1200, height: 700 } });
    await plain.addInitScript(helpers);
    await plain.addInitScript(() => { window.Worker = undefined; });
    await plain.goto(`${base}/index.html?scenario=nginx&view=cluster`);
    const shown = await plain.waitForSelector(".ks-node", { timeout: 20000 }).then(() => true, () => false);
    const running = await plain.waitForFunction(() => __ks.count("nginx") === 3, null, { timeout: 30000 }).then(() => true, () => false);
    check(shown && running && plain.workers().length === 0, `without Web Workers the simulation runs on the page (${plain.workers().length} workers; nginx Running: ${running})`);
    await plain.close();
  }

  // 7. Responsive: 768 px.
  const narrow = await browser.newContext({ viewport: { width: 768, height: 1024 }, colorScheme: "light" });
  const small = await narrow.newPage();
  await small.goto(`${base}/index.html`);
  await small.waitForSelector(".ks-node");
  await small.waitForTimeout(2500);
  const overflow = await small.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  check(overflow <= 0, `no horizontal overflow at 768 px (${overflow}px)`);
  await small.screenshot({ path: path.join(out, "16-tablet-768.png") });
  console.log("     screenshot 16-tablet-768.png");
  await narrow.close();
  });

  // Three hours of churn (Jobs, a CronJob, rollouts, scaling) at max speed: the wasm memory
  // the tab holds as virtual time passes (printed, not asserted; Events expire after an hour
  // and the UI's recorded history is bounded, so it should level off).
  if (want("churn") && !quick) await timed("churn", async () => {
    await page.goto(`${base}/index.html?scenario=churn&view=overview&speed=max`);
    await page.waitForSelector(".ks-clock-value", { timeout: 20000 });
    const started = Date.now();
    const samples = [];
    let next = 10;
    while (Date.now() - started < 480000) {
      const [clock, bytes] = await page.evaluate(() => [__ks.clock(), __ks.wasmBytes()]);
      if (clock / 60 >= next || clock >= 3 * 3600) {
        samples.push({ vmin: Math.floor(clock / 60), mb: bytes / 1048576, wall: (Date.now() - started) / 1000 });
        next = Math.floor(clock / 60 / 10) * 10 + 10;
      }
      if (clock >= 3 * 3600) break;
      await page.waitForTimeout(500);
    }
    const last = samples[samples.length - 1];
    check(samples.length > 0 && last.mb > 0, `the churn scenario runs and its wasm memory is readable (${samples.length} samples)`);
    console.log(`wasm memory under churn (virtual minute: MiB): ${samples.map((p) => `${p.vmin}: ${p.mb.toFixed(0)}`).join(", ")}`);
    if (last) console.log(`     benchmark: ${last.vmin} virtual minutes of churn in ${last.wall.toFixed(0)} s wall at max speed; wasm memory ${last.mb.toFixed(0)} MiB at the end`);
    await page.click("button.ks-play[aria-label='Pause']", { timeout: 2000 }).catch(() => {});
    await shot(page, "25-churn");
    fs.copyFileSync(path.join(out, "25-churn.png"), path.join(galleryDir, "churn.png"));
  });

  // 30,000 pods on 1,000 nodes (opt-in: --only huge30k; several minutes of wall time): the
  // world loads, plays to convergence at max speed and the page keeps drawing (convergence
  // time, the worker's memory and frame times printed, not asserted).
  if (only.includes("huge30k")) await timed("huge30k", async () => {
    const started = Date.now();
    await page.goto(`${base}/index.html?scenario=huge-cluster-30k&view=cluster&speed=max`);
    await page.waitForSelector("canvas", { timeout: 120000 });
    const rollout = await frameTimes(60);
    console.log(`frame times while 30,000 pods roll out at max speed: p50 ${rollout[30].toFixed(1)} ms, p95 ${rollout[57].toFixed(1)} ms`);
    const samples = [];
    let running = 0;
    while (Date.now() - started < 1500000) {
      const [n, bytes, clock] = await page.evaluate(() => [Number(/(\d+)\/\d+ pods running/.exec(document.querySelector(".ks-summary")?.textContent || "")?.[1] || 0), Number(document.querySelector(".ks")?.dataset.simMemory || 0), __ks.clock()]);
      running = n;
      if (!samples.length || Date.now() - samples[samples.length - 1].at > 30000 || n >= 30002) {
        samples.push({ at: Date.now(), wall: (Date.now() - started) / 1000, n, mb: bytes / 1048576, clock });
        console.log(`     ${samples[samples.length - 1].wall.toFixed(0)} s wall: ${n} running, worker ${(bytes / 1048576).toFixed(0)} MiB, virtual ${clock} s`);
      }
      if (n >= 30002) break;
      await page.waitForTimeout(2000);
    }
    console.log(`30,000 pods (wall s: running pods, worker MiB, virtual s): ${samples.map((p) => `${p.wall.toFixed(0)}: ${p.n}, ${p.mb.toFixed(0)}, ${p.clock}`).join("; ")}`);
    check(running >= 30002, `30,000 pods (and the 2 CoreDNS pods) running on 1,000 nodes in the browser (${running} after ${((Date.now() - started) / 1000).toFixed(0)} s wall)`);
    await page.selectOption(".ks-speed select", "1");
    await page.waitForTimeout(500);
    const steady = await frameTimes(120);
    console.log(`frame times at 1x with 30,000 running pods: p50 ${steady[60].toFixed(1)} ms, p95 ${steady[114].toFixed(1)} ms`);
    await page.click(".ks-canvas-tools button:has-text('Fit')", { timeout: 2000 }).catch(() => {});
    await page.waitForTimeout(1000);
    await shot(page, "26-huge-cluster-30k");
    fs.copyFileSync(path.join(out, "26-huge-cluster-30k.png"), path.join(galleryDir, "huge-cluster-30k.png"));
  });

  // 8. The gallery: every scenario in its own view until it shows what it is about.
  const scenarios = scenariosFromSource(fs.readFileSync(path.join(root, "web/src/scenarios.rs"), "utf8"));
  if (want("gallery")) await timed("gallery", async () => {
    await page.goto(`${base}/index.html`);
    await page.waitForSelector(".ks-clock-value", { timeout: 20000 });
    const listed = await page.evaluate(() => window.kubesim?.scenarios || []);
    check(listed.length === scenarios.length && listed.every((n, i) => scenarios[i].name === n), `the gallery table read from scenarios.rs matches window.kubesim.scenarios (${scenarios.length} scenarios)`);
    await sweep({ page, base, dir: galleryDir, check, scenarios, names: galleryNames });
  });


  // 9. The flow view stays legible: at 1440×900 and at 768×1024, with each controller group
  // opened in turn (by keyboard), no two labels overlap, none leaves the drawing and none is
  // wider than its box. Busy scenarios: ingress (network add-ons), block-storage (CSI sidecars,
  // 4 nodes), big-cluster (40 nodes: the overflow column). The lifecycle graph's labels too.
  if (want("flow")) await timed("flow", async () => {
    for (const [width, height] of [[1440, 900], [768, 1024]]) {
      const sized = await browser.newContext({ viewport: { width, height }, colorScheme: "light" });
      await sized.addInitScript(helpers);
      const p = await sized.newPage();
      p.on("pageerror", (e) => errors.push(String(e)));
      for (const [scenario, until] of [["ingress", 60], ["block-storage", 45], ["big-cluster", 5]]) {
        await p.goto(`${base}/index.html?scenario=${scenario}&speed=100`);
        await p.waitForSelector(".ks-clock-value", { timeout: 20000 });
        const reached = await p.waitForFunction((t) => __ks.clock() >= t && __ks.pause(), until, { timeout: 60000 }).then(() => true, () => false);
        check(reached, `flow ${scenario} at ${width}px: played to ${until} s`);
        await p.keyboard.press("4"); // the Flow view's key
        await p.waitForSelector(".ks-flow-svg g[aria-expanded]", { timeout: 5000 });
        const problems = [];
        const note = (what, r) => {
          for (const o of r.overlaps) problems.push(`${what}: overlap ${o}`);
          for (const o of r.outside) problems.push(`${what}: outside the drawing ${o}`);
          for (const o of r.overflowing) problems.push(`${what}: wider than its box ${o}`);
        };
        const closed = await p.evaluate(svgLabelBoxes, ".ks-flow-svg");
        note("all groups closed", closed);
        const groups = await p.locator(".ks-flow-svg g[aria-expanded]").count();
        let labels = closed.count;
        for (let i = 0; i < groups; i++) {
          const group = p.locator(".ks-flow-svg g[aria-expanded]").nth(i);
          const name = ((await group.getAttribute("aria-label")) || "").split(" ·")[0];
          await group.focus();
          await p.keyboard.press("Enter");
          const open = await p.locator(".ks-flow-svg g[aria-expanded='true']").count();
          if (open !== 1) problems.push(`${name}: Enter did not open the group`);
          const r = await p.evaluate(svgLabelBoxes, ".ks-flow-svg");
          labels += r.count;
          note(`${name} open`, r);
          if (scenario === "block-storage" && name === "Storage") await shot(p, `24-flow-storage-open-${width}`);
          await p.locator(".ks-flow-svg g[aria-expanded='true']").focus();
          await p.keyboard.press("Enter");
        }
        console.log(`     flow ${scenario} at ${width}px: ${groups} groups, ${labels} label boxes measured; smallest label ${closed.smallest.toFixed(1)} px on screen (${(closed.scale * 100).toFixed(0)}% scale)`);
        check(problems.length === 0, `flow ${scenario} at ${width}px: no overlapping, clipped or overflowing labels${problems.length ? ": " + problems.slice(0, 8).join("; ") : ""}`);
      }
      await p.goto(`${base}/index.html?scenario=crashloop&view=lifecycle&speed=100`);
      await p.waitForFunction(() => __ks.state("CrashLoopBackOff") >= 1 && __ks.pause(), null, { timeout: 30000 }).catch(() => {});
      const graph = await p.evaluate(svgLabelBoxes, ".ks-graph");
      const issues = [...graph.overlaps.map((o) => `overlap ${o}`), ...graph.outside.map((o) => `outside ${o}`), ...graph.overflowing.map((o) => `wider than its box ${o}`)];
      check(issues.length === 0, `lifecycle graph at ${width}px: ${graph.count} labels inside their boxes, none overlapping${issues.length ? ": " + issues.join("; ") : ""}`);
      await sized.close();
    }
  });

  // 10. Accessibility: every control has a name and is in the Tab order, nothing clickable is out
  // of keyboard reach, and text contrast meets WCAG AA (4.5:1; 3:1 for large text) in both
  // themes, in every view, panel and dialog; then the 768 px embed of each view.
  if (want("a11y")) await timed("a11y", async () => {
    // Clickable shapes with a keyboard path elsewhere: a pod's dot in the lifecycle graph (the
    // pod's chip, its row in the pods table and in the graph's transitions) and a timeline
    // marker (the time slider's arrow keys reach every moment).
    const alternatives = [/^<circle\.ks-pod-dot/, /^<circle>( |$)/];
    const audit = async (p, where) => {
      const c = await p.evaluate(controlAudit);
      const clickable = c.clickable.filter((d) => !alternatives.some((re) => re.test(d)));
      check(c.unnamed.length === 0, `${where}: all ${c.controls} controls have an accessible name${c.unnamed.length ? " (not: " + c.unnamed.slice(0, 6).join(", ") + ")" : ""}`);
      check(c.unreachable.length === 0 && clickable.length === 0, `${where}: every control and clickable element is in the Tab order${c.unreachable.length + clickable.length ? " (not: " + [...c.unreachable, ...clickable].slice(0, 6).join(", ") + ")" : ""}`);
      // What is still fading in (a packet row that arrived with the last frame starts at
      // opacity 0; a matrix cell whose verdict flipped pulses three times) is not the resting
      // view: let finite animations end first (5 s at most).
      await p.evaluate(() => Promise.race([
        Promise.all(document.getAnimations().filter((a) => a.effect?.getTiming().iterations !== Infinity).map((a) => a.finished.catch(() => {}))),
        new Promise((done) => setTimeout(done, 5000)),
      ]));
      const k = await p.evaluate(contrastAudit, "body");
      check(k.failures.length === 0, `${where}: ${k.checked} texts meet WCAG AA contrast${k.failures.length ? " (not: " + k.failures.slice(0, 6).map((f) => `${f.key} ${f.ratio.toFixed(2)}:1 "${f.sample}"`).join("; ") + ")" : ""}`);
    };
    const views = [["nginx", "overview", 15], ["nginx", "cluster", 15], ["crashloop", "lifecycle", 30], ["ingress", "flow", 40], ["nginx", "pods", 15], ["netpol", "network", 45], ["attach-failure", "storage", 30]];
    for (const theme of ["light", "dark"]) {
      const themed = await browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: theme });
      await themed.addInitScript(helpers);
      const p = await themed.newPage();
      p.on("pageerror", (e) => errors.push(String(e)));
      for (const [scenario, view, until] of views) {
        await p.goto(`${base}/index.html?scenario=${scenario}&view=${view}&speed=100&theme=${theme}`);
        await p.waitForSelector(".ks-clock-value", { timeout: 20000 });
        await p.waitForFunction((t) => __ks.clock() >= t && __ks.pause(), until, { timeout: 60000 }).catch(() => {});
        await audit(p, `${view} (${scenario}, ${theme})`);
      }
      // The side panels (a pod selected for the inspector, each of its tabs) and the dialogs.
      await p.goto(`${base}/index.html?scenario=unschedulable&view=cluster&speed=100&theme=${theme}`);
      await p.waitForFunction(() => __ks.clock() >= 10 && __ks.pause(), null, { timeout: 30000 }).catch(() => {});
      for (const tab of ["kubectl", "Events"]) {
        await p.click(`#ks-ptab-${tab}`);
        await audit(p, `${tab} panel (${theme})`);
      }
      await p.click(".ks-chip:has-text('too-big')");
      for (const sub of await p.locator(".ks-subtab").allTextContents()) {
        await p.click(`.ks-subtab:has-text('${sub}')`);
        await audit(p, `inspector ${sub} tab (${theme})`);
      }
      for (const [open, name] of [[".ks-scenario", "gallery"], ["button[aria-label='Keyboard shortcuts']", "shortcuts"], [".ks-share", "share"]]) {
        await p.click(open);
        await p.waitForSelector(".ks-dialog", { timeout: 5000 });
        await audit(p, `${name} dialog (${theme})`);
        await p.keyboard.press("Escape");
      }
      if (theme === "dark") await shot(p, "25-dark-inspector");
      // "What if?": the fork's bar, both futures side by side and what differs, after a change
      // made in the fork through the console.
      await p.goto(`${base}/index.html?scenario=nginx&view=cluster&speed=100&theme=${theme}`);
      await p.waitForFunction(() => __ks.clock() >= 10 && __ks.pause(), null, { timeout: 30000 }).catch(() => {});
      await p.click(".ks-whatif");
      await p.waitForSelector(".ks-fork-bar", { timeout: 10000 });
      await p.click("#ks-ptab-kubectl");
      await p.fill(".ks-console-in input", "scale deployment/nginx --replicas=5");
      await p.press(".ks-console-in input", "Enter");
      await p.click("button.ks-play[aria-label='Play']");
      await p.waitForFunction(() => __ks.clock() >= 20 && __ks.pause(), null, { timeout: 30000 }).catch(() => {});
      await audit(p, `What if? fork (${theme})`);
      await shot(p, `27-whatif-${theme}`);
      await themed.close();
    }
    // Tab walks the whole page in order: every control the audit found is reached, and focus
    // never sticks.
    const walker = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const w = await walker.newPage();
    await w.goto(`${base}/index.html?scenario=nginx&view=overview&speed=100`);
    await w.waitForSelector(".ks-node", { timeout: 20000 });
    await w.click("button.ks-play[aria-label='Pause']");
    await w.evaluate(() => { document.activeElement?.blur(); window.__seen = new Set(); document.addEventListener("focusin", (e) => window.__seen.add(e.target)); });
    const tabbable = await w.evaluate(() => [...document.querySelectorAll("button, a[href], input, select, textarea, [tabindex]")].filter((el) => el.tabIndex >= 0 && !el.disabled && el.getClientRects().length && !el.closest("[hidden]")).length);
    let presses = 0, stuck = 0, last = null;
    while (presses < tabbable + 20) {
      await w.keyboard.press("Tab");
      presses++;
      const now = await w.evaluate(() => { const a = document.activeElement; return a ? a.outerHTML.slice(0, 80) : ""; });
      stuck = now === last ? stuck + 1 : 0;
      last = now;
      if (stuck > 2) break;
    }
    const missed = await w.evaluate(() => [...document.querySelectorAll("button, a[href], input, select, textarea, [tabindex]")].filter((el) => el.tabIndex >= 0 && !el.disabled && el.getClientRects().length && !el.closest("[hidden]") && !window.__seen.has(el)).map((el) => el.outerHTML.slice(0, 60)));
    check(stuck <= 2 && missed.length === 0, `Tab reaches all ${tabbable} focusable elements of the overview in ${presses} presses${missed.length ? " (missed: " + missed.slice(0, 4).join(", ") + ")" : ""}${stuck > 2 ? " (focus stuck)" : ""}`);
    await walker.close();
    // The 768 px embed of each view: no horizontal overflow, its controls named and reachable.
    const embed = await browser.newContext({ viewport: { width: 768, height: 1024 }, colorScheme: "light" });
    await embed.addInitScript(helpers);
    const e = await embed.newPage();
    e.on("pageerror", (x) => errors.push(String(x)));
    for (const [scenario, view, until] of views.filter(([, v]) => v !== "overview")) {
      await e.goto(`${base}/index.html?scenario=${scenario}&view=${view}&speed=100&embed=1`);
      await e.waitForSelector(".ks-clock-value", { timeout: 20000 });
      await e.waitForFunction((t) => __ks.clock() >= t && __ks.pause(), until, { timeout: 60000 }).catch(() => {});
      const overflow = await e.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      check(overflow <= 0, `768 px embed of ${view}: no horizontal overflow (${overflow}px)`);
      await audit(e, `768 px embed of ${view}`);
      await shot(e, `26-embed-768-${view}`);
    }
    await embed.close();
  });

  check(errors.length === 0, `no page errors${errors.length ? ": " + errors.slice(0, 3).join(" | ") : ""}`);
} finally {
  await browser.close();
  server.close();
}
console.log(`wall time ${((Date.now() - startedAt) / 1000).toFixed(0)} s (${sectionTimes.join(", ")})`);
console.log(failures ? `${failures} check(s) failed` : "all checks passed");
process.exit(failures ? 1 : 0);
