// The kernels PyTorch launches per layer (kernels.hpp). Shapes come from the layer's costs and its
// parents' output shapes: a convolution's GEMM depth K = forward FLOPs / (2 · output elements),
// its window = K / input channels; a linear layer's rows = output elements / out features.
//
// Host operators per layer are those PyTorch's eager mode dispatches (an nn.Module call, its
// ATen operator, views included; backward: one autograd node per differentiable operator),
// counted from torchvision's and Hugging Face's module code; autocast adds one cast operator per
// weight (cached for the iteration, but looked up at every use) and its backward.
#include "trainsim/workloads/kernels.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim::workloads {
namespace {

constexpr double kF32 = 4;  // fp32 element
// Host dispatch in units of a plain operator: a cuDNN convolution call also looks up its
// execution plan and builds descriptors (about twice a plain operator); a view (reshape,
// permute, transpose) allocates no memory and launches nothing (about half).
constexpr double kLibraryCall = 2;
constexpr double kView = 0.5;
// Hugging Face's layer code runs Python between its operators (shape arithmetic, mask and cache
// handling, output tuples): about ten plain operators' worth per transformer block and direction.
constexpr double kBlockPython = 10;
constexpr double kIndex = 8;  // int64 (max-pool argmax)

// Efficiencies of memory-bound kernel families relative to a plain streaming copy: reductions
// (batch- and layer-norm statistics and their backward) and scatters (max-pool backward, the
// embedding's sorted scatter-add).
constexpr double kReductionEfficiency = 0.8;
constexpr double kScatterEfficiency = 0.27;

Kernel gemm(double m, double n, double k, double bytes, double count = 1) {
  Kernel g;
  g.kind = KernelKind::gemm;
  g.m = m;
  g.n = n;
  g.k = k;
  g.count = count;
  g.flops = 2 * m * n * k * count;
  g.bytes = bytes;
  return g;
}

Kernel memory(double bytes, double efficiency = 1, double blocks = 0) {
  Kernel g;
  g.bytes = bytes;
  g.memory_efficiency = efficiency;
  g.parallel_blocks = blocks;
  return g;
}

bool half(Precision p) {
  return bytes_per_element(p) == 2;
}

const LayerCost* parent_of(const Workload& w, const LayerCost& layer) {
  return layer.parents.empty() ? nullptr : w.find_layer(layer.parents.front());
}

// Under autocast a GEMM's input is cast to the low precision unless a GEMM-precision op wrote it:
// norms, softmax, residual adds and dropout on the fp32 residual stream write fp32 tensors.
bool fp32_input(const Workload& w, const LayerCost& layer) {
  const LayerCost* p = parent_of(w, layer);
  if (p == nullptr) return false;
  return p->op_class == OpClass::normalization || p->op_class == OpClass::embedding || p->type == "add" ||
         p->type == "dropout" || p->type == "transformer";
}

struct ConvShape {
  double cin = 0, hin = 0, win = 0, cout = 0, hout = 0, wout = 0, k = 0, window = 0;
  bool depthwise = false;
};

ConvShape conv_shape(const Workload& w, const LayerCost& layer) {
  ConvShape s;
  const LayerCost* p = parent_of(w, layer);
  if (layer.output_shape.size() != 3 || p == nullptr || p->output_shape.size() != 3) return s;
  s.cin = static_cast<double>(p->output_shape[0]);
  s.hin = static_cast<double>(p->output_shape[1]);
  s.win = static_cast<double>(p->output_shape[2]);
  s.cout = static_cast<double>(layer.output_shape[0]);
  s.hout = static_cast<double>(layer.output_shape[1]);
  s.wout = static_cast<double>(layer.output_shape[2]);
  s.k = layer.flops_fwd / (2 * layer.output_elements);
  s.window = std::max(1.0, std::round(s.k / s.cin));
  s.depthwise = s.k < s.cin;  // grouped: channels see fewer inputs than there are
  return s;
}

// Tensor-core convolutions pad the input channels to a multiple of 8 (cuDNN's alignment for
// tensor-core kernels: 16 bytes of fp16/bf16): a 3-channel image costs the first layer 8/3 of its
// direct FLOPs.
double tensor_core_k(const ConvShape& s, Precision p) {
  if (p == Precision::fp32) return s.k;
  return std::ceil(s.cin / 8) * 8 * s.window;
}

// A 1×1 convolution in NCHW is a GEMM over each sample's [C, H·W] matrix as it lies; larger
// windows run NHWC kernels between layout transposes.
bool transposed(const ConvShape& s, Precision p) {
  return p != Precision::fp32 && s.window > 1;
}

LayerKernels conv_forward(const Workload& w, const LayerCost& l, double b, Precision p) {
  LayerKernels out;
  const double e = bytes_per_element(p);
  const ConvShape s = conv_shape(w, l);
  const double in = b * l.input_elements, o = b * l.output_elements;
  out.host_ops = kLibraryCall;
  if (s.depthwise || s.k == 0) {
    out.kernels.push_back(memory((in + o) * e + l.params * e));
    return out;
  }
  Kernel g = gemm(b * s.hout * s.wout, s.cout, tensor_core_k(s, p), (in + o) * e + l.params * e);
  g.winograd = s.window == 9 && s.hout == s.hin && s.wout == s.win;
  out.kernels.push_back(g);
  if (transposed(s, p)) out.kernels.push_back(memory(2 * (in + o) * e));  // NCHW ↔ NHWC around tensor-core kernels
  if (half(p)) {
    out.kernels.push_back(memory(l.params * (kF32 + e)));  // weight cast
    ++out.host_ops;
  }
  return out;
}

LayerKernels conv_backward(const Workload& w, const LayerCost& l, double b, Precision p, bool input_gradient) {
  LayerKernels out;
  const double e = bytes_per_element(p);
  const ConvShape s = conv_shape(w, l);
  const double in = b * l.input_elements, o = b * l.output_elements;
  out.host_ops = kLibraryCall;
  if (s.depthwise || s.k == 0) {
    out.kernels.push_back(memory((2 * in + 2 * o) * e + l.params * e, kScatterEfficiency));
    return out;
  }
  const bool winograd = s.window == 9 && s.hout == s.hin && s.wout == s.win;
  if (input_gradient) {
    Kernel d = gemm(b * s.hin * s.win, s.cin, s.cout * s.window, (in + o) * e + l.params * e);
    d.winograd = winograd;
    out.kernels.push_back(d);
  }
  Kernel wg = gemm(s.cout, tensor_core_k(s, p), b * s.hout * s.wout, (in + o) * e + l.params * kF32);
  wg.winograd = winograd;
  out.kernels.push_back(wg);
  if (transposed(s, p)) out.kernels.push_back(memory(2 * (o + in + (input_gradient ? in : 0)) * e));
  if (half(p)) {
    out.kernels.push_back(memory(l.params * (kF32 + e)));  // the weight cast's backward
    ++out.host_ops;
  }
  return out;
}

// A `linear` layer as its GEMM: [rows × k]·[k × n], n the output's last dimension, k from the
// forward FLOPs (2·k per output element), leading dimensions folded into the rows.
struct LinearShape {
  double n, rows, k, weights;
};
LinearShape linear_shape(const LayerCost& l, double b) {
  const double n = l.output_shape.empty() ? 1 : static_cast<double>(l.output_shape.back());
  const double k = l.flops_fwd / (2 * l.output_elements);
  return {n, b * l.output_elements / n, k, n * k};
}

LayerKernels linear_forward(const Workload& w, const LayerCost& l, double b, Precision p) {
  LayerKernels out;
  const double e = bytes_per_element(p);
  const auto [n, rows, k, weights] = linear_shape(l, b);
  out.host_ops = 1;
  out.kernels.push_back(gemm(rows, n, k, (rows * k + rows * n) * e + weights * e));
  if (half(p)) {
    out.kernels.push_back(memory(weights * (kF32 + e)));
    ++out.host_ops;
    if (fp32_input(w, l)) out.kernels.push_back(memory(rows * k * (kF32 + e)));
  }
  return out;
}

LayerKernels linear_backward(const Workload&, const LayerCost& l, double b, Precision p, bool input_gradient) {
  LayerKernels out;
  const double e = bytes_per_element(p);
  const auto [n, rows, k, weights] = linear_shape(l, b);
  out.host_ops = 1;
  if (input_gradient) out.kernels.push_back(gemm(rows, k, n, (rows * k + rows * n) * e + weights * e));
  if (l.flops_bwd_weight > 0) out.kernels.push_back(gemm(n, k, rows, (rows * k + rows * n) * e + weights * kF32));
  if (static_cast<double>(l.params) > weights)
    out.kernels.push_back(memory(rows * n * e, kReductionEfficiency));  // bias gradient
  if (half(p)) {
    out.kernels.push_back(memory(weights * (kF32 + e)));
    ++out.host_ops;
  }
  return out;
}

// A transformer block (Hugging Face BERT layer or GPT-2 block): four attention projections,
// fused attention, two norms, GELU feed-forward, three dropouts, two residual adds.
struct BlockShape {
  double t = 0, d = 0, f = 0, heads = 1;
  bool python_gelu = false;  ///< "gelu_new": eight elementwise operators instead of one
};

BlockShape block_shape(const LayerCost& l) {
  BlockShape s;
  if (l.output_shape.size() != 2) return s;
  s.t = static_cast<double>(l.output_shape[0]);
  s.d = static_cast<double>(l.output_shape[1]);
  const double params = static_cast<double>(l.params);
  s.f = std::max(1.0, std::round((params - 4 * s.d * s.d - 9 * s.d) / (2 * s.d + 1)));
  s.heads = std::max<double>(1, static_cast<double>(l.heads));
  s.python_gelu = l.activation == "gelu_new";
  return s;
}

// Attention's score, softmax and context on [T, D] with `heads` heads, forward or backward.
// Fused (PyTorch's scaled_dot_product_attention on its flash / memory-efficient kernels): one
// kernel, no T×T tensor, the backward recomputes the scores (2.5× the forward's FLOPs). Eager
// (Hugging Face's "eager" attention, and what the given measurements show): batched GEMMs
// QKᵀ and PV over b·heads matrices with every T×T pass in memory: scale, mask, softmax (fp32
// under autocast), dropout with its mask, the cast back for the second GEMM.
void attention_core(LayerKernels& out, double b, double t, double d, double heads, Precision p, bool backward,
                    bool fused) {
  const double e = bytes_per_element(p);
  const double x = b * t * d;
  if (fused) {
    Kernel a;
    a.kind = KernelKind::attention;
    a.flops = (backward ? 2.5 : 1.0) * 4 * b * t * t * d;
    a.bytes = (backward ? 8 : 4) * x * e;
    // fp32 inputs run the memory-efficient kernel on CUDA cores (TF32 or not); 16-bit ones flash
    // attention on tensor cores.
    a.fp32_only = !half(p);
    out.kernels.push_back(a);
    out.host_ops += 1;
    return;
  }
  const double dh = d / heads, count = b * heads, scores = count * t * t;
  const double f = half(p) ? kF32 : e;  // softmax's output and dropout's tensors
  if (!backward) {
    out.kernels.push_back(gemm(t, t, dh, 2 * x * e + scores * e, count));
    out.kernels.push_back(memory(2 * scores * e));                 // scale
    out.kernels.push_back(memory(2 * scores * e));                 // mask
    out.kernels.push_back(memory(scores * (e + f)));               // softmax
    out.kernels.push_back(memory(scores * (2 * f + 1)));           // dropout and its mask
    if (half(p)) out.kernels.push_back(memory(scores * (f + e)));  // cast for the context GEMM
    out.kernels.push_back(gemm(t, dh, t, 2 * x * e + scores * e, count));
    out.host_ops += 6 + (half(p) ? 1 : 0);
    return;
  }
  out.kernels.push_back(gemm(t, t, dh, 2 * x * e + scores * e, count));  // dP = dO·Vᵀ
  out.kernels.push_back(gemm(t, dh, t, 2 * x * e + scores * e, count));  // dV = Pᵀ·dO
  if (half(p)) out.kernels.push_back(memory(scores * (f + e)));
  out.kernels.push_back(memory(scores * (2 * f + 1)));
  out.kernels.push_back(memory(3 * scores * f));
  out.kernels.push_back(memory(2 * scores * e));
  out.kernels.push_back(memory(2 * scores * e));
  out.kernels.push_back(gemm(t, dh, t, 2 * x * e + scores * e, count));  // dQ = dS·K
  out.kernels.push_back(gemm(t, dh, t, 2 * x * e + scores * e, count));  // dK = dSᵀ·Q
  out.host_ops += 6 + (half(p) ? 1 : 0);
}

LayerKernels block_forward(const LayerCost& l, double b, Precision p, bool fused) {
  LayerKernels out;
  const double e = bytes_per_element(p);
  const BlockShape s = block_shape(l);
  const double rows = b * s.t, x = rows * s.d, h = rows * s.f;
  auto lin = [&](double n, double k) { out.kernels.push_back(gemm(rows, n, k, rows * (n + k) * e + n * k * e)); };
  out.kernels.push_back(memory(x * (kF32 + kF32), kReductionEfficiency));  // layer norm 1
  lin(3 * s.d, s.d);                                                       // Q, K, V
  attention_core(out, b, s.t, s.d, s.heads, p, false, fused);
  out.kernels.push_back(memory(2 * x * e));                                // heads back to [T, D] (contiguous copy)
  lin(s.d, s.d);                                                           // output projection
  out.kernels.push_back(memory(x * (2 * e + 1)));                          // dropout (mask of bytes)
  out.kernels.push_back(memory(x * (e + 2 * kF32)));                       // residual add
  out.kernels.push_back(memory(x * (kF32 + kF32), kReductionEfficiency));  // layer norm 2
  lin(s.f, s.d);                                                           // feed-forward in
  // gelu_new under autocast computes in fp32 (pow is on autocast's fp32 list; the rest promotes).
  out.kernels.push_back(memory(s.python_gelu ? 18 * h * kF32 : 2 * h * e));  // GELU
  lin(s.d, s.f);                                                             // feed-forward out
  out.kernels.push_back(memory(x * (2 * e + 1)));
  out.kernels.push_back(memory(x * (e + 2 * kF32)));
  // Modules and operators besides attention's core: 2 norms, 6 linears (Q, K, V, output, two
  // feed-forward), 6 head views/permutes, the context permute and reshape (views) and copy,
  // 3 dropouts, 2 adds, the activation.
  out.host_ops += 2 + 6 + 8 * kView + 1 + 3 + 2 + (s.python_gelu ? 8 : 1) + kBlockPython;
  if (half(p)) {
    const double weights = 4 * s.d * s.d + 2 * s.d * s.f;
    out.kernels.push_back(memory(weights * (kF32 + e)));
    out.kernels.push_back(memory(2 * x * (kF32 + e)));  // the norms' fp32 outputs cast for Q/K/V and feed-forward in
    out.host_ops += 6 + 2;
  }
  return out;
}

LayerKernels block_backward(const LayerCost& l, double b, Precision p, bool fused) {
  LayerKernels out;
  const double e = bytes_per_element(p);
  const BlockShape s = block_shape(l);
  const double rows = b * s.t, x = rows * s.d, h = rows * s.f;
  auto lin = [&](double n, double k) {
    out.kernels.push_back(gemm(rows, k, n, rows * (n + k) * e + n * k * e));     // input gradient
    out.kernels.push_back(gemm(n, k, rows, rows * (n + k) * e + n * k * kF32));  // weight gradient
    out.kernels.push_back(memory(rows * n * e, kReductionEfficiency));           // bias gradient
  };
  out.kernels.push_back(memory(x * (e + 2 * kF32)));  // dropout 3 + residual gradient add
  lin(s.d, s.f);
  out.kernels.push_back(memory(s.python_gelu ? 25 * h * kF32 : 3 * h * e));  // GELU backward
  lin(s.f, s.d);
  out.kernels.push_back(memory(x * 5 * kF32, kReductionEfficiency));  // layer norm 2 backward
  out.kernels.push_back(memory(x * (e + 2 * kF32)));                  // dropout 2 + residual gradient add
  lin(s.d, s.d);
  out.kernels.push_back(memory(2 * x * e));
  attention_core(out, b, s.t, s.d, s.heads, p, true, fused);
  lin(3 * s.d, s.d);
  out.kernels.push_back(memory(x * 5 * kF32, kReductionEfficiency));  // layer norm 1 backward
  out.host_ops += 2 + 6 + 8 * kView + 1 + 3 + 2 + (s.python_gelu ? 8 : 1) + kBlockPython;
  if (half(p)) {
    const double weights = 4 * s.d * s.d + 2 * s.d * s.f;
    out.kernels.push_back(memory(weights * (kF32 + e)));
    out.kernels.push_back(memory(2 * x * (kF32 + e)));
    out.host_ops += 6 + 2;
  }
  return out;
}

// Self-attention alone (the `attention` type): Q/K/V and output projections around the core.
LayerKernels attention_kernels(const LayerCost& l, double b, Precision p, bool backward, bool fused) {
  LayerKernels out;
  if (l.output_shape.size() != 2) return out;
  const double e = bytes_per_element(p);
  const double t = static_cast<double>(l.output_shape[0]), d = static_cast<double>(l.output_shape[1]);
  const double heads = std::max<double>(1, static_cast<double>(l.heads));
  const double rows = b * t, x = rows * d;
  out.kernels.push_back(gemm(rows, 4 * d, d, 8 * x * e + 4 * d * d * e, backward ? 2 : 1));
  attention_core(out, b, t, d, heads, p, backward, fused);
  out.host_ops += 8;
  return out;
}

double elementwise_bytes(double elements, double passes, double element) {
  return elements * passes * element;
}

// A GEMM of a layer that is not a typed `linear`, `attention` or `transformer` (a layer-graph
// `matmul`, an ONNX MatMul or Gemm, batched or not): [rows × K]·[K × N], N the output's last
// dimension, K from the forward FLOPs (2·K per output element), leading dimensions folded into
// the rows; `flops` over GEMMs of that shape (the backward's two products are two of them).
Kernel plain_gemm(const LayerCost& l, double b, double flops, double bytes) {
  const double n = l.output_shape.empty() ? 1 : std::max(1.0, static_cast<double>(l.output_shape.back()));
  const double rows = b * l.output_elements / n;
  const double k = l.output_elements > 0 ? std::max(1.0, l.flops_fwd / (2 * l.output_elements)) : 1;
  Kernel g = gemm(rows, n, k, bytes);
  if (g.flops > 0) g.count = std::max(1.0, flops / g.flops);
  g.flops = flops;
  return g;
}

}  // namespace

