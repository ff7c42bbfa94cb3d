#!/usr/bin/env python3
"""Measure on this machine's GPU what gradient accumulation and activation checkpointing cost.

Writes to $OUT (self-limits to BUDGET_S seconds; each part writes its rows as it goes, so a partial
run keeps what it measured):
  recompute.csv      iteration time and peak memory with and without Hugging Face's per-block
                     gradient checkpointing (`gradient_checkpointing_enable`), at fixed batches
  largest_batch.csv  the largest micro-batch per GPU that trains (two optimizer steps) with and
                     without checkpointing: doubling until out of memory, then bisection
  accumulation.csv   one optimizer step of k micro-batches (loss / k, backward each, one step)
  micro_batch_timed.csv  the first and an accumulating micro-batch, the optimizer step and the
                     gradient adds, each timed alone (host and device)
  memory_by_batch.csv  peak memory of two optimizer steps at four batches, with and without
                     checkpointing
The files are committed as h100_<name>_2026.csv (accumulation with a `run` column: two runs on two
starts of the machine).
Median of the timed iterations after warm-up, CUDA events; synthetic data; AdamW for transformers,
SGD with momentum for images, as gpu_bench.py."""
import csv, gc, json, os, statistics, subprocess, tempfile, time, traceback
import torch, torch.nn as nn
import torchvision.models as tvm

OUT = os.environ.get("OUT", tempfile.mkdtemp())
BUDGET_S = float(os.environ.get("BUDGET_S", "360"))
T0 = time.time()
dev = torch.device("cuda")
torch.backends.cudnn.benchmark = True


def left():
    return BUDGET_S - (time.time() - T0)


def set_precision(p):
    torch.backends.cuda.matmul.allow_tf32 = p == "tf32"
    torch.backends.cudnn.allow_tf32 = p == "tf32"


def make(name):
    if name == "resnet50":
        return tvm.resnet50(), "image", 224
    from transformers import BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel
    if name == "bert_large":
        return BertForMaskedLM(BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                                          intermediate_size=4096)), "tokens", 128
    if name == "gpt2_small":
        return GPT2LMHeadModel(GPT2Config(use_cache=False)), "tokens", 1024
    if name == "gpt2_medium":
        return GPT2LMHeadModel(GPT2Config(n_embd=1024, n_layer=24, n_head=16, use_cache=False)), "tokens", 1024
    raise ValueError(name)


def build(name, prec, ckpt):
    set_precision(prec)
    model, kind, size = make(name)
    model = model.to(dev).train()
    if ckpt:
        model.gradient_checkpointing_enable()
    if kind == "image":
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    return model, kind, size, opt


def micro_batch(model, kind, size, batch, prec, scale):
    if kind == "image":
        x = torch.randn(batch, 3, size, size, device=dev)
        y = torch.randint(0, 1000, (batch,), device=dev)
    else:
        x = torch.randint(0, 30000, (batch, size), device=dev)
        y = x
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=(prec == "bf16")):
        if kind == "image":
            loss = nn.functional.cross_entropy(model(x), y)
        else:
            loss = model(input_ids=x, labels=y).loss
    (loss * scale).backward()


def step(model, kind, size, batch, prec, opt, k=1):
    opt.zero_grad(set_to_none=True)
    for _ in range(k):
        micro_batch(model, kind, size, batch, prec, 1.0 / k)
    opt.step()


def timed(fn, iters, warm):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
    ev[0].record()
    for i in range(iters):
        fn()
        ev[i + 1].record()
    torch.cuda.synchronize()
    ts = [ev[i].elapsed_time(ev[i + 1]) / 1e3 for i in range(iters)]
    return statistics.median(ts), min(ts)


def release():
    gc.collect()
    torch.cuda.empty_cache()


class Writer:
    def __init__(self, name):
        self.f = open(f"{OUT}/{name}", "w", newline="")
        self.w = None

    def row(self, r):
        if self.w is None:
            self.w = csv.DictWriter(self.f, fieldnames=list(r.keys()))
            self.w.writeheader()
        self.w.writerow(r)
        self.f.flush()
        print(r, flush=True)


