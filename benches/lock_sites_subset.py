#!/usr/bin/env python3
"""No lock-site mapping lost: every site the OLD `structs --json` report maps
exactly is mapped exactly in the NEW one, to the same members (the NEW may list
more). Prints the counts of both and, per reason, the sites newly mapped; exits 1
and lists the first losses when any exact mapping is missing or changed.

Each loss is classed, to read (the exit status stays 1 for all of them):
  lost     - no longer mapped exactly;
  coarser  - the new list starts at a record the old one held inside its first
             (`refcount_struct.refs.counter` for `neighbour.refcnt.refs.counter`):
             the outer record dropped, the word the same;
  other    - the new list starts at a record the old one did not name: the same
             word through an overlaying record (`folio._refcount` for
             `page._refcount`), a leaf the old list left out, or a wrong name;
             check these by hand.

A site the OLD report lists that the NEW one does not, when it is a `cmpxchg` or
`xadd` without `lock` (no bus lock: since 2026-11-27 a plain store, not a lock
site), is counted apart, not as a loss.

Usage: benches/lock_sites_subset.py OLD.json NEW.json
"""
import json
import sys
from collections import Counter


def sites(path):
    report = json.load(open(path))
    stats = report["lock_sites"]
    return stats, {s["address"]: s for s in stats["list"]}


def record(member):
    return member.split(".", 1)[0]


def kind(old, new):
    """lost, coarser or other (see the module's text)."""
    if new is None or new["outcome"] != "exact" or not new.get("members"):
        return "lost"
    before, after = old.get("members", []), new["members"]
    if before and before[0] not in after:
        # The records the old list names inside its first, and the members on
        # the path of its last (where the old report cut the list at 3).
        held = {record(m) for m in before[1:]}
        held |= {p.split("[")[0] for p in before[-1].split(".")[1:]}
        if record(after[0]) in held:
            return "coarser"
    return "other"


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
    unlocked = Counter()
    for address, s in old.items():
        n = new.get(address)
        if n is None and s["op"] in ("cmpxchg", "cmpxchg8b", "cmpxchg16b", "xadd"):
            unlocked[s["outcome"]] += 1
            continue
        if s["outcome"] != "exact":
            continue
        if n is None or n["outcome"] != "exact" or not set(s.get("members", [])) <= set(n.get("members", [])):
            lost.append((s, n))
    gained = Counter(old[a]["outcome"] for a, n in new.items()
                     if n["outcome"] == "exact" and a in old and old[a]["outcome"] != "exact")
    if unlocked:
        print(f"no longer lock sites (cmpxchg/xadd without lock), by their old outcome: "
              f"{json.dumps(dict(sorted(unlocked.items())))}")
    print(f"newly exact, by their old reason: {json.dumps(dict(sorted(gained.items())))}")
    if lost:
        classed = sorted(((kind(s, n), s, n) for s, n in lost),
                         key=lambda c: (c[0], c[1]["address"]))
        classes = Counter(c[0] for c in classed)
        print(f"LOST: {len(lost)} exact mappings of the old report are missing or changed "
              f"{json.dumps(dict(sorted(classes.items())))}:")
        for k, s, n in classed[:60]:
            print(f"  {k:8} {s['address']:#x} {s['function']} {s['op']}: "
                  f"{s.get('members')} -> {n and (n['outcome'], n.get('members'))}")
        return 1
    kept = sum(1 for a, s in old.items() if s["outcome"] == "exact" and a in new)
    print(f"kept: all {kept} exact mappings of the old report's lock sites that are still lock sites")
    return 0


if __name__ == "__main__":
    sys.exit(main())
