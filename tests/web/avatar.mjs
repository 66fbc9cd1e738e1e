// The viewer's avatars: waits until PERFORMER is drawn on the avatar named FILE,
// then reads, SAMPLES times 150 ms apart, the pose the avatar shows and the world
// position of each of its bones (three-vrm's raw bones, `viewer.avatar`). With
// --pixels, counts the avatar's pixels (the stage drawn with and without it) and
// saves a screenshot as SHOT.png. With --drop PATH, drops that .vrm on the view
// (a drop event carrying the file, as a user's drag would), waits until the
// performer is drawn on it, and samples again.
// Usage: node avatar.mjs --url URL --out DIR --performer NAME --file NAME --samples N
//          [--pixels SHOT] [--drop PATH]
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { args, dropFile, launch, openPage, run } from "./browser.mjs";

const { url, out, performer, file, samples, pixels, drop } = args();

async function sample(page, name) {
  const seen = [];
  for (let i = 0; i < Number(samples); i++) {
    await page.waitForTimeout(150);
    const a = await page.evaluate((p) => window.viewer.avatar(p), performer);
    if (a.file !== name) throw new Error(`drawn on ${a.file}, not ${name}`);
    seen.push(a);
  }
  return seen;
}

const onAvatar = (page, name) => page.waitForFunction(([p, f]) => {
  const a = window.viewer && window.viewer.avatar(p);
  return a !== null && a.file === f;
}, [performer, name], { timeout: 60000 });

run(async () => {
  const browser = await launch();
  const { page, errors } = await openPage(browser, url);
  await onAvatar(page, file);
  const result = { samples: await sample(page, file), errors };
  if (pixels) {
    result.pixels = await page.evaluate((p) => window.viewer.avatarPixels(p), performer);
    await page.screenshot({ path: `${out}/${pixels}.png` });
  }
  if (drop) {
    const name = basename(drop);
    await dropFile(page, "#view", name, readFileSync(drop));
    await onAvatar(page, name);
    result.dropped = { file: name, samples: await sample(page, name) };
    result.note = await page.textContent("#note");
  }
  await browser.close();
  return result;
});