LayerKernels forward_kernels(const Workload& w, const LayerCost& l, double b, Precision p,
                             const KernelOptions& options) {
  const double e = bytes_per_element(p);
  const double in = b * l.input_elements, o = b * l.output_elements;
  LayerKernels out;
  switch (l.op_class) {
    case OpClass::data: return out;
    case OpClass::conv: return conv_forward(w, l, b, p);
    case OpClass::attention:
      if (l.type == "transformer") return block_forward(l, b, p, options.fused_attention);
      if (l.type == "attention") return attention_kernels(l, b, p, false, options.fused_attention);
      // An ONNX MatMul of two activations (attention's QKᵀ or PV, node by node): a batched GEMM.
      out.kernels.push_back(plain_gemm(l, b, l.flops_fwd * b, (in + o) * e));
      out.host_ops = 1;
      return out;
    case OpClass::matmul:
      if (l.type == "linear") return linear_forward(w, l, b, p);
      out.kernels.push_back(plain_gemm(l, b, l.flops_fwd * b, (in + o) * e + static_cast<double>(l.params) * e));
      out.host_ops = 1;
      return out;
    case OpClass::normalization: {
      // Batch-norm: statistics pass and normalisation pass, one block per channel (NCHW).
      const bool batch_norm = l.type == "batchnorm";
      const double channels = batch_norm && !l.output_shape.empty() ? static_cast<double>(l.output_shape[0]) : 0;
      out.kernels.push_back(memory(elementwise_bytes(o, batch_norm ? 3 : 2, kF32), kReductionEfficiency, channels));
      out.host_ops = batch_norm ? 2 : 1;  // + the num_batches_tracked increment
      return out;
    }
    case OpClass::embedding:
      out.kernels.push_back(memory(2 * o * kF32));
      out.host_ops = 1;
      return out;
    case OpClass::loss:
      out.kernels.push_back(memory(in * ((half(p) ? e + kF32 : 0) + 3 * kF32)));
      out.host_ops = 3;
      return out;
    case OpClass::pooling:
      if (l.type == "maxpool2d") {
        out.kernels.push_back(memory(in * e + o * (e + kIndex)));
      } else {
        out.kernels.push_back(memory((in + o) * e));
      }
      out.host_ops = 1;
      return out;
    case OpClass::reshape:
      if (l.type == "concat") out.kernels.push_back(memory(2 * o * e));
      out.host_ops = l.type == "concat" ? 1 : kView;
      return out;
    case OpClass::elementwise:
      if (l.type == "dropout") {
        out.kernels.push_back(memory(o * (2 * e + 1)));
      } else if (l.type == "add") {
        out.kernels.push_back(memory((in + o) * e));
      } else if (l.type == "softmax") {
        out.kernels.push_back(memory(o * (e + kF32)));
      } else {
        out.kernels.push_back(memory((in + o) * e));
      }
      out.host_ops = 1;
      return out;
  }
  return out;
}

