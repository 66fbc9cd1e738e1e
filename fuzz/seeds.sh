#!/usr/bin/env bash
# Writes the fuzz targets' seeds (fuzz/corpus/TARGET/) from what the project's own
# tools send and write on real motion: VMC and lab OSC datagrams of the built-in
# lab19 capture (send, simulate), VRChat tracker datagrams as python-osc builds
# them, the WebSocket examples of docs/websocket.md, NATS pose and source payloads
# built from docs/nats.md's layout, small .vrma and
# EXT_skeleton_humanoid takes (convert), the skeleton files in config/, a journal
# left by a killed recording. Run from the repository after `cargo build`.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/debug/mocap-bridge
out=fuzz/corpus
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"/{vmc,osc,vrchat,lab_osc,websocket,nats,bvh,gltf,vrma,ext_humanoid,skeleton_json,journal}

# Datagrams on a UDP port: the first N, each into its own file.
capture() { # port count prefix
    python3 - "$@" <<'PY'
import socket, sys
port, count, prefix = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", port)); s.settimeout(10)
for i in range(count):
    data, _ = s.recvfrom(65536)
    open(f"{prefix}-{i}.bin", "wb").write(data)
PY
}
capture 47901 4 "$out/vmc/send" & sleep 0.5
"$bin" send --to 127.0.0.1:47901 --fast --loops 1 >/dev/null; wait
capture 47902 3 "$out/lab_osc/simulate" & sleep 0.5
"$bin" simulate --to 127.0.0.1:47902 --fast --loops 1 >/dev/null; wait
cp "$out/vmc/send-0.bin" "$out/osc/vmc.bin"
cp "$out/lab_osc/simulate-0.bin" "$out/osc/lab.bin"

# NATS payloads written from docs/nats.md's tables: a pose with bones, a preset, a
# custom expression and lookAt; a bare one; a bundle of two; a skeleton source and
# a devices one.
python3 - "$out/nats" <<'PY'
import math, struct, sys
out = sys.argv[1]
def name(s):
    b = s.encode()
    return bytes([len(b)]) + b
def pose(performer, seq, time, bones, presets, customs, look):
    mask = sum(1 << i for i, _ in bones)
    b = b"MBPO" + bytes([1, 1 if look else 0]) + name(performer)
    b += struct.pack("<QdQ", seq, time, mask) + struct.pack("<4f", 0.1, 0.93, -0.2, 0.95)
    for _, q in sorted(bones):
        b += struct.pack("<4f", *q)
    b += struct.pack("<I", sum(1 << i for i, _ in presets))
    for _, w in sorted(presets):
        b += struct.pack("<f", w)
    b += bytes([len(customs)])
    for n, w in customs:
        b += name(n) + struct.pack("<f", w)
    if look:
        b += struct.pack("<2f", *look)
    return b
turn = (0.0, math.sin(0.2), 0.0, math.cos(0.2))
open(f"{out}/pose.bin", "wb").write(pose("alice", 42, 1.25, [(0, turn), (18, (0, 0, 0.5, math.sqrt(0.75)))], [(0, 0.75)], [("tongueOut", 0.5)], (0.2, -0.1)))
open(f"{out}/pose-bare.bin", "wb").write(pose("b", 1, 0.0, [], [], [], None))
def bundle(*poses):
    b = b"MBPB" + bytes([1]) + struct.pack("<H", len(poses))
    for p in poses:
        b += struct.pack("<I", len(p)) + p
    return b
open(f"{out}/bundle.bin", "wb").write(bundle(pose("alice", 42, 1.25, [(0, turn)], [], [], None), pose("b", 7, 0.5, [], [(0, 0.75)], [], (0.2, -0.1))))
def source(performer, skeleton, points):
    present = sum(1 << i for i, _ in points)
    b = b"MBSR" + bytes([1]) + name(performer) + struct.pack("<Q", 7) + name(skeleton)
    b += bytes([max(i for i, _ in points) + 1]) + present.to_bytes(16, "little")
    for _, p in sorted(points):
        b += struct.pack("<3f", *p)
    return b
open(f"{out}/source-skeleton.bin", "wb").write(source("bob", "lab19", [(0, (0, 1, 0)), (2, (0.1, 1.2, 0))]))
open(f"{out}/source-devices.bin", "wb").write(source("vr", "", [(0, (0, 1.6, 0)), (1, (-0.3, 1.2, 0.2)), (2, (0.3, 1.2, 0.2))]))
PY

