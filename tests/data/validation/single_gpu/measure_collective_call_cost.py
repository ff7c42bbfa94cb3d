#!/usr/bin/env python3
"""Measure on this machine's one GPU what a collective call costs the host, apart from any network.

What an all-reduce costs beyond its data (the harness's or framework's launch) is a floor under
every small collective. One GPU cannot run a multi-rank NCCL collective, but it shows the parts
that do not depend on the ranks: the CUDA kernel launch, and the call path of torch.distributed
into NCCL (a one-rank communicator: NCCL enqueues the call and, for an in-place sum, moves
nothing). Writes $OUT/collective_call_cost.csv (self-limits to BUDGET_S seconds), one row per
measurement:

  what          kernel_launch: a one-element add (x.add_(1));
                torch_allreduce_nccl_1rank: dist.all_reduce on a one-rank NCCL process group;
                torch_allreduce_nccl_1rank_async: the same with async_op=True and work.wait()
                (how DDP's reducer calls it);
                cupy_nccl_allreduce_1rank: NCCL's allReduce through CuPy's bindings, no torch
  mode          back_to_back: N calls then one synchronize, time / N (nccl-tests' timing: the
                host's issue rate when it is the bottleneck); synchronized: each call followed by
                torch.cuda.synchronize() (launch, run and the host's wait); graph: N calls captured
                in one CUDA graph and replayed (device time alone, no host cost)
  size_bytes    the buffer (0 for the kernel launch)
  us_per_call   median over REPEATS repetitions of the batch
  us_min, us_max
Environment rows (gpu, torch, nccl, driver) come first as comment lines. Run as
`OUT=dir python3 measure_collective_call_cost.py`; committed as h100_collective_call_cost_2026.csv."""
import csv, os, statistics, subprocess, tempfile, time

import torch
import torch.distributed as dist

OUT = os.environ.get("OUT", tempfile.mkdtemp())
BUDGET_S = float(os.environ.get("BUDGET_S", "180"))
T0 = time.time()
N = 200
REPEATS = 15
SIZES = [8, 1024, 65536, 1 << 20, 16 << 20, 256 << 20]


def left():
    return BUDGET_S - (time.time() - T0)


def timed(fn, n):
    """Median, min, max over REPEATS of (n calls of fn, then synchronize) in µs per call."""
    samples = []
    for _ in range(REPEATS):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t) / n * 1e6)
    return statistics.median(samples), min(samples), max(samples)


def synced(fn):
    def call():
        fn()
        torch.cuda.synchronize()
    return call


def graph_timed(fn, n):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n):
            fn()
    med, lo, hi = timed(g.replay, 1)
    return med / n, lo / n, hi / n


def main():
    path = os.path.join(OUT, "collective_call_cost.csv")
    f = open(path, "w", newline="")
    driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                            capture_output=True, text=True).stdout.strip()
    nccl = ".".join(str(v) for v in torch.cuda.nccl.version())
    f.write(f"# gpu: {torch.cuda.get_device_name()}; driver {driver}; torch {torch.__version__}; "
            f"CUDA {torch.version.cuda}; NCCL {nccl}; N={N} calls a batch, median of {REPEATS}\n")
    w = csv.writer(f)
    w.writerow(["what", "mode", "size_bytes", "us_per_call", "us_min", "us_max"])

    def row(what, mode, size, r):
        w.writerow([what, mode, size, f"{r[0]:.2f}", f"{r[1]:.2f}", f"{r[2]:.2f}"])
        f.flush()
        print(what, mode, size, f"{r[0]:.2f}", flush=True)

    x = torch.zeros(1, device="cuda")
    add = lambda: x.add_(1)  # noqa: E731
    for _ in range(100):
        add()
    row("kernel_launch", "back_to_back", 0, timed(add, N))
    row("kernel_launch", "synchronized", 0, timed(synced(add), N))
    row("kernel_launch", "graph", 0, graph_timed(add, N))

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
    for size in SIZES:
        if left() < 20:
            break
        t = torch.ones(max(size // 4, 2), device="cuda")
        ar = lambda: dist.all_reduce(t)  # noqa: E731
        for _ in range(20):
            ar()

        def ar_async():
            dist.all_reduce(t, async_op=True).wait()
        row("torch_allreduce_nccl_1rank", "back_to_back", size, timed(ar, N))
        row("torch_allreduce_nccl_1rank", "synchronized", size, timed(synced(ar), N))
        row("torch_allreduce_nccl_1rank_async", "back_to_back", size, timed(ar_async, N))
        try:
            row("torch_allreduce_nccl_1rank", "graph", size, graph_timed(ar, 50))
        except Exception as e:  # capture needs NCCL and torch support; record the gap, go on
            print("graph capture failed:", e, flush=True)
    dist.destroy_process_group()

    try:
        import cupy
        from cupy.cuda import nccl as cnccl
        comm = cnccl.NcclCommunicator(1, cnccl.get_unique_id(), 0)
        stream = cupy.cuda.get_current_stream().ptr
        for size in SIZES:
            if left() < 10:
                break
            a = cupy.ones(max(size // 4, 2), dtype=cupy.float32)
            call = lambda: comm.allReduce(a.data.ptr, a.data.ptr, a.size,  # noqa: E731
                                          cnccl.NCCL_FLOAT32, cnccl.NCCL_SUM, stream)
            for _ in range(20):
                call()
            row("cupy_nccl_allreduce_1rank", "back_to_back", size, timed(call, N))
            row("cupy_nccl_allreduce_1rank", "synchronized", size, timed(synced(call), N))
    except Exception as e:
        print("cupy nccl unavailable:", e, flush=True)
    f.close()
    print("wrote", path, f"in {time.time() - T0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
