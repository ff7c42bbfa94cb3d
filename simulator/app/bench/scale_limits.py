#!/usr/bin/env python3
"""The scale limits of simulator/README.md "Troubleshooting and limits", measured through the CLI.

Runs, each in its own process under /usr/bin/time -v with a wall-clock limit, and prints a
Markdown table of exit status, wall time, peak RSS and the simulated time:

- the audit's parameter-server scenario (tests/data/audit/b/ps.json: ResNet-18, fp32, batch 32,
  cluster-25gbe nodes of 4 V100s, colocated servers, a push per variable) with 16 servers: forced
  `flow` at 128 / 256 nodes and its refusal at 512, default settings (`auto`: coarse above
  kAutoCoarseServerFlows) at 1,024 / 4,096 / 8,192 nodes and the refusal at 16,384;
- `trainsim collective --platform dgx-a100 --algorithm ring --representation step --bytes 1M`
  at 8 / 16 / 32 nodes (64 to 256 GPUs, the limit) and the refusal at 33 nodes.

usage: scale_limits.py [TRAINSIM] [--limit SECONDS] [--quick]
  --quick skips the points that take half a minute or more (8,192 nodes; step on 256 GPUs).
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PS = os.path.join(ROOT, "tests", "data", "audit", "b", "ps.json")


def measure(trainsim, args, limit):
    with tempfile.TemporaryDirectory() as tmp:
        times = os.path.join(tmp, "time.txt")
        cmd = ["timeout", str(limit), "/usr/bin/time", "-v", "-o", times, trainsim] + args
        p = subprocess.run(cmd, capture_output=True, text=True)
        wall, rss = "", ""
        if os.path.exists(times):
            text = open(times).read()
            m = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", text)
            if m:
                wall = f"{(int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))):.1f} s"
            m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
            if m:
                rss = f"{int(m.group(1)) / 1024:.0f} MiB"
        if p.returncode == 124:
            wall = f"> {limit} s (stopped)"
        simulated = ""
        m = re.search(r"iteration time\s+(.*)", p.stdout) or re.search(r"^\s+\d+\s+([\d.]+)\s", p.stdout, re.M)
        if m:
            simulated = m.group(1).strip() + ("" if "iteration" in m.group(0) else " us")
        note = ""
        for line in p.stderr.splitlines():
            if "error" in line or "ran them coarse" in line:
                note = line.replace("trainsim: ", "")[:90] + "…"
        return p.returncode, wall, rss, simulated, note


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    trainsim = args[0] if args else os.path.join(ROOT, "build", "trainsim")
    limit = 300
    if "--limit" in sys.argv:
        limit = int(sys.argv[sys.argv.index("--limit") + 1])
        args = [a for a in args if a != str(limit)]
        trainsim = args[0] if args else os.path.join(ROOT, "build", "trainsim")
    quick = "--quick" in sys.argv
    points = []
    for nodes, rep in [(128, "flow"), (256, "flow"), (512, "flow"), (1024, None), (4096, None), (8192, None), (16384, None)]:
        if quick and nodes == 8192:
            continue
        sets = ["--set", f"platform.nodes={nodes}", "--set", "strategy.servers=16"]
        if rep:
            sets += ["--set", f"strategy.representation={rep}"]
        points.append((f"ps.json, {nodes} nodes × 4 GPUs, 16 servers, {rep or 'auto'}", ["simulate", PS] + sets))
    for nodes in [8, 16, 32, 33]:
        if quick and nodes == 32:
            continue
        points.append((f"collective ring step 1M, dgx-a100 × {nodes} ({nodes * 8} GPUs)",
                       ["collective", "--platform", "dgx-a100", "--nodes", str(nodes), "--algorithm", "ring",
                        "--representation", "step", "--bytes", "1M"]))
    print(f"load average at start: {open('/proc/loadavg').read().split()[:3]}")
    print("| point | exit | wall | peak RSS | simulated | note |")
    print("|---|---:|---:|---:|---:|---|")
    for name, a in points:
        rc, wall, rss, simulated, note = measure(trainsim, a, limit)
        print(f"| {name} | {rc} | {wall} | {rss} | {simulated} | {note} |", flush=True)


if __name__ == "__main__":
    main()
