// The viewer at `/`: shows the stick figures, waits for poses, takes two
// screenshots and checks the skeleton moved between them (pixels of its canvas,
// and a joint), records, stops, and finds the recording in the page's list.
// Usage: node viewer.mjs --url http://127.0.0.1:PORT/ --out DIR --performer NAME
import { args, launch, openPage, run } from "./browser.mjs";

const { url, out, performer } = args();

run(async () => {
  const browser = await launch();
  const { page, errors } = await openPage(browser, url);
  // The stick figures, over the avatars.
  await page.check("#skeleton");
  await page.waitForFunction(
    (name) => window.viewer && window.viewer.stats.rendered > 10 && window.viewer.joint(name, "leftHand"),
    performer, { timeout: 60000 });
  const canvasPixels = () => page.evaluate(() => {
    const c = document.getElementById("view");
    return Array.from(c.getContext("2d").getImageData(0, 0, c.width, c.height).data);
  });
  await page.screenshot({ path: `${out}/viewer-1.png` });
  const pixels1 = await canvasPixels();
  const leftHand = () => page.evaluate((name) => window.viewer.joint(name, "leftHand"), performer);
  const hand1 = await leftHand();
  // The hand as drawn, every 100 ms until the second screenshot (a periodic motion
  // can be back where it was after any one interval).
  const hands = [hand1];
  for (let i = 0; i < 7; i++) {
    await page.waitForTimeout(100);
    hands.push(await leftHand());
  }
  await page.screenshot({ path: `${out}/viewer-2.png` });
  const pixels2 = await canvasPixels();
  const hand2 = await leftHand();
  hands.push(hand2);
  let changed = 0;
  for (let i = 0; i < Math.min(pixels1.length, pixels2.length); i += 4) {
    if (pixels1[i] !== pixels2[i] || pixels1[i + 1] !== pixels2[i + 1] || pixels1[i + 2] !== pixels2[i + 2]) changed++;
  }
  // Hover a joint: its name shows. The figure walks on while the pointer moves,
  // so the pointer goes where the head was last drawn until a frame finds a joint
  // under it (up to a minute), and the name read is that frame's.
  const box = await page.locator("#view").boundingBox();
  let hovered = null;
  const deadline = Date.now() + 60000;
  while (hovered === null) {
    if (Date.now() > deadline) throw new Error("hovering the head never named a joint");
    const at = await page.evaluate((name) => window.viewer.screen(name, "head"), performer);
    await page.mouse.move(box.x + at[0], box.y + at[1]);
    try {
      const named = await page.waitForFunction(() => window.viewer.hovered, null, { timeout: 1000 });
      hovered = await named.jsonValue();
    } catch (e) {
      if (e.name !== "TimeoutError") throw e;
    }
  }
  await page.screenshot({ path: `${out}/viewer-hover.png` });

  await page.click("#recordAll");
  await page.waitForFunction(() => /record all: .*\.vrma/.test(document.getElementById("note").textContent), null, { timeout: 60000 });
  const started = await page.textContent("#note");
  await page.waitForTimeout(1000);
  await page.click("#stopAll");
  await page.waitForFunction(() => /stop all: .*frames/.test(document.getElementById("note").textContent), null, { timeout: 60000 });
  const stopped = await page.textContent("#note");
  await page.waitForFunction(() => document.querySelectorAll("#recordings a").length > 0, null, { timeout: 60000 });
  const listed = await page.$$eval("#recordings a", (links) => links.map((a) => ({ file: a.textContent, href: a.getAttribute("href") })));
  // The download link serves the file.
  const download = await page.evaluate(async (href) => {
    const r = await fetch(href);
    return { status: r.status, bytes: (await r.arrayBuffer()).byteLength, type: r.headers.get("content-type") };
  }, listed[0].href);
  const stats = await page.evaluate(() => ({ ...window.viewer.stats }));
  await page.screenshot({ path: `${out}/viewer-3.png` });
  await browser.close();
  return { changedPixels: changed, hand1, hand2, hands, started, stopped, listed, download, stats, errors, hovered };
});
