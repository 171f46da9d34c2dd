// Screenshots of one scenario and view of the built app (dist/), for looking at a change:
// node tests/e2e/shot.mjs SCENARIO VIEW UNTIL(mm:ss) OUT.png [--dark]
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const [scenario, view, until, out] = process.argv.slice(2);
const dark = process.argv.includes("--dark");
const require = createRequire(path.join(root, ".tools/node_modules/"));
const { chromium } = require("playwright-core");
const dist = path.join(root, "dist");
const types = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm", ".css": "text/css" };
const server = http.createServer((req, res) => {
  let file = path.join(dist, decodeURIComponent(new URL(req.url, "http://x").pathname));
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, "index.html");
  if (!fs.existsSync(file)) { res.writeHead(404); return res.end(); }
  res.writeHead(200, { "content-type": types[path.extname(file)] || "application/octet-stream" });
  fs.createReadStream(file).pipe(res);
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-gpu"] });
try {
  const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: dark ? "dark" : "light" })).newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/index.html?scenario=${scenario}&view=${view}&speed=4`);
  await page.waitForFunction((u) => (document.querySelector(".ks-clock-value")?.textContent || "") >= u, until, { timeout: 120000 });
  await page.click("button.ks-play");
  await page.waitForTimeout(300);
  await page.screenshot({ path: out, fullPage: process.argv.includes("--full") });
  console.log(`screenshot ${out} at ${await page.textContent(".ks-clock-value")}`);
} finally {
  await browser.close();
  server.close();
}
