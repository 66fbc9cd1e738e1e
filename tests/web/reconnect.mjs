// The viewer while the bridge is down and once it is back: the test stops the
// bridge when this script writes DIR/stop and starts it again on the same port
// when it writes DIR/start. While down, every row must say it is not live (no
// rate); once connected again, no error from the outage stays.
// Usage: node reconnect.mjs --url URL --out DIR --performer NAME --dir DIR
import { writeFileSync } from "node:fs";
import { args, launch, openPage, run } from "./browser.mjs";

const { url, out, performer, dir } = args();

/// The connection, the note and the performer's row as the page shows them.
const seen = (page) => page.evaluate((name) => {
  const row = document.querySelector(`.performer[data-name="${name}"]`);
  const note = document.getElementById("note");
  return {
    connection: document.getElementById("connection").textContent,
    note: note.textContent,
    noteIsError: note.classList.contains("error"),
    row: row.className,
    facts: row.querySelector(".facts").textContent,
  };
}, performer);

run(async () => {
  const browser = await launch();
  const { page, errors } = await openPage(browser, url);
  const live = () => page.waitForFunction((name) => {
    const row = document.querySelector(`.performer[data-name="${name}"]`);
    return row !== null && /\b[1-9]\d* Hz/.test(row.textContent);
  }, performer, { timeout: 60000 });
  await live();
  const before = await seen(page);
  writeFileSync(`${dir}/stop`, "");
  await page.waitForFunction(() => document.getElementById("connection").textContent !== "connected",
    null, { timeout: 60000 });
  // The recordings are asked for every 3 s: wait until that has failed once.
  await page.waitForFunction(() => document.getElementById("note").classList.contains("error"),
    null, { timeout: 60000 });
  await page.waitForTimeout(1500); // a rate measured and the rows refreshed meanwhile
  const down = await seen(page);
  await page.screenshot({ path: `${out}/reconnect-down.png` });
  writeFileSync(`${dir}/start`, "");
  await page.waitForFunction(() => document.getElementById("connection").textContent === "connected",
    null, { timeout: 60000 });
  await live();
  const back = await seen(page);
  await browser.close();
  // A page whose bridge is gone logs the failed requests: those are expected here.
  const unexpected = errors.filter((e) => !/ERR_CONNECTION_REFUSED|WebSocket connection/.test(e));
  return { before, down, back, errors: unexpected, allErrors: errors };
});
