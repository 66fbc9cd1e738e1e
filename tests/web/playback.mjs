// The viewer's take player: plays TAKE from the recordings list on an avatar,
// checks that it runs while playing and stops when paused, then scrubs to each
// of TIMES (the scrub bar, as a user drags it) and reads the normalized rotation
// of every bone of the avatar (three-vrm's normalized bones, as the
// three-vrm-animation clip left them).
// Usage: node playback.mjs --url URL --out DIR --take FILE --times T1,T2,...
import { args, launch, openPage, run } from "./browser.mjs";

const { url, out, take, times } = args();

run(async () => {
  const browser = await launch();
  const { page, errors } = await openPage(browser, url);
  const item = page.locator("#recordings li", { hasText: take });
  await item.getByRole("button", { name: "Play" }).click({ timeout: 60000 });
  await page.waitForFunction(() => window.viewer.player().isOpen, null, { timeout: 60000 });
  const time = () => page.evaluate(() => window.viewer.player().action.time);
  // Playing at twice the speed: the take's time runs.
  await page.selectOption("#playSpeed", "2");
  const t0 = await time();
  await page.waitForTimeout(500);
  const t1 = await time();
  await page.screenshot({ path: `${out}/playback.png` });
  // Paused: it stays.
  await page.click("#playPause");
  const paused = await page.textContent("#playPause");
  const t2 = await time();
  await page.waitForTimeout(300);
  const t3 = await time();
  const samples = [];
  for (const t of times.split(",").map(Number)) {
    await page.evaluate((value) => {
      const bar = document.getElementById("playTime");
      bar.value = String(value);
      bar.dispatchEvent(new Event("input", { bubbles: true }));
    }, t);
    samples.push(await page.evaluate(() => {
      const p = window.viewer.player();
      return { time: p.action.time, metaVersion: p.avatar.vrm.meta.metaVersion, rotations: p.rotations() };
    }));
  }
  await browser.close();
  return { playing: [t0, t1], paused: [t2, t3], pauseButton: paused, samples, errors };
});
