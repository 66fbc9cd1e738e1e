"""A VRChat OSC tracker sender written with python-osc, an OSC implementation
nobody on this project wrote: every tick it sends the head and trackers 1 to 8,
position then rotation, each as a bare message in its own datagram, as VRChat's
"OSC Trackers" page documents (Unity axes, metres, Euler degrees).

usage: vrchat_send.py HOST PORT RATE_HZ SECONDS
prints: sent TICKS ticks MESSAGES messages
"""

import math
import sys
import time

from pythonosc import udp_client

# Where each device stands, Unity axes (left-handed, +Y up, +Z forward), metres.
REST = {
    "head": (0.0, 1.6, 0.0),
    "1": (0.0, 0.95, 0.0),  # hips
    "2": (-0.1, 0.08, 0.0),  # left foot
    "3": (0.1, 0.08, 0.0),  # right foot
    "4": (0.0, 1.3, 0.0),  # chest
    "5": (-0.1, 0.5, 0.05),  # left knee
    "6": (0.1, 0.5, 0.05),  # right knee
    "7": (-0.45, 1.1, 0.05),  # left elbow
    "8": (0.45, 1.1, 0.05),  # right elbow
}


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    rate, seconds = float(sys.argv[3]), float(sys.argv[4])
    client = udp_client.SimpleUDPClient(host, port)
    ticks = int(round(rate * seconds))
    start = time.perf_counter()
    messages = 0
    for tick in range(ticks):
        sway = 0.05 * math.sin(tick / rate * 2.0 * math.pi)
        for name, (x, y, z) in REST.items():
            address = f"/tracking/trackers/{name}"
            client.send_message(f"{address}/position", [x + sway, y, z])
            client.send_message(f"{address}/rotation", [0.0, 10.0 * sway, 0.0])
            messages += 2
        # Keep to the tick clock, not to the time sending took.
        wait = start + (tick + 1) / rate - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
    print(f"sent {ticks} ticks {messages} messages")


if __name__ == "__main__":
    main()
