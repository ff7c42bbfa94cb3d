#!/usr/bin/env python3
"""Writes ONNX graphs of ResNet-50, BERT-base and GPT-2 small as torch.onnx.export lays them out.

There is no PyTorch on the build machine, so the graphs are built operator by operator with the
`onnx.helper` of Debian's python3-onnx, following the operator sequences torch.onnx.export emits
for torchvision's resnet50 (opset 13: Conv without bias + BatchNormalization in training-mode
export, Relu, MaxPool, Add, GlobalAveragePool, Flatten, Gemm) and for Hugging Face's BertModel
(opset 17: LayerNormalization, erf GELU, Linear on 3-D inputs as MatMul with the transposed weight
+ Add of the bias, attention as Reshape/Transpose/MatMul/Div/Add/Softmax) and GPT2LMHeadModel
(opset 14: LayerNorm decomposed into ReduceMean/Sub/Pow/Sqrt/Div, Conv1D as MatMul + Add, the
tanh GELU, a causal mask sliced from the `bias` buffer by the sequence length, the LM head tied
to the token embedding through a Transpose). The batch and sequence are dynamic axes.

Weights are initializers with their shapes and their data marked external (a file that is never
written): trainsim reads shapes, not values, so the files stay a few tens of kilobytes.

It also writes the bad models of the reader's tests: a truncated file, a graph with a cycle, an
operator trainsim does not cost, and an input dimension nothing can bind.

usage: make_onnx_models.py ROOT           writes, under the repository root ROOT,
                                          tests/data/good/workloads/onnx/*.onnx, tests/data/bad/workloads/onnx/*.onnx,
                                          their copies for the audit (tests/data/audit/onnx/) and the
                                          scenarios' model (scenarios/models/bert_base.onnx)
       make_onnx_models.py --check ROOT   exit 1 unless those files hold exactly these bytes
"""
import math
import os
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h


class Builder:
    def __init__(self, name):
        self.name = name
        self.nodes = []
        self.inits = []
        self.count = 0

    def node(self, op, inputs, name=None, outputs=1, **attrs):
        self.count += 1
        name = name or f"/{op}_{self.count}"
        outs = [f"{name}_output_{i}" for i in range(outputs)]
        self.nodes.append(h.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0] if outputs == 1 else outs

    def weight(self, name, dims, dtype=T.FLOAT):
        t = T()
        t.name = name
        t.data_type = dtype
        t.dims.extend(dims)
        t.data_location = T.EXTERNAL
        entry = t.external_data.add()
        entry.key, entry.value = "location", f"{self.name}.weights"
        self.inits.append(t)
        return name

    def ints(self, name, values):
        self.inits.append(h.make_tensor(name, T.INT64, [len(values)], values))
        return name

    def scalar(self, value, dtype=T.FLOAT):
        return self.node("Constant", [], value=h.make_tensor("value", dtype, [], [value]))

    def model(self, inputs, outputs, opset):
        graph = h.make_graph(self.nodes, self.name, inputs, outputs, self.inits)
        m = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], producer_name="pytorch", producer_version="2.1.0")
        m.ir_version = 8
        return m


