#!/usr/bin/env python3
"""No lock-site mapping lost: every site the OLD `structs --json` report maps
exactly is mapped exactly in the NEW one, to the same members (the NEW may list
more). Prints the counts of both and, per reason, the sites newly mapped; exits 1
and lists the first losses when any exact mapping is missing or changed.

Usage: benches/lock_sites_subset.py OLD.json NEW.json
"""
import json
import sys
from collections import Counter


def sites(path):
    report = json.load(open(path))
    stats = report["lock_sites"]
    return stats, {s["address"]: s for s in stats["list"]}


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    old_stats, old = sites(sys.argv[1])
    new_stats, new = sites(sys.argv[2])
    for label, stats in (("old", old_stats), ("new", new_stats)):
        unmapped = sum(stats["unmapped"].values())
        print(f"{label}: {stats['sites']} sites, {stats['exact']} exact, "
              f"{stats['inferred']} inferred, {unmapped} unmapped "
              f"{json.dumps(stats['unmapped'], sort_keys=True)}")
    lost = []
    for address, s in old.items():
        if s["outcome"] != "exact":
            continue
        n = new.get(address)
        if n is None or n["outcome"] != "exact" or not set(s.get("members", [])) <= set(n.get("members", [])):
            lost.append((s, n))
    gained = Counter(old[a]["outcome"] for a, n in new.items()
                     if n["outcome"] == "exact" and a in old and old[a]["outcome"] != "exact")
    print(f"newly exact, by their old reason: {json.dumps(dict(sorted(gained.items())))}")
    if lost:
        print(f"LOST: {len(lost)} exact mappings of the old report are missing or changed:")
        for s, n in lost[:20]:
            print(f"  {s['address']:#x} {s['function']} {s['op']}: {s.get('members')} -> "
                  f"{n and (n['outcome'], n.get('members'))}")
        return 1
    print(f"kept: all {sum(1 for s in old.values() if s['outcome'] == 'exact')} exact mappings of the old report")
    return 0


if __name__ == "__main__":
    sys.exit(main())
