#!/usr/bin/env python3
"""Wall time of `tdqs-gate lint` next to `mcp-toolgauge lint` on the same live server.

Both start the bundled example server (examples/issue-tracker/server.py, careless tool set) over
stdio, list its tools and lint them. Rounds are interleaved so machine load hits every command
alike. mcp-toolgauge is not a dependency: install it yourself, e.g.
    python3 -m venv /tmp/tg-venv && /tmp/tg-venv/bin/pip install mcp-toolgauge

Usage: python3 scripts/bench-lint.py [ROUNDS] [MCP_TOOLGAUGE]
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 9
toolgauge = sys.argv[2] if len(sys.argv) > 2 else "/tmp/tg-venv/bin/mcp-toolgauge"

subprocess.run(["cargo", "build", "--quiet", "--release", "--bin", "tdqs-gate"], cwd=ROOT, check=True)
target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
gate = os.path.join(target, "release", "tdqs-gate")

work = tempfile.mkdtemp(prefix="bench-lint-")
try:
    shutil.copy(os.path.join(ROOT, "examples/issue-tracker/server.py"), work)
    shutil.copy(os.path.join(ROOT, "examples/issue-tracker/careless.json"), os.path.join(work, "tools.json"))
    commands = {
        "tdqs-gate lint (release)": [gate, "lint", "--command", "python3 server.py", "--fail-on", "never"],
    }
    if shutil.which(toolgauge):
        commands["mcp-toolgauge lint"] = [toolgauge, "lint", ".", "--command", "python3 server.py",
                                          "--no-config", "--fail-on", "off"]
    else:
        print(f"mcp-toolgauge not found at {toolgauge}: timing tdqs-gate only")
    times = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            start = time.perf_counter()
            subprocess.run(command, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            times[name].append(time.perf_counter() - start)
    for name, values in times.items():
        print(f"{name}: median {statistics.median(values) * 1000:.0f} ms "
              f"(min {min(values) * 1000:.0f}, max {max(values) * 1000:.0f}) over {rounds} rounds")
finally:
    shutil.rmtree(work)
