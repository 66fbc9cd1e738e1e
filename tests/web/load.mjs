// The viewer under load: PERFORMERS performers streaming at 120 Hz. Waits until
// every performer shows on its avatar, then counts for SECONDS twice: with the
// avatars off (stick figures only), then on. Each count: poses received and
// drawn, display frames, poses this page never got (seq gaps), the time a frame
// takes to pose everyone and to hand the stage to WebGL, and the bridge's own
// counters for its WebSocket clients (poses it had to skip for a client that
// fell behind).
// Usage: node load.mjs --url http://127.0.0.1:PORT/ --out DIR --performers 16 --seconds 5
import { args, launch, openPage, run } from "./browser.mjs";

const { url, out, performers, seconds } = args();

const snapshot = (page) => page.evaluate(async () => {
  const v = window.viewer;
  const status = await v.status();
  const clients = status.outputs.find((o) => o.name.endsWith("clients"));
  const output = status.outputs.find((o) => o.name.startsWith("websocket") && !o.name.endsWith("clients"));
  return {
    at: performance.now(),
    stats: { ...v.stats },
    performers: Object.fromEntries([...v.performers.values()].map((p) => [p.name, { received: p.received, gaps: p.gaps }])),
    avatars: [...v.performers.values()].filter((p) => p.avatar !== null && p.group.visible).length,
    clientsSent: clients.packets,
    clientDrops: clients.drops,
    outputDrops: output.drops,
    outputFrames: output.frames,
  };
});

/// Counts for `seconds` and saves a screenshot as `shot`.
async function measure(page, shot) {
  const before = await snapshot(page);
  await page.waitForTimeout(Number(seconds) * 1000);
  const after = await snapshot(page);
  await page.screenshot({ path: `${out}/${shot}.png` });
  const per = {};
  for (const [name, p] of Object.entries(after.performers)) {
    const b = before.performers[name] || { received: 0, gaps: 0 };
    per[name] = { received: p.received - b.received, gaps: p.gaps - b.gaps };
  }
  const d = (k) => after.stats[k] - before.stats[k];
  const frames = Math.max(1, d("rendered"));
  return {
    seconds: (after.at - before.at) / 1000,
    received: d("received"),
    rendered: d("rendered"),
    posesDrawn: d("posesDrawn"),
    skipped: d("skipped"),
    decodeErrors: after.stats.decodeErrors,
    meanDelayMs: d("sumDelayMs") / Math.max(1, d("posesDrawn")),
    poseMsPerFrame: d("sumPoseMs") / frames,
    renderMsPerFrame: d("sumRenderMs") / frames,
    performers: per,
    avatars: after.avatars,
    clientsSent: after.clientsSent - before.clientsSent,
    clientDrops: after.clientDrops - before.clientDrops,
    outputDrops: after.outputDrops - before.outputDrops,
    outputFrames: after.outputFrames - before.outputFrames,
  };
}

run(async () => {
  const browser = await launch();
  const { page, errors } = await openPage(browser, url);
  await page.waitForFunction((n) => window.viewer && window.viewer.performers.size >= n &&
    [...window.viewer.performers.values()].every((p) => p.received > 0 && p.avatar !== null),
  Number(performers), { timeout: 60000 });
  await page.uncheck("#avatarsShown");
  await page.waitForTimeout(500);
  const skeletons = await measure(page, "viewer-load");
  await page.check("#avatarsShown");
  await page.waitForTimeout(500);
  const avatars = await measure(page, "viewer-load-avatars");
  await browser.close();
  return { skeletons, avatars, errors };
});
