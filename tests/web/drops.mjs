// Files dropped on the viewer. With two performers, ONE and TWO: the mannequin
// dropped on ONE's row as row.vrm, then on the view as view.vrm: ONE keeps
// row.vrm, TWO takes view.vrm. Then bad files dropped on the view (random bytes,
// a .txt, a .vrm cut short, a VRM whose humanoid names a node it lacks), each
// noted in one plain line, and nothing drawn changes.
// Usage: node drops.mjs --url URL --out DIR --one NAME --two NAME
import { args, dropFile, launch, openPage, run } from "./browser.mjs";

const { url, out, one, two } = args();

/// The mannequin with its humanoid's hips naming node 9999 (a GLB rebuilt).
function missingNode(glb) {
  const jsonLength = glb.readUInt32LE(12);
  const json = JSON.parse(glb.subarray(20, 20 + jsonLength).toString("utf8"));
  json.extensions.VRMC_vrm.humanoid.humanBones.hips.node = 9999;
  let text = Buffer.from(JSON.stringify(json), "utf8");
  text = Buffer.concat([text, Buffer.alloc((4 - (text.length % 4)) % 4, 0x20)]);
  const rest = glb.subarray(20 + jsonLength);
  const header = Buffer.alloc(20);
  header.writeUInt32LE(0x46546c67, 0);
  header.writeUInt32LE(2, 4);
  header.writeUInt32LE(20 + text.length + rest.length, 8);
  header.writeUInt32LE(text.length, 12);
  header.writeUInt32LE(0x4e4f534a, 16);
  return Buffer.concat([header, text, rest]);
}

/// 4 KiB of deterministic noise.
function noise() {
  const bytes = Buffer.alloc(4096);
  let x = 12345;
  for (let i = 0; i < bytes.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    bytes[i] = x >>> 24;
  }
  return bytes;
}

run(async () => {
  const mannequin = Buffer.from(await (await fetch(new URL("avatars/mannequin.vrm", url))).arrayBuffer());
  const browser = await launch();
  const { page, errors } = await openPage(browser, url);
  const fileOf = (name) => page.evaluate((n) => {
    const a = window.viewer.avatar(n);
    return a && a.file;
  }, name);
  const drawnOn = (name, file) => page.waitForFunction(([n, f]) => {
    const a = window.viewer.avatar(n);
    return a !== null && a.file === f;
  }, [name, file], { timeout: 60000 });
  await drawnOn(one, "mannequin.vrm");
  await drawnOn(two, "mannequin.vrm");
  await dropFile(page, `.performer[data-name="${one}"]`, "row.vrm", mannequin);
  await drawnOn(one, "row.vrm");
  await dropFile(page, "#view", "view.vrm", mannequin);
  await drawnOn(two, "view.vrm");
  await page.waitForTimeout(1000); // any other load has finished too
  const afterDrops = { [one]: await fileOf(one), [two]: await fileOf(two), note: await page.textContent("#note") };
  const bad = [
    ["noise.vrm", noise()],
    ["notes.txt", Buffer.from("a note, not a model\n")],
    ["cut.vrm", mannequin.subarray(0, mannequin.length >> 1)],
    ["missing-node.vrm", missingNode(mannequin)],
  ];
  const notes = {};
  for (const [name, bytes] of bad) {
    await dropFile(page, "#view", name, bytes);
    await page.waitForFunction((n) => document.getElementById("note").textContent.startsWith(`${n}:`),
      name, { timeout: 60000 });
    notes[name] = await page.evaluate(() => {
      const note = document.getElementById("note");
      return { text: note.textContent, error: note.classList.contains("error") };
    });
  }
  const afterBad = { [one]: await fileOf(one), [two]: await fileOf(two) };
  await page.screenshot({ path: `${out}/drops.png` });
  await browser.close();
  return { afterDrops, notes, afterBad, errors };
});
