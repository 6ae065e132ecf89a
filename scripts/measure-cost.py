#!/usr/bin/env python3
"""What the tool definitions cost, measured with the gate itself on committed definitions.

For each server it runs the real command line with the static judge (no model) on two export
files: the server's definitions as the base, and as the head the same definitions with one
sentence appended to the first tool's description, so that both sides are scored and the
report's `cost` section carries TDQS per 1,000 tokens. It prints, per server, the tokenizer's
count of the whole listing and of the largest definition, the listing's bytes, and the base's
TDQS per 1k tokens, plus the registry forecast of the base (server score and tier).

Servers: the example server's `careful.json` and `careless.json` (examples/issue-tracker) and
every export in tests/fixtures/corpus (real servers' listings).

    python3 scripts/measure-cost.py [--binary target/debug/tdqs-gate] [--only github,time]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tools_of(path):
    with open(path, encoding="utf-8") as f:
        value = json.load(f)
    return value.get("tools", []) if isinstance(value, dict) else value


def measure(binary, label, tools):
    with tempfile.TemporaryDirectory(prefix="measure-cost-") as folder:
        head_tools = json.loads(json.dumps(tools))
        first = head_tools[0]
        first["description"] = (first.get("description") or "") + " See the other tools too."
        base = export_side(binary, folder, "base", tools)
        head = export_side(binary, folder, "head", head_tools)
        report_dir = os.path.join(folder, "report")
        subprocess.run(
            [binary, "--base-export", base, "--head-export", head, "--judge", "static",
             "--report-dir", report_dir, "--full-report"],
            cwd=folder,
            capture_output=True,
            env={**os.environ, "NO_COLOR": "1"},
        )
        with open(os.path.join(report_dir, "tool-definition-score.json"), encoding="utf-8") as f:
            report = json.load(f)
    cost = report["cost"]["base"]
    largest = max(cost["tools"].items(), key=lambda kv: kv[1]["tokens"])
    forecast = report.get("forecast", {}).get("before", {})
    return {
        "server": label,
        "tools": len(cost["tools"]),
        "listing tokens": cost["listing"]["tokens"],
        "listing bytes": cost["listing"]["bytes"],
        "largest tool": f"{largest[0]} ({largest[1]['tokens']})",
        "TDQS/1k tokens": cost.get("tdqsPer1kTokens"),
        "server score": f"{forecast.get('overallScore')} ({forecast.get('overallTier')})",
        "tokenizer": report["cost"]["tokenizer"],
    }


def export_side(binary, folder, name, tools):
    # The stdlib server serves tools.json from its own folder: copy it beside each side's file.
    side = os.path.join(folder, name)
    os.makedirs(side, exist_ok=True)
    src = os.path.join(ROOT, "examples", "issue-tracker", "server.py")
    with open(src, encoding="utf-8") as f:
        code = f.read()
    with open(os.path.join(side, "server.py"), "w", encoding="utf-8") as f:
        f.write(code)
    with open(os.path.join(side, "tools.json"), "w", encoding="utf-8") as f:
        json.dump(tools, f)
    out = os.path.join(folder, name + ".export.json")
    subprocess.run(
        [binary, "export", "--command", "python3 server.py", "-o", out],
        cwd=side,
        check=True,
        capture_output=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "debug", "tdqs-gate"))
    parser.add_argument("--only", default="", help="comma-separated corpus names")
    args = parser.parse_args()
    servers = [
        ("example careful", os.path.join(ROOT, "examples/issue-tracker/careful.json")),
        ("example careless", os.path.join(ROOT, "examples/issue-tracker/careless.json")),
    ]
    corpus = os.path.join(ROOT, "tests", "fixtures", "corpus")
    for name in sorted(os.listdir(corpus)):
        if name.endswith(".json"):
            servers.append((name[:-5], os.path.join(corpus, name)))
    only = {n for n in args.only.split(",") if n}
    rows = []
    for label, path in servers:
        if only and label not in only:
            continue
        tools = tools_of(path)
        if not tools:
            continue
        try:
            rows.append(measure(args.binary, label, tools))
        except (subprocess.CalledProcessError, KeyError, FileNotFoundError) as e:
            print(f"{label}: not measured ({e})", file=sys.stderr)
    if not rows:
        return 1
    print(f"tokenizer: {rows[0]['tokenizer']}")
    columns = [c for c in rows[0] if c != "tokenizer"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in columns) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