PYTHONPATH=target/pydeps python3 - "$out/vrchat" <<'PY'
import sys
from pythonosc.osc_message_builder import OscMessageBuilder
from pythonosc.osc_bundle_builder import OscBundleBuilder, IMMEDIATELY
out = sys.argv[1]
def message(address, *floats):
    b = OscMessageBuilder(address=address)
    for f in floats: b.add_arg(float(f))
    return b.build()
messages = [message("/tracking/trackers/head/position", 0, 1.6, 0),
            message("/tracking/trackers/head/rotation", 0, 10, 0)]
for n in range(1, 9):
    messages.append(message(f"/tracking/trackers/{n}/position", 0.1 * n, 0.9, 0.05))
    messages.append(message(f"/tracking/trackers/{n}/rotation", 5, 10 * n, 0))
open(f"{out}/bare-position.bin", "wb").write(messages[2].dgram)
open(f"{out}/bare-rotation.bin", "wb").write(messages[3].dgram)
bundle = OscBundleBuilder(IMMEDIATELY)
for m in messages: bundle.add_content(m)
open(f"{out}/bundle.bin", "wb").write(bundle.build().dgram)
PY

# The JSON messages in the WebSocket doc's examples.
python3 - docs/websocket.md "$out/websocket" <<'PY'
import json, re, sys
text, out = open(sys.argv[1]).read(), sys.argv[2]
n = 0
for block in re.findall(r"```json\n(.*?)```", text, re.S):
    try:
        value = json.loads(block)
    except ValueError:
        continue
    if isinstance(value, dict) and "type" in value:
        open(f"{out}/doc-{n}.json", "w").write(json.dumps(value))
        n += 1
PY

"$bin" convert -o "$work/small.vrma" --fps 10 >/dev/null
cp "$work/small.vrma" "$out/vrma/lab19-10fps.vrma"
cp "$work/small.vrma" "$out/gltf/lab19-10fps.vrma"
"$bin" convert -o "$work/small.glb" --fps 10 >/dev/null
cp "$work/small.glb" "$out/ext_humanoid/lab19-10fps.glb"
cp "$work/small.glb" "$out/gltf/ext-lab19-10fps.glb"
# A skinned, animated glTF with its keys and bind matrices meshopt-compressed, as
# gltfpack writes them (tests/interop's pinned gltfpack, on the assets' RiggedSimple).
node tests/interop/node_modules/gltfpack/cli.js -cc -i ../shared/assets/gltf/RiggedSimple.glb \
    -o "$out/gltf/rigged-simple-meshopt.glb" >/dev/null
cp config/skeletons/*.json "$out/skeleton_json/"
# A small BVH in the shape capture systems write (root with position channels, a
# leg, a spine, an arm, end sites), three frames.
cat > "$out/bvh/small.bvh" <<'BVH'
HIERARCHY
ROOT Hips
{
  OFFSET 0.00 0.00 0.00
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT LeftUpLeg
  {
    OFFSET 9.0 -3.0 0.0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT LeftLeg
    {
      OFFSET 0.0 -42.0 0.0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 0.0 -40.0 0.0
      }
    }
  }
  JOINT Spine
  {
    OFFSET 0.0 10.0 0.0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT LeftArm
    {
      OFFSET 17.0 30.0 0.0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 28.0 0.0 0.0
      }
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.0083333
0.0 92.0 0.0 0.0 0.0 0.0 5.0 0.0 0.0 -10.0 0.0 0.0 2.0 0.0 0.0 -80.0 0.0 0.0
0.1 92.1 0.5 1.0 0.0 0.0 7.5 0.0 0.0 -12.0 0.0 0.0 2.5 0.0 0.0 -79.0 1.0 0.0
0.2 92.2 1.0 2.0 0.0 0.0 10.0 0.0 0.0 -14.0 0.0 0.0 3.0 0.0 0.0 -78.0 2.0 0.0
BVH

# A journal left behind by a killed recording (its first frames).
cat > "$work/bridge.json" <<'JSON'
{"vmcInputs": [], "labInputs": [], "vrchatInputs": [], "websocket": null, "vmcOutputs": [],
 "status": {"logIntervalS": 0, "monitorIntervalS": 0}, "recorder": {"dir": "takes"}}
JSON
(cd "$work" && "$OLDPWD/$bin" run --config bridge.json --replay "$OLDPWD/recordings/walk-and-wave.vrma" --record --quiet >/dev/null 2>&1 & echo $! >"$work/pid")
sleep 0.6
kill -9 "$(cat "$work/pid")"
head -c 12000 "$work"/takes/*.journal >"$out/journal/killed.journal"
echo "seeds in $out: $(find "$out" -type f | wc -l) files"
