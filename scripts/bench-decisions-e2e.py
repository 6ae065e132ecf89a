#!/usr/bin/env python3
"""Decisions of the real gate, end to end, with a noisy stand-in judge, as rates over many runs.

Builds `tdqs-gate` and the fake `claude` (tests/helpers/fake_claude.rs) once, exports each
scenario's base and head tool sets with the bundled example server, then runs the real command
line (`--base-export/--head-export`, the Claude Code judge with the fake as `--claude`) N times
per scenario and rule, each run with its own seed, and prints a table of PASS/BLOCK/INVALID rates
and model calls. Every report is also re-checked with `--check` (the "check ok" column).

The fake's noise mode (see tests/helpers/fake_claude_noise.rs): each run draws every tool's six
true dimension scores uniformly from 1.5 to 4.5 (the run's seed); every answer is the true score
plus N(0, sigma), plus with probability p a jump of one point up or down, rounded half up to 1-5.
The measured run-to-run spread of one tool's TDQS is printed under the table.

It is a stand-in, not a live model: it shows what the gate's decision code does with answers
that vary like a judge's, not how a real model varies.

    python3 scripts/bench-decisions-e2e.py [N] [--seed S] [--sigma 0.1] [--jump-probability 0.01]
        [--scenarios a1,a20,b,c,c1,d] [--rules noise-aware,reference] [--release]
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WEIGHTS = {
    "purpose_clarity": 25,
    "usage_guidelines": 20,
    "behavioral_transparency": 20,
    "parameter_semantics": 15,
    "conciseness_structure": 10,
    "contextual_completeness": 10,
}
SPEC_COMMIT = "b9881b0cfec88969e42672c92544487ca191a992"
MARK = "(revised wording)"


def tool(i, description):
    t = {
        "name": f"tool_{i:02d}",
        "title": f"Tool {i}",
        "inputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string", "description": f"Record id of catalogue {i}"}},
            "required": ["id"],
        },
        "annotations": {"readOnlyHint": True},
    }
    if description is not None:
        t["description"] = description
    return t


def base_description(i):
    return (f"Returns record {i} of the catalogue with its fields. Use this when the id is known; "
            f"fails with an error when the id does not exist.")


def reworded_description(i):
    return (f"Gives back catalogue record {i} and every field it has. Call it once you know the "
            f"id; an unknown id is an error. {MARK}")


# Each scenario: (label, tool count, what happens to the last tool's description on the head
# ("reword" or "delete"), the per-dimension change of its true score on the head (None for a
# deleted description: the hard gate scores it), the verdict a perfect judge would give).
SCENARIOS = {
    "a1": ("(a) 1 tool of 1 reworded, same quality", 1, "reword", 0.0, "PASS"),
    "a20": ("(a) 1 tool of 20 reworded, same quality", 20, "reword", 0.0, "PASS"),
    "b": ("(b) 1 of 44 description deleted", 44, "delete", None, "BLOCK"),
    "c": ("(c) 1 of 20 falls 0.5 TDQS", 20, "reword", -0.5, "BLOCK"),
    "c1": ("(c) 1 of 20 falls 1.0 TDQS", 20, "reword", -1.0, "BLOCK"),
    "d": ("(d) 1 of 20 improves 0.5 TDQS", 20, "reword", 0.5, "PASS"),
}


def tdqs(scores):
    total = sum(WEIGHTS[d] * s for d, s in scores.items())
    # Rounded half up to one decimal, from the exact value (total / 100).
    return (total * 10 + 50) // 100 / 10


def run(cmd, **kw):
    return subprocess.run(cmd, check=False, capture_output=True, text=True, **kw)


def build(release):
    profile = ["--release"] if release else []
    env = dict(os.environ, CARGO_BUILD_JOBS="1")
    for args in (["--bin", "tdqs-gate"], ["-p", "tdqs-gate-tests", "--bin", "fake-claude"]):
        subprocess.run(["nice", "-n", "10", "cargo", "build", "--locked", *profile, *args],
                       cwd=ROOT, env=env, check=True)
    target = os.path.join(ROOT, "target", "release" if release else "debug")
    return os.path.join(target, "tdqs-gate"), os.path.join(target, "fake-claude")


def export(gate, work, name, tools):
    folder = os.path.join(work, "servers", name)
    os.makedirs(folder)
    shutil.copy(os.path.join(ROOT, "examples", "issue-tracker", "server.py"), folder)
    with open(os.path.join(folder, "tools.json"), "w") as f:
        json.dump(tools, f, indent=2)
    with open(os.path.join(folder, "tdqs-gate.toml"), "w") as f:
        f.write('[server]\ncommand = "python3 {root}/server.py"\n')
    out = os.path.join(work, f"{name}.export.json")
    env = dict(os.environ, GIT_CEILING_DIRECTORIES=os.path.dirname(folder))
    r = run([gate, "export", "-o", out], cwd=folder, env=env)
    if r.returncode != 0:
        sys.exit(f"export of {name} failed:\n{r.stderr}")
    return out


def truth_rules(rng, count, changed, delta):
    """The fake's truth table for one run: every tool's true scores, and the changed tool's
    head (recognised by MARK in its description) moved by `delta`."""
    rules = []
    for i in range(1, count + 1):
        scores = {d: round(rng.uniform(1.5, 4.5), 3) for d in WEIGHTS}
        name = f"Tool under review: tool_{i:02d}\n"
        if i == changed and delta:
            moved = {d: min(5.0, max(1.0, s + delta)) for d, s in scores.items()}
            rules.append({"kind": "tool", "contains": [name, MARK], "scores": moved})
        rules.append({"kind": "tool", "contains": [name], "scores": scores})
    rules.append({"kind": "coherence", "all": 3.7})
    return rules


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="?", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sigma", type=float, default=0.1)
    ap.add_argument("--jump-probability", type=float, default=0.01)
    ap.add_argument("--scenarios", default="a1,a20,b,c,c1,d")
    ap.add_argument("--rules", default="noise-aware,reference")
    ap.add_argument("--release", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the work folder (the last run's fake log)")
    args = ap.parse_args()

    gate, fake = build(args.release)
    pins = os.path.join(ROOT, "tests", "fixtures", "spec", "standin-pins.json")
    work = tempfile.mkdtemp(prefix="bench-e2e-")
    try:
        cache = os.path.join(work, "cache")
        os.makedirs(os.path.join(cache, "tdqs-gate"))
        # The stand-in specification, cached, so no run reaches the network.
        shutil.copy(os.path.join(ROOT, "tests", "fixtures", "spec", "standin-readme.md"),
                    os.path.join(cache, "tdqs-gate", f"{SPEC_COMMIT}.md"))
        fake_dir = os.path.join(work, "fake")
        os.makedirs(fake_dir)
        claude = os.path.join(fake_dir, "claude")
        shutil.copy(fake, claude)

        rows = []
        spread = {}  # prompt digest -> TDQS of each call of it
        for key in args.scenarios.split(","):
            label, count, change, delta, expected = SCENARIOS[key]
            changed = count  # the last tool changes
            base_tools = [tool(i, base_description(i)) for i in range(1, count + 1)]
            head_tools = [tool(i, base_description(i)) for i in range(1, count)]
            head_tools.append(tool(count, None if change == "delete" else reworded_description(count)))
            base_export = export(gate, work, f"{key}-base", base_tools)
            head_export = export(gate, work, f"{key}-head", head_tools)
            for rule in args.rules.split(","):
                tally = {0: 0, 1: 0, 2: 0}
                calls = 0
                checked = 0
                started = time.time()
                for n in range(args.runs):
                    seed = args.seed * 1_000_003 + n
                    rng = random.Random(seed)
                    control = {"noise": {
                        "seed": seed, "sigma": args.sigma,
                        "jump_probability": args.jump_probability, "jump": 1.0,
                        "truth": truth_rules(rng, count, changed, delta),
                    }}
                    for old in ("fake-claude.calls", "fake-claude.seen"):
                        shutil.rmtree(os.path.join(fake_dir, old), ignore_errors=True)
                    for old in ("fake-claude.log",):
                        if os.path.exists(os.path.join(fake_dir, old)):
                            os.remove(os.path.join(fake_dir, old))
                    with open(os.path.join(fake_dir, "fake-claude.json"), "w") as f:
                        json.dump(control, f)
                    report_dir = os.path.join(work, "report")
                    shutil.rmtree(report_dir, ignore_errors=True)
                    common = ["--base-export", base_export, "--head-export", head_export,
                              "--pins", pins, "--cache-dir", cache]
                    r = run([gate, *common, "--judge", "claude-code", "--claude", claude,
                             "--decision-rule", rule, "--report-dir", report_dir], cwd=work)
                    code = r.returncode if r.returncode in tally else 2
                    tally[code] += 1
                    if code == 2:
                        print(f"INVALID run ({key}, {rule}, seed {seed}):\n{r.stderr}", file=sys.stderr)
                    log_path = os.path.join(fake_dir, "fake-claude.log")
                    records = []
                    if os.path.exists(log_path):
                        with open(log_path) as f:
                            records = [json.loads(line) for line in f]
                    model_calls = [x for x in records if x.get("kind") == "call"]
                    calls += len(model_calls)
                    for x in model_calls:
                        if x.get("question") == "tool" and "noise" in x:
                            # Repeats of one prompt within one run (rows share seeds, so
                            # the same prompt in another row draws the same answers).
                            where = f"{key}\0{rule}\0{seed}\0{x['stdin']}"
                            digest = hashlib.sha256(where.encode()).hexdigest()
                            spread.setdefault(digest, []).append(tdqs(x["noise"]["scores"]))
                    report = os.path.join(report_dir, "tool-definition-score.json")
                    if os.path.exists(report):
                        c = run([gate, "--check", report, *common], cwd=work)
                        checked += c.returncode == code
                rows.append((label, rule, args.runs, tally, calls, checked, expected,
                             time.time() - started))
                print(f"done: {label}, {rule}", file=sys.stderr)

        print(f"{args.runs} runs per row, seeds {args.seed} * 1000003 + run, sigma {args.sigma}, "
              f"jump probability {args.jump_probability}")
        print()
        print("| Scenario | Rule | Runs | PASS % | BLOCK % | INVALID % | Mean model calls | "
              "--check agrees | Wrong verdicts % |")
        print("|---|---|---|---|---|---|---|---|---|")
        for label, rule, runs, tally, calls, checked, expected, secs in rows:
            pct = lambda k: f"{100 * tally[k] / runs:.1f}"
            wrong = runs - tally[0 if expected == "PASS" else 1]
            print(f"| {label} | {rule} | {runs} | {pct(0)} | {pct(1)} | {pct(2)} | "
                  f"{calls / runs:.1f} | {checked}/{runs} | {100 * wrong / runs:.1f} "
                  f"(expected {expected}) |")
        diffs = []
        for values in spread.values():
            diffs.extend(abs(a - b) for a, b in zip(values, values[1:]))
        if diffs:
            diffs.sort()
            print()
            print(f"Measured judge noise: {len(diffs)} repeated tool questions, mean |change| of "
                  f"one tool's TDQS {sum(diffs) / len(diffs):.3f}, 99th percentile "
                  f"{diffs[int(0.99 * (len(diffs) - 1))]:.1f}, largest {diffs[-1]:.1f}")
    finally:
        if args.keep:
            print(f"work folder kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
