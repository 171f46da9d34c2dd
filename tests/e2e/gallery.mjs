// The gallery sweep: every scenario of web/src/scenarios.rs opened in its own view at a high
// speed, played until something that shows the scenario works appears (bounded waits), then
// paused and photographed into screenshots/gallery/<name>.png.
//
// Each entry's `steps` are page expressions over the helpers of `helpers` below (installed as
// window.__ks before the app starts), awaited in order; `after` may act on the page (open a
// panel, select a pod) and assert more. Scenarios missing from the table fail the sweep, so a new
// scenario needs its check here.

/** The in-page helpers the conditions use (a function source, run before the app starts). */
export function helpers() {
  const text = (el) => (el?.textContent || "").trim();
  // Trunk's loader announces the instantiated module: its exports include the wasm memory.
  addEventListener("TrunkApplicationStarted", (e) => { window.__ksWasm = e.detail?.wasm; });
  window.__ks = {
    /** The simulation's wasm linear memory in bytes (it only grows: a high-water mark), as its
     * module (in the Web Worker) reports it with each frame; the page's own module otherwise. */
    wasmBytes() {
      const sim = Number(document.querySelector(".ks")?.dataset.simMemory || 0);
      return sim || window.__ksWasm?.memory?.buffer?.byteLength || 0;
    },
    /** The virtual clock in seconds (mm:ss.mmm or h:mm:ss.mmm). */
    clock() {
      const parts = text(document.querySelector(".ks-clock-value")).split(":").map(Number);
      return parts.reduce((acc, p) => acc * 60 + p, 0);
    },
    /** Pod chips of the cluster views: {name, status, node} ("" for the unscheduled card). */
    chips(prefix = "") {
      return [...document.querySelectorAll(".ks-chip")]
        .map((c) => {
          const card = c.closest(".ks-node");
          const node = !card || card.classList.contains("ks-unscheduled") ? "" : text(card.querySelector(".ks-node-name"));
          return { name: text(c.querySelector(".ks-chip-name")), status: text(c.querySelector(".ks-chip-status")), node };
        })
        .filter((c) => c.name.startsWith(prefix));
    },
    /** How many chips named `prefix...` show `status` (on a node unless `node` says where). */
    count(prefix, status = "Running", node = null) {
      return this.chips(prefix).filter((c) => c.status === status && (node === null ? c.node !== "" : c.node === node)).length;
    },
    /** A node card's state line ("Ready · cordoned", "NotReady", ...). */
    nodeState(name) {
      const card = [...document.querySelectorAll(".ks-node")].find((n) => text(n.querySelector(".ks-node-name")) === name);
      return card ? text(card.querySelector(".ks-state")) + (card.classList.contains("is-down") ? " down" : "") : "";
    },
    /** How many pods the lifecycle graph holds in the state labelled `label`. */
    state(label) {
      const node = [...document.querySelectorAll(".ks-state-node")].find((g) => text(g.querySelector(".ks-state-label")) === label);
      return node ? Number(text(node.querySelector(".ks-state-count"))) || 0 : 0;
    },
    /** The lifecycle view's recent transitions: "pod: from → to" lines. */
    transitions(pod = "") {
      return [...document.querySelectorAll(".ks-transitions tbody tr")]
        .map((tr) => [...tr.querySelectorAll("td")].map(text))
        .filter((cells) => cells[1]?.includes(pod))
        .map((cells) => `${cells[1]}: ${cells[2]}`);
    },
    /** The event log's lines (the Events panel must be open): "Reason object: message". */
    events(match = "") {
      return [...document.querySelectorAll(".ks-event-list li")]
        .map((li) => `${text(li.querySelector(".ks-event-reason"))} ${text(li.querySelector(".ks-event-object"))}: ${text(li.querySelector(".ks-event-message"))}`)
        .filter((line) => line.includes(match));
    },
    /** Pauses the player (a step's condition pauses in the frame it holds, for the photo). */
    pause() {
      document.querySelector("button.ks-play[aria-label='Pause']")?.click();
      return true;
    },
    /** The virtual times (s) of the network view's packets that mention every one of `parts`. */
    packetTimes(...parts) {
      return [...document.querySelectorAll(".ks-net-packet")]
        .filter((li) => parts.every((p) => li.textContent.includes(p)))
        .map((li) => text(li.querySelector("span")).split(":").map(Number).reduce((acc, p) => acc * 60 + p, 0));
    },
    /** The network view's packets, newest first, as text (protocols in lower case: tcp, dns). */
    packets(...parts) {
      return [...document.querySelectorAll(".ks-net-packet")].map((li) => li.textContent).filter((t) => parts.every((p) => t.includes(p)));
    },
    /** The network view's Services table row of `name` (namespace/name), as text. */
    service(name) {
      const row = [...document.querySelectorAll(".ks-net-services tbody tr")].find((tr) => text(tr.querySelector("td")) === name);
      return row ? [...row.querySelectorAll("td")].map(text) : [];
    },
    /** A claim's row in the storage view: {stage, text}. */
    claim(key) {
      const row = document.querySelector(`tr[data-claim='${key}']`);
      return row ? { stage: row.dataset.stage, text: text(row) } : { stage: "", text: "" };
    },
  };
}

