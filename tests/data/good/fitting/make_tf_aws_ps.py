#!/usr/bin/env python3
"""Derives tf_aws_ps.csv from ../../validation/tf_benchmarks_2017.csv.

Rows: the AWS distributed parameter-server measurements (dataset tf_benchmarks_2017_aws_distributed:
p2.8xlarge nodes, 8 K80 dies each, parameter servers colocated with the workers; InceptionV3,
ResNet-50 and ResNet-152). They report samples_per_s over all GPUs; the per-iteration time of one
GPU is
    iteration_time_s = batch_per_gpu * gpus / samples_per_s
(every GPU processes batch_per_gpu samples per synchronous iteration).

single_gpu_time_s is the measured one-GPU iteration time of the same model and batch (the only
calibration the validation protocol allows), for the *_calibrated models.

Per-model constants (fitting/README.md, torchvision definitions):
    flops_per_sample = 2 * forward multiply-adds per sample (a multiply-add is 2 FLOPs)
    model_bytes      = 4 * parameters (fp32 gradients, the bytes a worker pushes per iteration)

Run from anywhere: python3 make_tf_aws_ps.py  (rewrites tf_aws_ps.csv next to this script).
"""
import csv
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "..", "validation", "tf_benchmarks_2017.csv")
TARGET = os.path.join(HERE, "tf_aws_ps.csv")

# model: (parameters, forward multiply-adds per sample)
MODELS = {
    "inception_v3": (27_161_264, 5.713e9),
    "resnet50": (25_557_032, 4.089e9),
    "resnet152": (60_192_808, 11.58e9),
}


def main():
    rows = []
    with open(SOURCE, newline="") as f:
        for r in csv.DictReader(f):
            if r["dataset"] != "tf_benchmarks_2017_aws_distributed" or r["metric"] != "samples_per_s":
                continue
            params, macs = MODELS[r["model"]]  # a KeyError means the source gained a model: add it above
            gpus, batch, sps = int(r["gpus"]), int(r["batch_per_gpu"]), float(r["value"])
            rows.append({
                "model": r["model"],
                "gpus": gpus,
                "nodes": int(r["nodes"]),
                "batch_per_gpu": batch,
                "flops_per_sample": f"{2 * macs:.6g}",
                "model_bytes": 4 * params,
                "samples_per_s": r["value"],
                "iteration_time_s": f"{batch * gpus / sps:.6g}",
            })
    one_gpu = {(r["model"], r["batch_per_gpu"]): r["iteration_time_s"] for r in rows if r["gpus"] == 1}
    for r in rows:
        r["single_gpu_time_s"] = one_gpu[(r["model"], r["batch_per_gpu"])]
    rows.sort(key=lambda r: (r["model"], r["batch_per_gpu"], r["gpus"]))
    with open(TARGET, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
