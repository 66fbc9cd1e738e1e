// The viewer in narrow windows (600x800 and 375x667, a phone): no control
// runs off the page, each one can be scrolled to and clicked (nothing covers
// it), and the 3D view keeps a usable size.
// Usage: node narrow.mjs --url URL --out DIR --performer NAME
import { args, launch, openPage, run } from "./browser.mjs";

const { url, out, performer } = args();

/// Every visible control of the page: scrolled into view, whether it lies whole
/// inside the window and is what a click at its middle reaches.
function controls() {
  const found = [];
  for (const el of document.querySelectorAll("button, input, select, a")) {
    if (el.getClientRects().length === 0) continue; // hidden
    el.scrollIntoView({ block: "center", inline: "center" });
    const r = el.getBoundingClientRect();
    const inside = r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight;
    const hit = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
    const name = el.id || el.textContent.trim() || el.type;
    found.push({ name, inside, reached: hit !== null && (hit === el || el.contains(hit)) });
  }
  window.scrollTo(0, 0);
  const stage = document.getElementById("stage").getBoundingClientRect();
  return {
    controls: found,
    overflow: document.documentElement.scrollWidth - innerWidth,
    stage: { width: stage.width, height: stage.height },
    header: document.querySelector("header").getBoundingClientRect().height,
  };
}

run(async () => {
  const browser = await launch();
  const sizes = {};
  const errors = [];
  for (const [width, height] of [[600, 800], [375, 667]]) {
    const opened = await openPage(browser, url, { viewport: { width, height } });
    const page = opened.page;
    await page.waitForSelector(`.performer[data-name="${performer}"]`, { timeout: 60000 });
    sizes[`${width}x${height}`] = await page.evaluate(controls);
    await page.screenshot({ path: `${out}/narrow-${width}.png`, fullPage: true });
    errors.push(...opened.errors);
    await page.context().close();
  }
  await browser.close();
  return { sizes, errors };
});