/** Whether a clock text (mm:ss.mmm or h:mm:ss.mmm) is past `seconds`. */
const clockPast = (clock, seconds) => (clock || "").trim().split(":").map(Number).reduce((acc, p) => acc * 60 + p, 0) > seconds;

const running = (prefix, n) => `__ks.count(${JSON.stringify(prefix)}) >= ${n}`;

/**
 * name → { speed?, steps: [{ until, what, timeout? }], shotAt?, panel?, after?(page, check) }.
 * speed (default 100) is the fastest at which the moment a step waits for lasts several frames
 * on a loaded 2-core machine (a frame may advance up to 100 ms × speed of virtual time);
 * shotAt: the step after which the photo is taken (default: the last).
 */
export const GALLERY = {
  nginx: { steps: [{ until: running("nginx-", 3), what: "the nginx Deployment's 3 replicas run" }] },
  "rolling-update": { speed: 10,
    steps: [
      { until: "__ks.clock() > 20 && new Set(__ks.chips('nginx-').filter((c) => c.status === 'Running').map((c) => c.name.split('-').slice(0, -1).join('-'))).size >= 2", what: "mid roll-out, pods of the old and the new ReplicaSet run side by side" },
      { until: "__ks.count('nginx-', 'Running') === 4 && new Set(__ks.chips('nginx-').map((c) => c.name.split('-').slice(0, -1).join('-'))).size === 1", what: "then all 4 replicas run the new template" },
    ],
    shotAt: 0,
  },
  scale: { speed: 25, steps: [{ until: "__ks.clock() > 15 && __ks.count('api-', 'Running') >= 8", what: "scaled from 2 to 8 replicas" }] },
  crashloop: { speed: 25, steps: [{ until: "__ks.state('CrashLoopBackOff') >= 1", what: "a pod in CrashLoopBackOff in the lifecycle graph" }] },
  imagepull: { speed: 25, steps: [{ until: "__ks.state('ImagePullBackOff') >= 1", what: "a pod in ImagePullBackOff in the lifecycle graph" }] },
  "init-containers": { speed: 5,
    steps: [
      { until: "__ks.state('Init') >= 1", what: "the pod waits in Init while its init containers run" },
      { until: "__ks.transitions('with-init').some((t) => t.includes('Init →'))", what: "then leaves Init for its app container" },
    ],
  },
  job: { steps: [{ until: "__ks.state('Succeeded') >= 4", what: "the Job's 3 completions and the one-shot pod end Succeeded" }] },
  unschedulable: {
    steps: [{ until: "__ks.count('too-big', 'Pending', '') === 1 && __ks.clock() > 3", what: "too-big stays Pending, bound to no node" }],
    after: async (page, check) => {
      await page.click(".ks-chip:has-text('too-big')");
      await page.click(".ks-subtab:has-text('Scheduling')");
      const failures = await page.locator(".ks-fail").count();
      check(failures >= 3, `unschedulable: the scheduling tab shows a failed filter on each node (${failures})`);
    },
  },
  "node-failure": {
    steps: [
      { until: "__ks.nodeState('node-2').includes('down')", what: "node-2 goes down" },
      { until: "__ks.chips('web-').filter((c) => c.status === 'Running' && c.node !== 'node-2').length === 6", what: "its pods are evicted after the toleration and run on node-1 and node-3", timeout: 30000 },
    ],
  },
  "service-dns": { steps: [{ until: "__ks.packets('default/client', 'default/web:').length >= 3", what: "the client's requests reach web through the Service" }] },
  "rolling-service": { speed: 25,
    steps: [
      { until: "__ks.clock() > 21 && __ks.packets('default/client', 'default/web').length > 0", what: "the client's requests flow during the restart" },
      { until: "__ks.clock() > 35 && __ks.service('default/web')[5] === '4/4'", what: "after the rollout restart all 4 new endpoints are ready" },
    ],
  },
  readiness: { speed: 25,
    steps: [
      { until: "__ks.service('default/web')[5] === '2/2'", what: "web-a and web-b are both ready endpoints" },
      { until: "__ks.clock() > 30 && __ks.service('default/web')[5] === '1/2'", what: "web-b fails its readiness probe and leaves the ready endpoints" },
    ],
  },
  "headless-dns": {
    steps: [{ until: "__ks.clock() > 40 && __ks.packets('dns', 'nginx.default.svc.cluster.local').length > 0 && __ks.service('default/nginx')[5] === '3/3'", what: "the headless Service answers for 3 ready pods after the scale to 3" }],
  },
  traffic: { steps: [{ until: "__ks.packets('tcp', 'default/web').length >= 20", what: "the 25 clients' requests flow through kube-proxy to web" }] },
  netpol: {
    steps: [
      { until: "__ks.clock() > 40 && __ks.packets('default/intruder', 'NetworkPolicy:').length > 0", what: "the intruder's packets are dropped with the policy's verdict" },
      { until: "document.querySelectorAll('.ks-net-matrix td.ks-net-cell.blocked').length > 0 && __ks.packets('default/frontend', 'ok').length > 0", what: "the frontend is admitted again by the allow policy" },
    ],
  },
  "netpol-dns": { speed: 10,
    steps: [
      { until: "__ks.packets('dns', 'default/client', 'NetworkPolicy:').length > 0", what: "the egress policy drops the client's DNS queries" },
      { until: "__ks.packetTimes('tcp', 'default/client', 'ok').some((t) => t > 45)", what: "the DNS policy fixes it: requests succeed again" },
    ],
  },
  "zone-partition": { speed: 25,
    steps: [{ until: "__ks.packetTimes('default/client', 'timeout').some((t) => t > 20) && __ks.service('default/web')[5] === '3/3'", what: "after the partition, connections to the zone-b endpoint time out while every endpoint stays in the Service" }],
  },
  ingress: {
    steps: [{ until: "__ks.packets('tcp', 'ingress-nginx-controller', 'ok').length >= 3", what: "the client's requests reach the ingress-nginx controller" }],
    after: async (page, check) => {
      // The client cycles through the rules' hosts and paths; from 60 s web2's routes answer 503
      // (its Deployment scaled to 0), so look at several requests: some reach a backend.
      const rows = page.locator(".ks-net-packet").filter({ hasText: "tcp" }).filter({ hasText: "ingress-nginx-controller" });
      const details = [];
      for (let i = 0; i < Math.min(8, await rows.count()); i++) {
        const at = ((await rows.nth(i).textContent()) || "").slice(0, 9);
        await rows.nth(i).click();
        await page.waitForFunction((t) => (document.querySelector(".ks-net-detail")?.textContent || "").includes(`at ${t}`), at, { timeout: 5000 }).catch(() => {});
        details.push((await page.locator(".ks-net-detail").textContent()) || "");
      }
      const backend = details.filter((d) => /opens a second connection to default\/web2?-/.test(d)).length;
      check(backend > 0, `ingress: a request's hops name the backend the rule picked (${backend} of ${details.length})`);
      if (clockPast(await page.textContent(".ks-clock-value"), 75)) {
        const own = details.filter((d) => d.includes("nginx answers 503 itself")).length;
        check(own > 0, `ingress: after web2 scales to 0 its routes get nginx's own 503 (${own} of ${details.length})`);
      }
    },
  },
  hpa: { steps: [{ until: "__ks.clock() > 20 && __ks.count('php-apache', 'Running') >= 2", what: "the HPA adds php-apache replicas under the load", timeout: 30000 }] },
  statefulset: {
    steps: [
      { until: "['default/www-web-0', 'default/www-web-1', 'default/www-web-2'].every((k) => __ks.claim(k).stage === 'Published')", what: "each replica's claim is provisioned, bound and mounted" },
      { until: "__ks.clock() > 62 && __ks.claim('default/www-web-1').stage === 'Published'", what: "web-1 comes back with the same claim" },
    ],
  },
  "block-storage": { speed: 25,
    steps: [
      { until: "__ks.claim('default/data-db-0').stage === 'Published' && __ks.claim('default/data-db-0').text.includes('a1')", what: "the disk is attached to a1 and published" },
      { until: "__ks.clock() > 40 && __ks.claim('default/data-db-0').stage === 'Published' && __ks.claim('default/data-db-0').text.includes('a2')", what: "after the cordon it moves to a2", timeout: 30000 },
    ],
    after: async (page, check) => {
      await page.click("tr[data-claim='default/data-db-0']");
      await page.waitForSelector(".ks-sto-detail .ks-sto-preview", { timeout: 10000 }).catch(() => {});
      const log = (await page.locator(".ks-sto-detail .ks-sto-preview").first().textContent().catch(() => "")) || "";
      check(log.includes("a1") && log.includes("a2"), `block-storage: the volume's file holds the lines written on a1 and on a2 (${JSON.stringify(log.slice(0, 80))})`);
    },
  },
  wffc: { speed: 10,
    steps: [
      { until: "__ks.claim('default/notes').stage !== '' && __ks.clock() > 5 && __ks.clock() < 20", what: "the claim waits for its first consumer" },
      { until: "__ks.claim('default/notes').stage === 'Published'", what: "the writer pod arrives and the volume is provisioned on its node" },
    ],
  },
  "statefulset-restart": {
    steps: [{ until: "__ks.clock() > 45 && ['default/data-counter-0', 'default/data-counter-1'].every((k) => __ks.claim(k).stage === 'Published')", what: "both claims are published again after the rolling restart" }],
  },
  "attach-failure": {
    steps: [{ until: "document.querySelector(\"tr[data-claim='default/vault-data'] .ks-sto-step[data-step='attach']\")?.dataset.state === 'failed' && __ks.claim('default/app-data').stage === 'Published'", what: "vault's attach step fails while app's claim is published" }],
  },
  daemonset: { speed: 10,
    steps: [
      { until: "new Set(__ks.chips('log-agent').filter((c) => c.status === 'Running').map((c) => c.node)).size === 3", what: "a log agent runs on each of the 3 nodes" },
      { until: "__ks.nodeState('node-3').includes('down')", what: "node-3 loses power; its agent is not placed elsewhere" },
    ],
  },
  cronjob: { steps: [{ until: "__ks.state('Succeeded') >= 2", what: "the CronJob's Jobs complete, one per minute", timeout: 30000 }] },
  probes: {
    panel: "Events",
    steps: [
      { until: "__ks.events('failed liveness probe').length > 0", what: "liveness-exec fails its liveness probe and is restarted" },
      { until: "__ks.transitions('readiness-exec').some((t) => t.includes('→ Ready')) && __ks.transitions('slow-start').some((t) => t.includes('→ Ready'))", what: "readiness-exec becomes Ready when its file appears; slow-start passes its startup probe" },
    ],
  },
  sidecar: { speed: 10,
    steps: [
      { until: "__ks.state('Ready') >= 1 && __ks.clock() < 40", what: "the app and its sidecar run (Ready)" },
      { until: "__ks.state('Terminating') >= 1", what: "the pod is deleted and terminates, the sidecar last" },
    ],
  },
  prestop: { speed: 10, panel: "Events", steps: [{ until: "__ks.clock() > 20 && __ks.state('Terminating') >= 1", what: "web is Terminating while its preStop hook runs" }] },
  "pdb-drain": { speed: 25,
    steps: [
      { until: "__ks.nodeState('node-1').includes('cordoned') && __ks.count('web-', 'Running', 'node-1') === 2", what: "the drain evicts one web pod; the budget refuses the others" },
      { until: "__ks.count('web-', 'Running', 'node-1') === 1", what: "the next drain, after the replacement is Ready, evicts the next" },
    ],
    shotAt: 0,
  },
  taints: { speed: 25,
    steps: [
      { until: "__ks.count('gpu-job', 'Running', 'node-1') === 1 && __ks.count('web-', 'Running') === 4 && __ks.count('web-', 'Running', 'node-1') === 0", what: "web avoids the tainted node-1; the tolerating gpu-job runs there" },
      { until: "__ks.clock() > 40 && __ks.count('web-', 'Running', 'node-3') === 4", what: "node-2's NoExecute taint evicts its web pods onto node-3" },
    ],
  },
  "topology-spread": {
    steps: [{ until: "__ks.clock() > 51 && __ks.count('web-', 'Running') === 8 && __ks.count('web-', 'Pending', '') === 1", what: "with zone-c cordoned, the 9th replica stays Pending" }],
    after: async (page, check) => {
      await page.click(".ks-unscheduled .ks-chip");
      await page.click(".ks-subtab:has-text('Scheduling')");
      const text = (await page.locator(".ks-inspector").textContent()) || "";
      check(text.includes("PodTopologySpread"), "topology-spread: the Pending pod's scheduling explanation names PodTopologySpread");
    },
  },
  quota: { speed: 25,
    panel: "Events",
    steps: [
      { until: "__ks.count('web-', 'Running') === 3 && __ks.events('exceeded quota').length > 0", what: "the ReplicaSet's 4th and 5th creates are refused by the quota" },
      { until: "__ks.clock() > 40 && __ks.count('web-', 'Running') === 5", what: "the raised quota lets the other two start" },
    ],
    shotAt: 0,
  },
  preemption: {
    steps: [{ until: "__ks.count('frontend', 'Running') === 1 && __ks.count('batch-', 'Pending', '') >= 1", what: "the high-priority frontend preempts a batch pod, whose replacement stays Pending" }],
  },
  // The scale scenarios are swept by their own sections (convergence benchmarks), which save
  // their gallery screenshots.
  "big-cluster": { elsewhere: true },
  "huge-cluster": { elsewhere: true },
  "huge-cluster-30k": { elsewhere: true },
  churn: { elsewhere: true },
};

