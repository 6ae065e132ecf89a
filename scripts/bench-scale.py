#!/usr/bin/env python3
"""Scale benchmark for lint, the static judge and the gate (issue 14).

Makes synthetic servers of N tools (descriptions of about 300 characters built from a shared
vocabulary, five parameters each), exports them with `tdqs-gate export` (so the exports are
real, hashed exports), then measures wall time and peak RSS (`/usr/bin/time -v`) of:

  lint           tdqs-gate lint --export A --fail-on never
  score static   tdqs-gate score --judge static --export A
  gate           tdqs-gate --base-export A --head-export B --judge static   (B: one tool changed),
                 then --check of its report, then the same gate with --full-report

and the size of the gate's JSON, Markdown and HTML report. Targets (issue 14): 1,000 tools, lint and
score each <= 1 s and <= 100 MB; 10,000 tools <= 10 s and <= 500 MB; the gate on two 10,000-tool
exports <= 15 s and <= 1 GB, with a report that grows with the change, not the server.

Build first:  cargo build --release --bin tdqs-gate   (or set GATE to a tdqs-gate binary)
Usage:        python3 scripts/bench-scale.py [N ...]      (default: 1000 10000)
              GATE=/path/to/tdqs-gate python3 scripts/bench-scale.py 1000
Prints one Markdown table row per measurement. Exit 0 even when a target is missed (the table
says so): this is a measurement, not a test.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GATE = os.path.abspath(os.environ.get("GATE", os.path.join(ROOT, "target", "release", "tdqs-gate")))

SERVER = r'''
import json, sys
n = int(sys.argv[1]); changed = int(sys.argv[2])
nouns = ["project", "issue", "branch", "commit", "pipeline", "job", "runner", "label",
         "milestone", "release", "wiki", "page", "note", "thread", "reaction", "member",
         "group", "token", "variable", "schedule", "artifact", "package", "tag", "deployment",
         "environment", "snippet", "webhook", "board", "epic", "iteration", "review", "file"]
verbs = [("get", "Get one"), ("list", "List the"), ("create", "Create a new"),
         ("update", "Update an existing"), ("delete", "Delete an existing"),
         ("search", "Search the")]
def tool(i):
    v, lead = verbs[i % len(verbs)]
    a = nouns[i % len(nouns)]
    b = nouns[(i // len(nouns)) % len(nouns)]
    name = f"{v}_{a}_{b}_{i}"
    desc = (f"{lead} {a} of a {b} (item {i}). Use this when you need the {a} record "
            f"for one {b}; for other {b} data use the matching list tool. Returns the {a} "
            f"as JSON with its id, state and timestamps; fails with an error when the {b} "
            f"is missing or you lack access. Limited to 100 results per page.")
    if i == changed:
        desc += " Changed in the head revision."
    props = {}
    for k, p in enumerate(["id", "scope", "state", "cursor", "per_page"]):
        props[f"{a}_{p}"] = {"type": "integer" if p == "per_page" else "string",
                             "description": f"The {a} {p} to use for this {b} request ({k})."}
    return {"name": name, "description": desc,
            "inputSchema": {"type": "object", "properties": props,
                            "required": [f"{a}_id"], "additionalProperties": False},
            "annotations": {"readOnlyHint": v in ("get", "list", "search")}}
tools = [tool(i) for i in range(n)]
PAGE = 1000
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    m = msg.get("method")
    if m == "initialize":
        res = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
               "serverInfo": {"name": "bench-scale", "version": "1"}}
    elif m == "tools/list":
        start = int((msg.get("params") or {}).get("cursor") or 0)
        res = {"tools": tools[start:start + PAGE]}
        if start + PAGE < n:
            res["nextCursor"] = str(start + PAGE)
    else:
        res = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": res}) + "\n")
    sys.stdout.flush()
'''


def timed(args, cwd):
    """Runs args under /usr/bin/time -v; returns (exit code, seconds, peak MB, stdout)."""
    out = subprocess.run(["/usr/bin/time", "-v"] + args, cwd=cwd, capture_output=True, text=True)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", out.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr)
    seconds = 0.0
    if wall:
        for part in wall.group(1).split(":"):
            seconds = seconds * 60 + float(part)
    mb = int(rss.group(1)) / 1024 if rss else float("nan")
    return out.returncode, seconds, mb, out.stdout


def export(work, n, changed, name):
    server = os.path.join(work, "server.py")
    path = os.path.join(work, name)
    cmd = [GATE, "export", "--command", f"{sys.executable} {server} {n} {changed}", "-o", path]
    subprocess.run(cmd, cwd=work, check=True, capture_output=True)
    return path


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 10000]
    if not os.access(GATE, os.X_OK):
        sys.exit(f"no tdqs-gate at {GATE}; build it (cargo build --release) or set GATE")
    work = tempfile.mkdtemp(prefix="bench-scale-")
    try:
        with open(os.path.join(work, "server.py"), "w") as f:
            f.write(SERVER)
        print(f"gate binary: {GATE}")
        print("| tools | command | exit | wall s | peak MB | output |")
        print("|---:|---|---:|---:|---:|---|")
        for n in sizes:
            base = export(work, n, -1, f"base-{n}.json")
            head = export(work, n, n // 2, f"head-{n}.json")
            code, s, mb, out = timed([GATE, "lint", "--export", base, "--fail-on", "never"], work)
            print(f"| {n} | lint | {code} | {s:.2f} | {mb:.0f} | {len(out)} bytes of text |")
            code, s, mb, out = timed([GATE, "score", "--judge", "static", "--export", base], work)
            print(f"| {n} | score --judge static | {code} | {s:.2f} | {mb:.0f} | {len(out)} bytes of text |")
            for label, extra in (("gate, 1 tool changed", []),
                                 ("gate, 1 tool changed, --full-report", ["--full-report"])):
                report = os.path.join(work, f"report-{n}-{len(extra)}")
                code, s, mb, out = timed([GATE, "--base-export", base, "--head-export", head,
                                          "--judge", "static", "--report-dir", report] + extra,
                                         work)
                sizes_out = []
                for fname in ("tool-definition-score.json", "tool-definition-score.md",
                              "tool-definition-score.html"):
                    p = os.path.join(report, fname)
                    if os.path.exists(p):
                        sizes_out.append(f"{fname.split('.')[-1]} {os.path.getsize(p)} bytes")
                print(f"| {n} | {label} | {code} | {s:.2f} | {mb:.0f} | report: {', '.join(sizes_out) or 'none'} |")
                sys.stdout.flush()
                if not extra:
                    code, s, mb, out = timed([GATE, "--check",
                                              os.path.join(report, "tool-definition-score.json"),
                                              "--base-export", base, "--head-export", head], work)
                    print(f"| {n} | --check of that report | {code} | {s:.2f} | {mb:.0f} | |")
                    sys.stdout.flush()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
