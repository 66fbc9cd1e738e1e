"""Reads a Prometheus text exposition from stdin with prometheus_client's own
parser (an implementation nobody on this project wrote), checks that every
histogram is well formed, and prints the samples as JSON for the test to compare:
{"types": {family: type}, "samples": [[name, {label: value}, value], ...]}.

Exits 1, saying why, on a malformed histogram or a text the parser refuses.
"""

import json
import math
import sys

from prometheus_client.parser import text_string_to_metric_families


def check_histogram(family):
    series = {}
    for s in family.samples:
        labels = {k: v for k, v in s.labels.items() if k != "le"}
        key = json.dumps(labels, sort_keys=True)
        entry = series.setdefault(key, {"buckets": [], "count": None, "sum": None})
        if s.name.endswith("_bucket"):
            entry["buckets"].append((float(s.labels["le"]), s.value))
        elif s.name.endswith("_count"):
            entry["count"] = s.value
        elif s.name.endswith("_sum"):
            entry["sum"] = s.value
    for key, entry in series.items():
        buckets = entry["buckets"]
        where = f"{family.name} {key}"
        if not buckets or buckets[-1][0] != math.inf:
            sys.exit(f"{where}: no +Inf bucket last")
        bounds = [b for b, _ in buckets]
        if bounds != sorted(bounds) or len(set(bounds)) != len(bounds):
            sys.exit(f"{where}: bucket bounds not strictly increasing: {bounds}")
        counts = [c for _, c in buckets]
        if any(b < a for a, b in zip(counts, counts[1:])):
            sys.exit(f"{where}: bucket counts not cumulative: {counts}")
        if entry["count"] is None or entry["sum"] is None:
            sys.exit(f"{where}: _count or _sum missing")
        if counts[-1] != entry["count"]:
            sys.exit(f"{where}: +Inf bucket {counts[-1]} != _count {entry['count']}")
        if entry["sum"] < 0:
            sys.exit(f"{where}: negative _sum")


def main():
    text = sys.stdin.read()
    types = {}
    samples = []
    for family in text_string_to_metric_families(text):
        types[family.name] = family.type
        if family.type == "histogram":
            check_histogram(family)
        for s in family.samples:
            samples.append([s.name, s.labels, s.value])
    print(json.dumps({"types": types, "samples": samples}))


main()