def resnet50():
    b = Builder("resnet50")

    def conv_bn(x, prefix, cin, cout, k, stride, pad, relu=True):
        w = b.weight(prefix + ".weight" if not prefix.endswith("downsample") else prefix + ".0.weight", [cout, cin, k, k])
        y = b.node("Conv", [x, w], name=f"/{prefix}/Conv", kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4)
        bn = prefix.replace("conv", "bn") if not prefix.endswith("downsample") else prefix + ".1"
        params = [b.weight(f"{bn}.{p}", [cout]) for p in ("weight", "bias", "running_mean", "running_var")]
        y = b.node("BatchNormalization", [y] + params, name=f"/{bn}/BatchNormalization", epsilon=1e-5, momentum=0.9)
        return b.node("Relu", [y], name=f"/{prefix}/Relu") if relu else y

    x = conv_bn("input", "conv1", 3, 64, 7, 2, 3)
    x = b.node("MaxPool", [x], name="/maxpool/MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for layer, (width, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], start=1):
        for i in range(blocks):
            p = f"layer{layer}.{i}"
            s = stride if i == 0 else 1
            y = conv_bn(x, f"{p}.conv1", cin, width, 1, 1, 0)
            y = conv_bn(y, f"{p}.conv2", width, width, 3, s, 1)
            y = conv_bn(y, f"{p}.conv3", width, width * 4, 1, 1, 0, relu=False)
            shortcut = conv_bn(x, f"{p}.downsample", cin, width * 4, 1, s, 0, relu=False) if i == 0 else x
            x = b.node("Relu", [b.node("Add", [y, shortcut], name=f"/{p}/Add")], name=f"/{p}/Relu_out")
            cin = width * 4
    x = b.node("GlobalAveragePool", [x], name="/avgpool/GlobalAveragePool")
    x = b.node("Flatten", [x], name="/Flatten", axis=1)
    x = b.node("Gemm", [x, b.weight("fc.weight", [1000, 2048]), b.weight("fc.bias", [1000])], name="/fc/Gemm", transB=1)
    b.nodes[-1].output[0] = "output"
    return b.model([h.make_tensor_value_info("input", T.FLOAT, ["batch", 3, 224, 224])],
                   [h.make_tensor_value_info("output", T.FLOAT, ["batch", 1000])], 13)


def linear(b, x, prefix, cin, cout):
    """torch.nn.Linear on a 3-D input: MatMul with the folded transposed weight, then the bias."""
    y = b.node("MatMul", [x, b.weight(f"onnx::MatMul_{prefix}", [cin, cout])], name=f"/{prefix}/MatMul")
    return b.node("Add", [b.weight(f"{prefix}.bias", [cout]), y], name=f"/{prefix}/Add")


def heads(b, x, prefix, n_heads, head_dim, perm):
    shape = b.ints(f"{prefix}_shape", [0, 0, n_heads, head_dim])
    return b.node("Transpose", [b.node("Reshape", [x, shape], name=f"{prefix}/Reshape")], name=f"{prefix}/Transpose", perm=perm)


def bert_base(layers=12, d=768, n_heads=12, ffn=3072, vocab=30522, positions=512):
    b = Builder("bert_base")
    seq_len = b.node("Gather", [b.node("Shape", ["input_ids"], name="/embeddings/Shape"), b.scalar(1, T.INT64)],
                     name="/embeddings/Gather_len", axis=0)
    ends = b.node("Unsqueeze", [seq_len, b.ints("axes0", [0])], name="/embeddings/Unsqueeze")
    b.inits.append(h.make_tensor("embeddings.position_ids", T.INT64, [1, positions], list(range(positions))))
    pos_ids = b.node("Slice", ["embeddings.position_ids", b.ints("start0", [0]), ends, b.ints("axes1", [1])],
                     name="/embeddings/Slice")
    word = b.node("Gather", [b.weight("embeddings.word_embeddings.weight", [vocab, d]), "input_ids"], name="/embeddings/word_embeddings/Gather")
    typ = b.node("Gather", [b.weight("embeddings.token_type_embeddings.weight", [2, d]), "token_type_ids"],
                 name="/embeddings/token_type_embeddings/Gather")
    pos = b.node("Gather", [b.weight("embeddings.position_embeddings.weight", [positions, d]), pos_ids],
                 name="/embeddings/position_embeddings/Gather")
    x = b.node("Add", [b.node("Add", [word, typ], name="/embeddings/Add"), pos], name="/embeddings/Add_1")

    def layer_norm(x, prefix):
        return b.node("LayerNormalization", [x, b.weight(f"{prefix}.weight", [d]), b.weight(f"{prefix}.bias", [d])],
                      name=f"/{prefix}/LayerNormalization", axis=-1, epsilon=1e-12)

    x = layer_norm(x, "embeddings.LayerNorm")
    # The extended attention mask: (1 − mask[:, None, None, :]) · float.min.
    m = b.node("Cast", [b.node("Unsqueeze", ["attention_mask", b.ints("axes12", [1, 2])], name="/Unsqueeze_mask")], name="/Cast_mask", to=T.FLOAT)
    m = b.node("Mul", [b.node("Sub", [b.scalar(1.0), m], name="/Sub_mask"), b.scalar(-3.4028234663852886e38)], name="/Mul_mask")
    hd = d // n_heads
    for i in range(layers):
        p = f"encoder.layer.{i}"
        q = heads(b, linear(b, x, f"{p}.attention.self.query", d, d), f"/{p}/attention/self/q", n_heads, hd, [0, 2, 1, 3])
        k = heads(b, linear(b, x, f"{p}.attention.self.key", d, d), f"/{p}/attention/self/k", n_heads, hd, [0, 2, 3, 1])
        v = heads(b, linear(b, x, f"{p}.attention.self.value", d, d), f"/{p}/attention/self/v", n_heads, hd, [0, 2, 1, 3])
        s = b.node("MatMul", [q, k], name=f"/{p}/attention/self/MatMul")
        s = b.node("Div", [s, b.scalar(math.sqrt(hd))], name=f"/{p}/attention/self/Div")
        s = b.node("Add", [s, m], name=f"/{p}/attention/self/Add")
        s = b.node("Softmax", [s], name=f"/{p}/attention/self/Softmax", axis=-1)
        c = b.node("MatMul", [s, v], name=f"/{p}/attention/self/MatMul_1")
        c = b.node("Transpose", [c], name=f"/{p}/attention/self/Transpose_3", perm=[0, 2, 1, 3])
        c = b.node("Reshape", [c, b.ints(f"/{p}/merge_shape", [0, 0, d])], name=f"/{p}/attention/self/Reshape_3")
        a = linear(b, c, f"{p}.attention.output.dense", d, d)
        x = layer_norm(b.node("Add", [a, x], name=f"/{p}/attention/output/Add"), f"{p}.attention.output.LayerNorm")
        f = linear(b, x, f"{p}.intermediate.dense", d, ffn)
        g = b.node("Erf", [b.node("Div", [f, b.scalar(math.sqrt(2.0))], name=f"/{p}/intermediate/Div")], name=f"/{p}/intermediate/Erf")
        g = b.node("Mul", [b.node("Mul", [f, b.node("Add", [g, b.scalar(1.0)], name=f"/{p}/intermediate/Add")],
                                  name=f"/{p}/intermediate/Mul"), b.scalar(0.5)], name=f"/{p}/intermediate/Mul_1")
        o = linear(b, g, f"{p}.output.dense", ffn, d)
        x = layer_norm(b.node("Add", [o, x], name=f"/{p}/output/Add"), f"{p}.output.LayerNorm")
    b.nodes[-1].output[0] = "last_hidden_state"
    x = "last_hidden_state"
    first = b.node("Gather", [x, b.scalar(0, T.INT64)], name="/pooler/Gather", axis=1)
    pooled = b.node("Gemm", [first, b.weight("pooler.dense.weight", [d, d]), b.weight("pooler.dense.bias", [d])], name="/pooler/dense/Gemm",
                    transB=1)
    b.node("Tanh", [pooled], name="/pooler/activation/Tanh")
    b.nodes[-1].output[0] = "pooler_output"
    ids = [h.make_tensor_value_info(n, T.INT64, ["batch", "sequence"]) for n in ("input_ids", "attention_mask", "token_type_ids")]
    return b.model(ids, [h.make_tensor_value_info("last_hidden_state", T.FLOAT, ["batch", "sequence", d]),
                         h.make_tensor_value_info("pooler_output", T.FLOAT, ["batch", d])], 17)


def gpt2(layers=12, d=768, n_heads=12, vocab=50257, positions=1024):
    b = Builder("gpt2")
    seq_len = b.node("Gather", [b.node("Shape", ["input_ids"], name="/transformer/Shape"), b.scalar(1, T.INT64)],
                     name="/transformer/Gather_len", axis=0)
    pos_ids = b.node("Unsqueeze", [b.node("Range", [b.scalar(0, T.INT64), seq_len, b.scalar(1, T.INT64)], name="/transformer/Range"),
                                   b.ints("axes0", [0])], name="/transformer/Unsqueeze")
    wte = b.weight("transformer.wte.weight", [vocab, d])
    x = b.node("Add", [b.node("Gather", [wte, "input_ids"], name="/transformer/wte/Gather"),
                       b.node("Gather", [b.weight("transformer.wpe.weight", [positions, d]), pos_ids], name="/transformer/wpe/Gather")],
               name="/transformer/Add")

    def layer_norm(x, prefix):
        mean = b.node("ReduceMean", [x], name=f"/{prefix}/ReduceMean", axes=[-1])
        c = b.node("Sub", [x, mean], name=f"/{prefix}/Sub")
        var = b.node("ReduceMean", [b.node("Pow", [c, b.scalar(2.0)], name=f"/{prefix}/Pow")], name=f"/{prefix}/ReduceMean_1", axes=[-1])
        std = b.node("Sqrt", [b.node("Add", [var, b.scalar(1e-5)], name=f"/{prefix}/Add")], name=f"/{prefix}/Sqrt")
        y = b.node("Mul", [b.node("Div", [c, std], name=f"/{prefix}/Div"), b.weight(f"{prefix}.weight", [d])], name=f"/{prefix}/Mul")
        return b.node("Add", [y, b.weight(f"{prefix}.bias", [d])], name=f"/{prefix}/Add_1")

    def conv1d(x, prefix, cin, cout):
        """Hugging Face's Conv1D: addmm of the weight [in, out], exported as MatMul + Add."""
        y = b.node("MatMul", [x, b.weight(f"{prefix}.weight", [cin, cout])], name=f"/{prefix}/MatMul")
        return b.node("Add", [b.weight(f"{prefix}.bias", [cout]), y], name=f"/{prefix}/Add")

    hd = d // n_heads
    masked_bias = b.scalar(-3.4028234663852886e38)
    b.weight("transformer.h.bias", [1, 1, positions, positions], T.BOOL)  # the causal mask buffer (lower triangle)
    ends = b.node("Unsqueeze", [seq_len, b.ints("axes_0", [0])], name="/transformer/Unsqueeze_len")
    causal = b.node("Slice", ["transformer.h.bias", b.ints("zeros2", [0, 0]), b.node("Concat", [ends, ends], name="/transformer/Concat_len", axis=0),
                              b.ints("axes23", [2, 3])], name="/transformer/Slice_mask")
    for i in range(layers):
        p = f"transformer.h.{i}"
        qkv = conv1d(layer_norm(x, f"{p}.ln_1"), f"{p}.attn.c_attn", d, 3 * d)
        q, k, v = b.node("Split", [qkv, b.ints(f"/{p}/split", [d, d, d])], name=f"/{p}/attn/Split", outputs=3, axis=2)
        q = heads(b, q, f"/{p}/attn/q", n_heads, hd, [0, 2, 1, 3])
        k = heads(b, k, f"/{p}/attn/k", n_heads, hd, [0, 2, 3, 1])
        v = heads(b, v, f"/{p}/attn/v", n_heads, hd, [0, 2, 1, 3])
        s = b.node("Div", [b.node("MatMul", [q, k], name=f"/{p}/attn/MatMul"), b.scalar(math.sqrt(hd))], name=f"/{p}/attn/Div")
        s = b.node("Where", [causal, s, masked_bias], name=f"/{p}/attn/Where")
        s = b.node("Softmax", [s], name=f"/{p}/attn/Softmax", axis=-1)
        c = b.node("Transpose", [b.node("MatMul", [s, v], name=f"/{p}/attn/MatMul_1")], name=f"/{p}/attn/Transpose_3", perm=[0, 2, 1, 3])
        c = b.node("Reshape", [c, b.ints(f"/{p}/merge_shape", [0, 0, d])], name=f"/{p}/attn/Reshape_3")
        x = b.node("Add", [conv1d(c, f"{p}.attn.c_proj", d, d), x], name=f"/{p}/Add")
        f = conv1d(layer_norm(x, f"{p}.ln_2"), f"{p}.mlp.c_fc", d, 4 * d)
        # gelu_new: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
        cube = b.node("Mul", [b.node("Pow", [f, b.scalar(3.0)], name=f"/{p}/mlp/act/Pow"), b.scalar(0.044715)], name=f"/{p}/mlp/act/Mul")
        t = b.node("Tanh", [b.node("Mul", [b.node("Add", [f, cube], name=f"/{p}/mlp/act/Add"), b.scalar(math.sqrt(2 / math.pi))],
                                   name=f"/{p}/mlp/act/Mul_1")], name=f"/{p}/mlp/act/Tanh")
        g = b.node("Mul", [b.node("Mul", [b.scalar(0.5), f], name=f"/{p}/mlp/act/Mul_2"),
                           b.node("Add", [t, b.scalar(1.0)], name=f"/{p}/mlp/act/Add_1")], name=f"/{p}/mlp/act/Mul_3")
        x = b.node("Add", [x, conv1d(g, f"{p}.mlp.c_proj", 4 * d, d)], name=f"/{p}/Add_1")
    x = layer_norm(x, "transformer.ln_f")
    wt = b.node("Transpose", [wte], name="/lm_head/Transpose", perm=[1, 0])
    b.node("MatMul", [x, wt], name="/lm_head/MatMul")
    b.nodes[-1].output[0] = "logits"
    return b.model([h.make_tensor_value_info("input_ids", T.INT64, ["batch", "sequence"])],
                   [h.make_tensor_value_info("logits", T.FLOAT, ["batch", "sequence", vocab])], 14)


def small_graph(nodes, inputs, outputs, inits=(), opset=17):
    graph = h.make_graph(nodes, "bad", inputs, outputs, list(inits))
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], producer_name="pytorch")
    m.ir_version = 8
    return m.SerializeToString()