/** The scenarios and their views, read from web/src/scenarios.rs (gallery order). */
export function scenariosFromSource(source) {
  return [...source.matchAll(/Meta \{\s*name: "([^"]+)",[\s\S]*?view: "([^"]+)",\s*\}/g)].map((m) => ({ name: m[1], view: m[2] }));
}

/**
 * Runs the sweep on `page` (whose context has `helpers` installed): for each scenario, opens
 * `?scenario=<name>&view=<its view>&speed=<fast>`, awaits its steps, pauses and saves
 * `<dir>/<name>.png`. `names` limits it to some scenarios. Returns per-scenario wall times.
 */
export async function sweep({ page, base, dir, check, scenarios, names = null, log = console.log }) {
  const times = [];
  const known = new Set(scenarios.map((s) => s.name));
  const stale = Object.keys(GALLERY).filter((name) => !known.has(name));
  check(stale.length === 0, `every gallery table entry is a scenario${stale.length ? ` (not: ${stale.join(", ")})` : ""}`);
  for (const { name, view } of scenarios) {
    if (names && !names.includes(name)) continue;
    const entry = GALLERY[name];
    if (!entry) {
      check(false, `gallery: scenario ${name} has a check in tests/e2e/gallery.mjs`);
      continue;
    }
    if (entry.elsewhere) continue;
    const start = Date.now();
    await page.goto(`${base}/index.html?scenario=${name}&view=${view}&speed=${entry.speed || 100}`);
    await page.waitForSelector(".ks-clock-value", { timeout: 20000 });
    if (entry.panel) await page.click(`#ks-ptab-${entry.panel}`);
    let ok = true;
    let shot = false;
    const photograph = async () => {
      await page.click("button.ks-play[aria-label='Pause']", { timeout: 2000 }).catch(() => {});
      // The network view is long: a taller window shows its traffic under the tables.
      const size = page.viewportSize();
      if (view === "network") await page.setViewportSize({ width: size.width, height: 1400 });
      await page.waitForTimeout(150);
      await page.screenshot({ path: `${dir}/${name}.png` });
      if (view === "network") await page.setViewportSize(size);
      shot = true;
    };
    for (const [i, step] of entry.steps.entries()) {
      // The condition pauses the player in the frame it first holds in, so the photo and the
      // clock show that moment; the next step plays on.
      if (i > 0) await page.click("button.ks-play[aria-label='Play']");
      // Built here, passed to the page as a function: the site's Content-Security-Policy forbids
      // evaluating strings there.
      const predicate = new Function(`return (${step.until}) && __ks.pause();`);
      const reached = await page
        .waitForFunction(predicate, null, { timeout: step.timeout || 15000 })
        .then(() => true)
        .catch(() => false);
      const clock = await page.textContent(".ks-clock-value");
      check(reached, `gallery ${name} (${view}): ${step.what} (at ${clock})`);
      if (!reached) {
        ok = false;
        break;
      }
      if (entry.shotAt === i && i < entry.steps.length - 1) await photograph();
    }
    if (ok && entry.after) {
      await page.click("button.ks-play[aria-label='Pause']", { timeout: 2000 }).catch(() => {});
      await entry.after(page, check);
    }
    if (!shot) await photograph();
    const wall = Date.now() - start;
    times.push([name, wall]);
    log(`     gallery ${name}: ${(wall / 1000).toFixed(1)} s wall, virtual ${await page.textContent(".ks-clock-value")}`);
  }
  return times;
}
