#!/usr/bin/env python3
"""How the reproduction of Wang et al. (simulator/README.md "Reproducing Wang et al.") moves with the CPU
threading model's assumed constants.

For the default constants and then each constant halved and doubled (the block time also at 0),
runs `trainsim recommend-threads` on the zoo's seven ImageNet CNNs at batch 1 on the two-socket
Xeon 8160 of scenarios/cpu_threading_inception_vs_resnet.json and prints, as a Markdown table:
the guideline's geometric-mean gain over Intel's setting (paper 1.30x) and over TensorFlow's
MKL setting (1.38x), the best setting's gain over PyTorch's one pool of every core (the
framework default), and GoogLeNet's best setting over one pool of every core (up to 1.50x).

usage: cpu_threading_sensitivity.py [TRAINSIM] [--jobs N]
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCENARIO = os.path.join(ROOT, "scenarios", "cpu_threading_inception_vs_resnet.json")
MODELS = "googlenet,inception_v3,resnet50,resnet18,vgg16,alexnet,nin"
# Defaults as in simulator/plan/include/trainsim/plan/cpu_threading.hpp (JSON units).
CONSTANTS = [
    ("serial_fraction", 0.03),
    ("dispatch_us", 5.0),
    ("fork_join_us", 1.0),
    ("core_bandwidth_GBps", 12.0),
    ("conv_efficiency", 0.7),
    ("cross_socket_factor", 2.0),
    ("context_switch_us", 3.8),
    ("spin_wait_ms", 200.0),
]


def run(trainsim, jobs, sets):
    args = [trainsim, "recommend-threads", SCENARIO, "--json", "-", "--jobs", str(jobs), "--models", MODELS]
    for s in sets:
        args += ["--set", s]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    mean = doc["geometric_mean_gain_over"]
    googlenet = next(m for m in doc["models"] if m["model"] == "googlenet")
    one_pool = next(s for s in googlenet["settings"] if s["name"] == "pytorch")
    return (mean["intel-2019"]["guideline_gain"], mean["tf1-mkl"]["guideline_gain"], mean["pytorch"]["best_gain"],
            one_pool["iteration_time_s"] / googlenet["best"]["iteration_time_s"])


def main():
    argv = [a for a in sys.argv[1:]]
    jobs = 2
    if "--jobs" in argv:
        i = argv.index("--jobs")
        jobs = int(argv[i + 1])
        del argv[i:i + 2]
    trainsim = argv[0] if argv else os.path.join(ROOT, "build", "trainsim")
    print("| threading constant | value | guideline over intel-2019 (paper 1.30x) | guideline over tf1-mkl (1.38x) "
          "| best over pytorch (1 pool) | GoogLeNet best over 1 pool (up to 1.50x) |")
    print("|---|---|---|---|---|---|")
    row = run(trainsim, jobs, [])
    print("| (defaults) | | {:.2f}x | {:.2f}x | {:.2f}x | {:.2f}x |".format(*row), flush=True)
    for key, default in CONSTANTS:
        values = [default / 2, default * 2] + ([0.0] if key == "spin_wait_ms" else [])
        for v in values:
            if key.endswith("efficiency") and v > 1:
                v = 1.0
            row = run(trainsim, jobs, ["threading.{}={}".format(key, v)])
            print("| {} | {:g} | {:.2f}x | {:.2f}x | {:.2f}x | {:.2f}x |".format(key, v, *row), flush=True)


if __name__ == "__main__":
    main()