def recompute(out):
    for name, prec, batch in [("gpt2_small", "bf16", 16), ("gpt2_small", "tf32", 8), ("gpt2_medium", "bf16", 8),
                              ("bert_large", "bf16", 64)]:
        for ckpt in (False, True):
            if left() < 60:
                return
            model, kind, size, opt = build(name, prec, ckpt)
            try:
                med, mn = timed(lambda: step(model, kind, size, batch, prec, opt), iters=8, warm=3)
                r = dict(status="ok", iteration_s=med, iteration_min_s=mn,
                         peak_allocated_bytes=torch.cuda.max_memory_allocated(),
                         peak_reserved_bytes=torch.cuda.max_memory_reserved())
            except torch.cuda.OutOfMemoryError:
                r = dict(status="oom", iteration_s="", iteration_min_s="", peak_allocated_bytes="",
                         peak_reserved_bytes="")
            out.row(dict(model=name, precision=prec, batch_per_gpu=batch, checkpointing=int(ckpt),
                         params=sum(p.numel() for p in model.parameters()), **r))
            del model, opt
            release()


def fits(model, kind, size, batch, prec, opt):
    try:
        for _ in range(2):
            step(model, kind, size, batch, prec, opt)
        torch.cuda.synchronize()
        ok = True
    except torch.cuda.OutOfMemoryError:
        ok = False
    opt.zero_grad(set_to_none=True)
    release()
    return ok


def largest(out):
    for name, prec, start in [("gpt2_small", "bf16", 16), ("gpt2_medium", "bf16", 8)]:
        for ckpt in (False, True):
            if left() < 70:
                return
            t = time.time()
            model, kind, size, opt = build(name, prec, ckpt)
            lo, hi, tries = 0, None, 0
            b = start
            while hi is None and left() > 40:
                tries += 1
                if fits(model, kind, size, b, prec, opt):
                    lo, b = b, b * 2
                else:
                    hi = b
            while hi is not None and hi - lo > max(1, lo // 32) and left() > 40:
                tries += 1
                mid = (lo + hi) // 2
                if fits(model, kind, size, mid, prec, opt):
                    lo = mid
                else:
                    hi = mid
            out.row(dict(model=name, precision=prec, checkpointing=int(ckpt), largest_fitting=lo,
                         smallest_failing=hi if hi is not None else "", tries=tries,
                         total_memory_bytes=torch.cuda.get_device_properties(0).total_memory,
                         seconds=round(time.time() - t, 1)))
            del model, opt
            release()


def accumulation(out):
    for name, prec, batch in [("resnet50", "bf16", 64), ("bert_large", "bf16", 32), ("gpt2_small", "bf16", 8)]:
        if left() < 50:
            return
        model, kind, size, opt = build(name, prec, False)
        for k in (1, 2, 4):
            if left() < 40:
                break
            med, mn = timed(lambda: step(model, kind, size, batch, prec, opt, k), iters=6, warm=2)
            out.row(dict(model=name, precision=prec, batch_per_gpu=batch, accumulation_steps=k,
                         step_s=med, step_min_s=mn, peak_allocated_bytes=torch.cuda.max_memory_allocated()))
        del model, opt
        release()


def micro_batches(out):
    """One micro-batch at a time (synchronised before each): the first after zero_grad, one that
    adds into stored gradients, the optimizer step alone, and the adds of AccumulateGrad done by hand
    (one in-place add per parameter tensor): host time to return from each call, device time between
    CUDA events around it."""
    for name, prec, batch in [("bert_large", "bf16", 32), ("gpt2_small", "bf16", 8)]:
        if left() < 40:
            return
        model, kind, size, opt = build(name, prec, False)
        for _ in range(3):
            step(model, kind, size, batch, prec, opt, 2)
        torch.cuda.synchronize()

        def timed_call(fn):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0 = time.perf_counter()
            e0.record()
            fn()
            t1 = time.perf_counter()
            e1.record()
            torch.cuda.synchronize()
            return t1 - t0, e0.elapsed_time(e1) / 1e3

        x = torch.randint(0, 30000, (batch, size), device=dev)
        for part in ("first", "accumulating"):
            host_f, host_b, device = [], [], []
            for _ in range(12):
                opt.zero_grad(set_to_none=True)
                if part == "accumulating":
                    micro_batch(model, kind, size, batch, prec, 1.0)
                torch.cuda.synchronize()
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                t0 = time.perf_counter()
                e0.record()
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=(prec == "bf16")):
                    loss = model(input_ids=x, labels=x).loss
                t1 = time.perf_counter()
                loss.backward()
                t2 = time.perf_counter()
                e1.record()
                torch.cuda.synchronize()
                host_f.append(t1 - t0)
                host_b.append(t2 - t1)
                device.append(e0.elapsed_time(e1) / 1e3)
            out.row(dict(model=name, precision=prec, batch_per_gpu=batch, part=part,
                         host_forward_s=statistics.median(host_f), host_backward_s=statistics.median(host_b),
                         host_call_s="", device_s=statistics.median(device)))
        opt.zero_grad(set_to_none=True)
        micro_batch(model, kind, size, batch, prec, 1.0)
        torch.cuda.synchronize()
        grads = [p.grad for p in model.parameters()]
        news = [g.clone() for g in grads]

        def add_all():
            for g, n in zip(grads, news):
                g += n

        for part, fn in (("optimizer_step", opt.step), ("add_per_parameter_tensor", add_all)):
            ts = [timed_call(fn) for _ in range(6)]
            out.row(dict(model=name, precision=prec, batch_per_gpu=batch, part=part, host_forward_s="",
                         host_backward_s="", host_call_s=statistics.median(t[0] for t in ts),
                         device_s=statistics.median(t[1] for t in ts)))
        del model, opt, grads, news
        release()


