"""Summarize an Autobahn|Testsuite fuzzingclient report (index.json).

Usage: summarize.py REPORT_DIR MODE UNIMPLEMENTED
  MODE: the --cases value of run.sh (all, core, compression or patterns)
  UNIMPLEMENTED: fail (ws-echo ran with --compression) or skip
Runs under Python 2.7 (the wstest venv) and Python 3.
Prints per-behavior counts, the failing / UNIMPLEMENTED / NON-STRICT case
ids, details of failing cases, and a closing "N passed, N failed" line.
Exit status: 0 if no case failed, 1 otherwise.
"""
from __future__ import print_function

import io
import json
import os
import sys

ACCEPTABLE = ("OK", "NON-STRICT", "INFORMATIONAL")
MAX_DETAILS = 25  # failing cases printed with expected/received detail

try:
    STRING_TYPES = (str, unicode)  # Python 2
except NameError:
    STRING_TYPES = (str,)


def case_key(case_id):
    return tuple(int(p) if p.isdigit() else p for p in case_id.split("."))


def short(value, limit=300):
    text = value if isinstance(value, STRING_TYPES) else json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "... (%d chars)" % len(text)


def load(path):
    with io.open(path, encoding="utf-8") as f:
        return json.load(f)


def main(report_dir, mode, unimplemented):
    index_path = os.path.join(report_dir, "index.json")
    if not os.path.exists(index_path):
        print("error: no report at %s (wstest did not finish?)" % index_path)
        return 1
    index = load(index_path)
    if not index:
        print("error: %s lists no agent" % index_path)
        return 1
    # UNIMPLEMENTED (permessage-deflate declined in 12.*/13.*) is a failure
    # unless ws-echo ran without --compression; then it is reported as skipped.
    unimpl_fails = unimplemented == "fail"

    passed, failed, skipped, nonstrict = [], [], [], []
    counts, close_counts = {}, {}
    for agent in sorted(index):
        cases = index[agent]
        for cid in sorted(cases, key=case_key):
            res = cases[cid]
            b, bc = res.get("behavior"), res.get("behaviorClose")
            counts[b] = counts.get(b, 0) + 1
            close_counts[bc] = close_counts.get(bc, 0) + 1
            entry = (agent, cid, b, bc, res.get("reportfile"))
            if b in ACCEPTABLE and bc in ACCEPTABLE:
                passed.append(entry)
                if "NON-STRICT" in (b, bc):
                    nonstrict.append(entry)
            elif "UNIMPLEMENTED" in (b, bc) and not unimpl_fails and \
                    all(x in ACCEPTABLE + ("UNIMPLEMENTED",) for x in (b, bc)):
                skipped.append(entry)
            else:
                failed.append(entry)

    def fmt(counter):
        return ", ".join("%s=%d" % (k, counter[k]) for k in sorted(counter, key=str))

    total = len(passed) + len(failed) + len(skipped)
    print("Autobahn fuzzingclient report: %s (%d cases, mode %s)" % (report_dir, total, mode))
    print("  behavior:      " + fmt(counts))
    print("  behaviorClose: " + fmt(close_counts))

    def listing(title, entries):
        if not entries:
            return
        print("%s (%d):" % (title, len(entries)))
        if len(entries) <= 30:
            for agent, cid, b, bc, _ in entries:
                print("  %-10s behavior=%-14s behaviorClose=%s" % (cid, b, bc))
            return
        sections = {}  # long lists are collapsed per top-level section
        for entry in entries:
            sections.setdefault(entry[1].split(".")[0], []).append(entry[1])
        for sec in sorted(sections, key=int):
            ids = sections[sec]
            print("  %s.*: %d cases (%s .. %s)" % (sec, len(ids), ids[0], ids[-1]))

    listing("NON-STRICT (accepted)", nonstrict)
    listing("UNIMPLEMENTED (skipped: ws-echo ran without --compression)", skipped)
    listing("FAILED", failed)

    for agent, cid, b, bc, reportfile in failed[:MAX_DETAILS]:
        path = os.path.join(report_dir, reportfile or "")
        if not reportfile or not os.path.exists(path):
            continue
        r = load(path)
        print("--- case %s: %s" % (cid, short(r.get("description", ""), 160)))
        print("    result:        %s" % short(r.get("result", "")))
        print("    resultClose:   %s" % short(r.get("resultClose", "")))
        print("    expected:      %s" % short(r.get("expected")))
        print("    received:      %s" % short(r.get("received")))
        print("    expectedClose: %s" % short(r.get("expectedClose")))
        print("    close: remote code=%s reason=%s, wasClean=%s, droppedByMe=%s" % (
            r.get("remoteCloseCode"), json.dumps(r.get("remoteCloseReason")),
            r.get("wasClean"), r.get("droppedByMe")))
    if len(failed) > MAX_DETAILS:
        print("(details shown for the first %d failing cases; see %s)" % (
            MAX_DETAILS, os.path.join(report_dir, "index.html")))

    line = "%d passed, %d failed" % (len(passed), len(failed))
    if skipped:
        line += ", %d skipped" % len(skipped)
    print(line)
    return 1 if failed or total == 0 else 0


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[3] not in ("fail", "skip"):
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3]))
