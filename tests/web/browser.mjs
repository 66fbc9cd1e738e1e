// Debian's Chromium, headless, through playwright-core (which never downloads a
// browser of its own). The flags keep Chromium off the network: the machines
// these tests run on have none, and the pages need none.
import { chromium } from "playwright-core";

export const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";

export async function launch() {
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      // Headless frames keep their pace when the page is not focused.
      "--disable-background-timer-throttling",
      "--disable-renderer-backgrounding",
      "--disable-backgrounding-occluded-windows",
    ],
  });
}

/// A page whose console errors and uncaught exceptions are collected.
export async function openPage(browser, url, { init, viewport = { width: 1200, height: 760 } } = {}) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
  if (init) await page.addInitScript(init);
  await page.goto(url);
  return { page, errors };
}

/// Drops a file named `name` holding `bytes` (a Buffer) on the element `selector`
/// matches: a drop event carrying the file, as a user's drag would.
export async function dropFile(page, selector, name, bytes) {
  const dataTransfer = await page.evaluateHandle(([b64, n]) => {
    const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const transfer = new DataTransfer();
    transfer.items.add(new File([data], n, { type: "model/gltf-binary" }));
    return transfer;
  }, [bytes.toString("base64"), name]);
  await page.dispatchEvent(selector, "drop", { dataTransfer });
}

/// The command line's `--name value` pairs.
export function args() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) out[argv[i].replace(/^--/, "")] = argv[i + 1];
  return out;
}

/// Runs `body`, printing its result as one JSON line; exits 1 on an error.
export async function run(body) {
  try {
    const result = await body();
    // Exit once the line is written: a pipe takes 64 KiB at a time, and exiting
    // sooner would cut a longer result.
    process.stdout.write(JSON.stringify(result) + "\n", () => process.exit(0));
  } catch (e) {
    console.error(e.stack || String(e));
    process.exit(1);
  }
}
