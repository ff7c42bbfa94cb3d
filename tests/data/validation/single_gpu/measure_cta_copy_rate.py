#!/usr/bin/env python3
"""How fast one thread block (one NCCL channel's CTA) moves data through GPU memory: a copy
(c = a) and a reduce-copy (c = a + b, what a tree hop's CTA does with the data it receives and its
own), float4 loads and stores over a grid-stride loop, 1 to 32 blocks of 512 or 640 threads (NCCL's
Simple and LL128 thread counts), 1 to 64 MiB of output. Local memory only: an upper bound on what
one CTA moves over NVLink, where each access crosses the link. Writes cta_copy_rate.csv to $OUT (committed as h200_cta_copy_rate_2026.csv)."""
import csv, os, statistics, tempfile
import cupy as cp

OUT = os.environ.get("OUT", tempfile.mkdtemp())
SRC = r'''
extern "C" __global__ void copy4(const float4* __restrict__ a, float4* __restrict__ c, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) c[i] = a[i];
}
extern "C" __global__ void reduce4(const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ c, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}
'''
mod = cp.RawModule(code=SRC)
copy4, reduce4 = mod.get_function("copy4"), mod.get_function("reduce4")
dev = cp.cuda.Device(0)
name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
rows = []
for mib in [1, 8, 64]:
    nbytes = mib << 20
    n = nbytes // 16
    a = cp.ones(nbytes // 4, dtype=cp.float32); b = cp.ones_like(a); c = cp.empty_like(a)
    for threads in [512, 640]:
        for blocks in [1, 2, 4, 16, 32]:
            for kind in ["copy", "reduce_copy"]:
                args = (a, c, cp.int64(n)) if kind == "copy" else (a, b, c, cp.int64(n))
                f = copy4 if kind == "copy" else reduce4
                for _ in range(3): f((blocks,), (threads,), args)
                times = []
                for _ in range(15):
                    s, e = cp.cuda.Event(), cp.cuda.Event()
                    s.record(); f((blocks,), (threads,), args); e.record(); e.synchronize()
                    times.append(cp.cuda.get_elapsed_time(s, e) / 1e3)
                t = statistics.median(times)
                rows.append(dict(gpu=name, kind=kind, output_MiB=mib, blocks=blocks, threads=threads, time_s=t,
                                 output_GBps=nbytes / t / 1e9))
                print(f"{kind:12s} {mib:3d} MiB {blocks:3d} x {threads} threads: {t*1e6:9.1f} us  {nbytes/t/1e9:7.1f} GB/s out per {blocks} block(s)", flush=True)
with open(f"{OUT}/cta_copy_rate.csv", "w", newline="") as fh:
    w = csv.DictWriter(fh, fieldnames=list(rows[0].keys())); w.writeheader(); w.writerows(rows)
