// A performer that goes leaves the viewer's 3D view, and comes back with it: the
// page itself sends `trackers` frames for GHOST over a WebSocket of its own
// beside the replay LIVE, stops until the bridge drops GHOST (its row turns
// "gone"), records it while it is gone (its take waits for its next frame), then
// sends again.
// Usage: node gone.mjs --url URL --out DIR --performer LIVE --ghost GHOST
import { args, launch, openPage, run } from "./browser.mjs";

const { url, out, performer, ghost } = args();

/// Starts (or stops) sending a still VR performer named `name` at 30 Hz.
function sendTrackers([name, on]) {
  if (!on) {
    clearInterval(window.__ghostTimer);
    return;
  }
  const socket = window.__ghostSocket || new WebSocket(`ws://${location.host}/?poses=none`);
  window.__ghostSocket = socket;
  const device = (x, y, z) => ({ position: [x, y, z], rotation: [0, 0, 0, 1] });
  window.__ghostTimer = setInterval(() => {
    if (socket.readyState !== WebSocket.OPEN) return;
    socket.send(JSON.stringify({
      type: "trackers", performer: name, time: performance.now() / 1000,
      head: device(0, 1.6, 0), leftHand: device(0.25, 0.9, 0.05), rightHand: device(-0.25, 0.9, 0.05),
    }));
  }, 33);
}

/// What the page shows of both performers now.
const seen = (page) => page.evaluate(([live, gone]) => {
  const row = (name) => document.querySelector(`.performer[data-name="${name}"]`);
  const group = (name) => window.viewer.performers.get(name).group;
  return {
    live: window.viewer.inView(live),
    ghost: window.viewer.inView(gone),
    ghostAvatarVisible: group(gone) ? group(gone).visible : null,
    ghostRow: row(gone).className,
    ghostFacts: row(gone).querySelector(".facts").textContent,
  };
}, [performer, ghost]);

run(async () => {
  const browser = await launch();
  const { page, errors } = await openPage(browser, url);
  const inView = (name, want) => page.waitForFunction(([n, w]) => window.viewer.inView(n) === w,
    [name, want], { timeout: 60000 });
  const rowGone = (want) => page.waitForFunction(([n, w]) => {
    const row = document.querySelector(`.performer[data-name="${n}"]`);
    return row !== null && row.classList.contains("gone") === w;
  }, [ghost, want], { timeout: 60000 });
  await page.evaluate(sendTrackers, [ghost, true]);
  await inView(performer, true);
  await inView(ghost, true);
  // Wait for its avatar too, so the check below covers the avatar.
  await page.waitForFunction((n) => window.viewer.performers.get(n).group !== null, ghost, { timeout: 60000 });
  const before = await seen(page);
  await page.evaluate(sendTrackers, [ghost, false]);
  await rowGone(true);
  await page.waitForTimeout(200); // a few frames drawn since
  const gone = await seen(page);
  await page.screenshot({ path: `${out}/gone.png` });
  // Recording it while it is gone arms its take; the note says so.
  await page.evaluate((n) => [...document.querySelectorAll(`.performer[data-name="${n}"] button`)]
    .find((b) => b.textContent === "Record").click(), ghost);
  await page.waitForFunction(() => document.getElementById("note").textContent.includes("next frame"),
    null, { timeout: 60000 });
  const recordNote = await page.evaluate(() => document.getElementById("note").textContent);
  await page.evaluate(sendTrackers, [ghost, true]);
  await rowGone(false);
  await inView(ghost, true);
  const back = await seen(page);
  await browser.close();
  return { before, gone, recordNote, back, errors };
});
