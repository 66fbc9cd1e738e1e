"""A VMC sender written with python-osc, an OSC implementation nobody on this
project wrote: it reads frames (Unity-space bone transforms and blend values) from
a JSON file and sends each as one OSC bundle, as VSeeFace-style senders do.

usage: vmc_send.py FRAMES.json HOST PORT [SECONDS_BETWEEN_FRAMES]
"""

import json
import sys
import time

from pythonosc import osc_bundle_builder, osc_message_builder, udp_client


def message(address, args):
    builder = osc_message_builder.OscMessageBuilder(address=address)
    for value in args:
        if isinstance(value, str):
            builder.add_arg(value, arg_type="s")
        elif isinstance(value, int):
            builder.add_arg(value, arg_type="i")
        else:
            builder.add_arg(float(value), arg_type="f")
    return builder.build()


def main():
    frames_path, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    pause = float(sys.argv[4]) if len(sys.argv) > 4 else 0.002
    with open(frames_path) as f:
        frames = json.load(f)
    client = udp_client.SimpleUDPClient(host, port)
    for frame in frames:
        bundle = osc_bundle_builder.OscBundleBuilder(osc_bundle_builder.IMMEDIATELY)
        bundle.add_content(message("/VMC/Ext/OK", [1]))
        bundle.add_content(message("/VMC/Ext/T", [frame["t"]]))
        bundle.add_content(message("/VMC/Ext/Root/Pos", ["root", 0, 0, 0, 0, 0, 0, 1]))
        for bone in frame["bones"]:
            bundle.add_content(message("/VMC/Ext/Bone/Pos", bone))
        for name, value in frame.get("blends", []):
            bundle.add_content(message("/VMC/Ext/Blend/Val", [name, value]))
        bundle.add_content(message("/VMC/Ext/Blend/Apply", []))
        client.send(bundle.build())
        time.sleep(pause)
    print(f"sent {len(frames)} frames")


if __name__ == "__main__":
    main()
