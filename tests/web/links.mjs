// The pages opened with a token (`/?token=...`) link to each other with it: the
// viewer's "WebXR sender" link opens /xr, which connects, and its "viewer" link
// opens / again, which connects. With no performer, the viewer's Performers
// panel says "none yet".
// Usage: node links.mjs --url URL --out DIR (URL with its ?token=)
import { args, launch, openPage, run } from "./browser.mjs";

const { url, out } = args();

/// Waits until the page says it is connected (a minute at most), or what it says.
async function connection(page) {
  try {
    await page.waitForFunction(() => document.getElementById("connection").textContent === "connected",
      null, { timeout: 60000 });
  } catch (e) {
    if (e.name !== "TimeoutError") throw e;
  }
  return page.textContent("#connection");
}

run(async () => {
  const browser = await launch();
  const { page, errors } = await openPage(browser, url);
  const viewer = { connection: await connection(page), performers: await page.textContent("#performers") };
  viewer.link = await page.getAttribute("#xrLink", "href");
  await page.click("#xrLink");
  await page.waitForURL(/\/xr/);
  const xr = { url: page.url(), connection: await connection(page) };
  xr.link = await page.getAttribute("#viewerLink", "href");
  await page.screenshot({ path: `${out}/links-xr.png` });
  await page.click("#viewerLink");
  await page.waitForURL((u) => u.pathname === "/");
  const back = { url: page.url(), connection: await connection(page) };
  await browser.close();
  return { viewer, xr, back, errors };
});