LayerKernels backward_kernels(const Workload& w, const LayerCost& l, double b, Precision p, bool input_gradient,
                              const KernelOptions& options) {
  const double e = bytes_per_element(p);
  const double in = b * l.input_elements, o = b * l.output_elements;
  LayerKernels out;
  switch (l.op_class) {
    case OpClass::data: return out;
    case OpClass::conv: return conv_backward(w, l, b, p, input_gradient);
    case OpClass::attention:
      if (l.type == "transformer") return block_backward(l, b, p, options.fused_attention);
      if (l.type == "attention") return attention_kernels(l, b, p, true, options.fused_attention);
      out.kernels.push_back(plain_gemm(l, b, l.flops_bwd() * b, 2 * (in + o) * e));
      out.host_ops = 1;
      return out;
    case OpClass::matmul:
      if (l.type == "linear") return linear_backward(w, l, b, p, input_gradient);
      out.kernels.push_back(
          plain_gemm(l, b, l.flops_bwd() * b, 2 * (in + o) * e + static_cast<double>(l.params) * kF32));
      out.host_ops = 1;
      return out;
    case OpClass::normalization: {
      const bool batch_norm = l.type == "batchnorm";
      const double channels = batch_norm && !l.output_shape.empty() ? static_cast<double>(l.output_shape[0]) : 0;
      // The backward's per-channel blocks need two resident per SM to hide their reductions.
      out.kernels.push_back(memory(elementwise_bytes(o, 5, kF32), kReductionEfficiency, channels / 2));
      out.host_ops = 1;
      return out;
    }
    case OpClass::embedding:
      // embedding_dense_backward: zero the table's gradient, sort the indices, scatter-add rows.
      out.kernels.push_back(memory(static_cast<double>(l.params) * kF32 + 2 * o * kF32, kScatterEfficiency));
      out.host_ops = 1;
      return out;
    case OpClass::loss:
      if (input_gradient) out.kernels.push_back(memory(in * ((half(p) ? e + kF32 : 0) + 4 * kF32)));
      out.host_ops = 3;
      return out;
    case OpClass::pooling:
      if (!input_gradient) return out;
      if (l.type == "maxpool2d") {
        out.kernels.push_back(memory(in * e));                                         // zero-fill
        out.kernels.push_back(memory(o * (e + kIndex) + in * e, kScatterEfficiency));  // scatter
      } else {
        out.kernels.push_back(memory((in + o) * e));
      }
      out.host_ops = 1;
      return out;
    case OpClass::reshape: out.host_ops = l.type == "concat" ? 1 : kView; return out;
    case OpClass::elementwise:
      if (!input_gradient) return out;
      if (l.type == "dropout") {
        out.kernels.push_back(memory(o * (2 * e + 1)));
      } else if (l.type == "add") {
        out.kernels.push_back(memory(3 * o * e));  // the gradients of the two branches meet at the fork
      } else if (l.type == "softmax") {
        out.kernels.push_back(memory(3 * o * kF32));
      } else {
        out.kernels.push_back(memory(3 * o * e));
      }
      out.host_ops = 1;
      return out;
  }
  return out;
}

}  // namespace trainsim::workloads