def memory_by_batch(out):
    """Peak memory of two optimizer steps at several batches, with and without checkpointing: the
    slope per sample that decides the largest batch."""
    for name, prec, batches in [("gpt2_small", "bf16", (8, 16, 32, 48)), ("gpt2_medium", "bf16", (4, 8, 16, 24))]:
        for ckpt in (False, True):
            if left() < 40:
                return
            model, kind, size, opt = build(name, prec, ckpt)
            for batch in batches if not ckpt else tuple(b * 3 for b in batches):
                torch.cuda.reset_peak_memory_stats()
                ok = fits(model, kind, size, batch, prec, opt)
                out.row(dict(model=name, precision=prec, checkpointing=int(ckpt), batch_per_gpu=batch,
                             status="ok" if ok else "oom",
                             peak_allocated_bytes=torch.cuda.max_memory_allocated() if ok else "",
                             peak_reserved_bytes=torch.cuda.max_memory_reserved() if ok else ""))
            del model, opt
            release()


def main():
    os.makedirs(OUT, exist_ok=True)
    info = dict(torch=torch.__version__, cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
                nccl=str(torch.cuda.nccl.version()), gpu=torch.cuda.get_device_name(0))
    try:
        import transformers
        info["transformers"] = transformers.__version__
        info["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,power.limit,clocks.max.sm,memory.total,driver_version",
             "--format=csv"], capture_output=True, text=True).stdout
    except Exception as e:  # noqa: BLE001 - the record of the machine is best effort
        info["error"] = str(e)
    json.dump(info, open(f"{OUT}/machine.json", "w"), indent=1)
    print(info, flush=True)
    parts = [("recompute.csv", recompute),
             ("accumulation.csv", accumulation), ("largest_batch.csv", largest),
             ("micro_batch_timed.csv", micro_batches), ("memory_by_batch.csv", memory_by_batch)]
    only = os.environ.get("ONLY")
    for fname, fn in parts:
        if only and fn.__name__ not in only.split(","):
            continue
        t = time.time()
        try:
            fn(Writer(fname))
        except Exception:  # noqa: BLE001 - one part failing must not lose the others
            traceback.print_exc()
        print(f"{fn.__name__} took {time.time() - t:.1f} s; {left():.0f} s left", flush=True)


if __name__ == "__main__":
    main()
