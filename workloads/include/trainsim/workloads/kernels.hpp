#pragma once
// The kernels an eager framework (PyTorch 2.x, cuDNN and cuBLAS underneath) launches for one layer,
// and the operators it dispatches from the host to launch them: what the GPU compute model
// (plan/compute_model.hpp) times. Pure data, no GPU figures.
//
// Each layer's forward and backward become GEMM-shaped kernels (convolutions as implicit GEMMs,
// linear layers, attention) and memory-bound kernels with the bytes the framework really moves:
//   * under bf16/fp16 autocast (torch.autocast), batch-norm, layer-norm, softmax and the loss run
//     in fp32 (PyTorch's autocast op reference, "CUDA Ops that can autocast to float32"), and the
//     tensors they write are fp32; GEMM inputs are cast to the low precision by separate kernels;
//   * batch-norm forward reads its input twice (statistics, then normalisation) and backward
//     reads the output gradient and the input twice (cuDNN's spatial batch-norm), one thread
//     block per channel, so a layer with fewer channels than SMs leaves SMs idle;
//   * max-pool saves int64 argmax indices and its backward zero-fills and scatters;
//   * torchvision's convolutions are NCHW: tensor-core kernels (tf32, bf16) need NHWC, so cuDNN
//     transposes inputs and outputs around them (the nchwToNhwc/nhwcToNchw kernels of a profile);
//   * fp32 3×3 stride-1 convolutions may run Winograd F(2×2, 3×3) (Lavin and Gray, "Fast
//     Algorithms for Convolutional Neural Networks", 2016; cuDNN's WINOGRAD algorithms), 2.25×
//     fewer multiplies than the direct count;
//   * attention runs eagerly (batched GEMMs, every T×T pass in memory) or, with fused_attention,
//     as PyTorch's fused scaled_dot_product_attention (no T×T tensor; the backward recomputes).
#include <vector>

#include "trainsim/core/units.hpp"
#include "trainsim/workloads/workload.hpp"

namespace trainsim::workloads {

enum class KernelKind {
  gemm,       ///< C[m×n] = A[m×k]·B[k×n], `count` independent ones (batched GEMM, grouped convolution)
  attention,  ///< fused attention (flash / memory-efficient): `flops` on tensor cores or CUDA cores
  memory      ///< streaming kernel: `bytes` at the memory's streaming bandwidth
};

/// One kernel launch (or a small fixed group of them) for the local batch.
struct Kernel {
  KernelKind kind = KernelKind::memory;
  double m = 0, n = 0, k = 0;  ///< GEMM shape (gemm only)
  double count = 1;            ///< independent GEMMs of that shape
  double flops = 0;            ///< FLOPs (2 per multiply-add)
  double bytes = 0;            ///< bytes read and written in device memory
  /// Fraction of the streaming bandwidth a memory kernel reaches besides SM occupancy: 1 for plain
  /// elementwise kernels, lower for reductions and scatters.
  double memory_efficiency = 1;
  /// Thread blocks a memory kernel can use (0 = enough to fill every SM): cuDNN's NCHW
  /// batch-norm parallelises over channels.
  double parallel_blocks = 0;
  bool fp32_only = false;  ///< runs in fp32 CUDA-core arithmetic whatever the precision
  bool winograd = false;   ///< fp32 3×3 stride-1 convolution eligible for Winograd transforms
  bool backward = false;   ///< a backward GEMM (data or weight gradient)
};

/// What one phase of one layer costs the framework and the GPU.
struct LayerKernels {
  std::vector<Kernel> kernels;
  /// Operators dispatched from Python/C++, in units of a plain operator (a library call such as
  /// cuDNN's convolution counts 2, a view ½).
  double host_ops = 0;
};

/// How the framework runs what has several implementations.
struct KernelOptions {
  /// scaled_dot_product_attention's fused kernels (Hugging Face's default "sdpa"); false: eager
  bool fused_attention = true;
};

/// Kernels of the forward of `layer` for `batch` samples at `precision` (fp16/bf16 = autocast
/// with fp32 weights). `workload` gives the parents' shapes.
LayerKernels forward_kernels(const Workload& workload, const LayerCost& layer, double batch, Precision precision,
                             const KernelOptions& options = {});
/// Kernels of the backward; `input_gradient` says whether the layer's input gradient is needed.
LayerKernels backward_kernels(const Workload& workload, const LayerCost& layer, double batch, Precision precision,
                              bool input_gradient, const KernelOptions& options = {});

}  // namespace trainsim::workloads
