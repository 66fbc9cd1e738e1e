#!/usr/bin/env node
// Refreshes the browser modules the viewer loads (three.js, @pixiv/three-vrm,
// @pixiv/three-vrm-animation) from npm, for the versions pinned in manifest.json
// beside this script, and checks or rewrites the sha256 of every file.
//
// manifest.json is the one place the versions are pinned. Each package lists the
// files taken from its npm tarball (paths inside the package) with their sha256,
// and the import-map entries the page gets (`imports`: specifier -> path inside
// the package). The files are kept here as `<name>/<path>` (`three/build/...`,
// `@pixiv/three-vrm/lib/...`), each package's LICENSE among them; the bridge embeds
// them (src/io/web/vendor.rs, whose unit test checks them against the hashes) and
// serves them under `/vendor/<name>@<version>/<path>`.
//
// Usage (from anywhere; needs node and npm, and the npm registry):
//   node src/io/web/vendor/refresh.mjs           fetch the pinned versions, copy the
//                                                 listed files here, write their hashes
//   node src/io/web/vendor/refresh.mjs --check   fetch and compare only: exit 1 when a
//                                                 file here or a pinned hash differs
//                                                 from what npm serves
// To move to another version, edit `version` in manifest.json and run it without
// --check; `cargo test --lib io::web::vendor` then checks the embedded files, and
// src/io/web/vendor.rs's table names every file (add a new one there too).

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const manifestPath = join(here, "manifest.json");
const check = process.argv.includes("--check");
const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

const temp = mkdtempSync(join(tmpdir(), "mocap-bridge-vendor-"));
const problems = [];
try {
  for (const pkg of manifest.packages) {
    const spec = `${pkg.name}@${pkg.version}`;
    const unpacked = join(temp, pkg.name.replace("/", "+"));
    mkdirSync(unpacked, { recursive: true });
    execFileSync("npm", ["pack", spec, "--silent", "--pack-destination", unpacked], { stdio: ["ignore", "ignore", "inherit"] });
    const tarball = readdirSync(unpacked).find((f) => f.endsWith(".tgz"));
    execFileSync("tar", ["xzf", join(unpacked, tarball), "-C", unpacked]);
    const fromNpm = join(unpacked, "package");
    const version = JSON.parse(readFileSync(join(fromNpm, "package.json"), "utf8")).version;
    if (version !== pkg.version) problems.push(`${spec}: npm gave version ${version}`);
    for (const file of Object.keys(pkg.files)) {
      const npmBytes = readFileSync(join(fromNpm, file));
      const hash = sha256(npmBytes);
      const vendored = join(here, pkg.name, file);
      if (check) {
        if (pkg.files[file] !== hash) problems.push(`${spec} ${file}: pinned sha256 ${pkg.files[file]}, npm's is ${hash}`);
        let ours = null;
        try {
          ours = readFileSync(vendored);
        } catch {
          problems.push(`${vendored}: missing`);
        }
        if (ours && sha256(ours) !== hash) problems.push(`${vendored}: differs from ${spec}'s ${file}`);
      } else {
        mkdirSync(dirname(vendored), { recursive: true });
        copyFileSync(join(fromNpm, file), vendored);
        pkg.files[file] = hash;
      }
    }
    console.log(`${spec}: ${Object.keys(pkg.files).length} files ${check ? "checked" : "copied"}`);
  }
  if (!check) writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + "\n");
} finally {
  rmSync(temp, { recursive: true, force: true });
}
if (problems.length > 0) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