def bad_models(resnet_bytes):
    x = h.make_tensor_value_info("x", T.FLOAT, ["batch", 16])
    y = h.make_tensor_value_info("y", T.FLOAT, ["batch", 16])
    w = h.make_tensor("w", T.FLOAT, [16, 16], [0.0] * 256)
    return {
        # The first third of ResNet-50: the protobuf stops inside the graph.
        "truncated.onnx": resnet_bytes[: len(resnet_bytes) // 3],
        # /b reads /c's output and /c reads /b's: a cycle.
        "cycle.onnx": small_graph([h.make_node("MatMul", ["x", "w"], ["a"], name="/a"),
                                   h.make_node("Add", ["a", "c"], ["b"], name="/b"),
                                   h.make_node("Relu", ["b"], ["c"], name="/c"),
                                   h.make_node("Identity", ["c"], ["y"], name="/out")], [x], [y], [w]),
        # A custom operator (as a torch.autograd.Function exported with its own symbolic writes).
        "unknown_op.onnx": small_graph([h.make_node("MatMul", ["x", "w"], ["a"], name="/fc"),
                                        h.make_node("FancyAct", ["a"], ["b"], name="/act1", domain="custom"),
                                        h.make_node("FancyAct", ["b"], ["c"], name="/act2", domain="custom"),
                                        h.make_node("Relu", ["c"], ["y"], name="/relu")], [x], [y], [w]),
        # Dimension 1 of a rank-3 input is a sequence; dimension 2, "features", binds to nothing.
        "dynamic_dim.onnx": small_graph([h.make_node("Relu", ["t"], ["u"], name="/relu")],
                                        [h.make_tensor_value_info("t", T.FLOAT, ["batch", "sequence", "features"])],
                                        [h.make_tensor_value_info("u", T.FLOAT, ["batch", "sequence", "features"])]),
    }


def all_files():
    files = {}
    good = os.path.join("tests", "data", "good", "workloads", "onnx")
    for name, make in (("resnet50", resnet50), ("bert_base", bert_base), ("gpt2", gpt2)):
        files[os.path.join(good, name + ".onnx")] = make().SerializeToString()
    files[os.path.join("scenarios", "models", "bert_base.onnx")] = files[os.path.join(good, "bert_base.onnx")]
    for name, data in bad_models(files[os.path.join(good, "resnet50.onnx")]).items():
        files[os.path.join("tests", "data", "bad", "workloads", "onnx", name)] = data
        files[os.path.join("tests", "data", "audit", "onnx", name)] = data
    files[os.path.join("tests", "data", "audit", "onnx", "resnet50.onnx")] = files[os.path.join(good, "resnet50.onnx")]
    return files


def main():
    check = sys.argv[1] == "--check"
    root = sys.argv[2] if check else sys.argv[1]
    stale = []
    for rel, data in sorted(all_files().items()):
        path = os.path.join(root, rel)
        if check:
            try:
                with open(path, "rb") as f:
                    if f.read() != data:
                        stale.append(rel)
            except OSError:
                stale.append(rel)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    if stale:
        print("out of date (rerun tests/data/make_onnx_models.py .): " + ", ".join(stale), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
