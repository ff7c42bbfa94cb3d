// The model zoo. Every model is generated as a layer-graph JSON document — the format users write —
// and read by the same parser, so a zoo model and a file describe networks in one representation
// (`trainsim workload export MODEL` prints it). Layer names follow torchvision / Hugging Face
// module names where there are some ("layer1.0.conv1", "encoder.layer.3").
//
// Definitions and their references:
//   alexnet, vgg16, vgg16_bn, resnet18..152, inception_v3 (with AuxLogits), googlenet (without aux
//   classifiers, as its pretrained weights): torchvision.models, 224² input (299² for
//   inception_v3), 1000 classes. ResNets are v1.5 (stride on the 3×3 convolution).
//   nin: Lin et al. "Network in Network", the Caffe model-zoo ImageNet net (also Paleo's nets/nin.json).
//   mlp, cnn: the Keras examples mnist_mlp.py (784-512-512-10) and mnist_cnn.py; autoencoder:
//   the Keras blog's deep fully-connected MNIST autoencoder 784-128-64-32-64-128-784 — the three
//   model kinds of Kavarakuntla et al.
//   bert_base, bert_large: Hugging Face BertModel with pooler (sequence length 128 by default).
//   gpt2, gpt2_medium, gpt2_large, gpt2_xl: Hugging Face GPT2LMHeadModel, LM head tied to the token
//   embedding (sequence length 1024).
#include <algorithm>
#include <cctype>
#include <functional>
#include <map>

#include "trainsim/core/suggest.hpp"
#include "trainsim/workloads/layer_graph.hpp"

namespace trainsim::workloads {
namespace {

// Appends layers to a layer-graph document; every method returns the new layer's name.
class GraphBuilder {
public:
  explicit GraphBuilder(const ZooEntry& entry)
      : doc_{{"name", entry.name}, {"description", entry.description}, {"layers", Json::array()}} {}

  std::string add(const std::string& name, const std::string& type, const std::vector<std::string>& parents, Json attrs = Json::object()) {
    Json layer{{"name", name}, {"type", type}};
    if (!parents.empty()) layer["parents"] = parents;
    for (auto it = attrs.begin(); it != attrs.end(); ++it) layer[it.key()] = it.value();
    doc_["layers"].push_back(std::move(layer));
    return name;
  }
  std::string input(const std::string& name, const std::vector<std::int64_t>& shape) { return add(name, "input", {}, {{"shape", shape}}); }
  std::string conv(const std::string& name, const std::string& parent, std::int64_t out, Json kernel, Json stride, Json padding,
                   bool bias) {
    return add(name, "conv2d", {parent},
               {{"out_channels", out}, {"kernel", kernel}, {"stride", stride}, {"padding", padding}, {"bias", bias}});
  }
  std::string linear(const std::string& name, const std::string& parent, std::int64_t out) {
    return add(name, "linear", {parent}, {{"out_features", out}});
  }
  std::string unary(const std::string& name, const std::string& type, const std::string& parent) { return add(name, type, {parent}); }
  std::string dropout(const std::string& name, const std::string& parent, double rate) {
    return add(name, "dropout", {parent}, {{"rate", rate}});
  }
  std::string maxpool(const std::string& name, const std::string& parent, std::int64_t k, std::int64_t s, std::int64_t p,
                      bool ceil_mode = false) {
    return add(name, "maxpool2d", {parent}, {{"kernel", k}, {"stride", s}, {"padding", p}, {"ceil_mode", ceil_mode}});
  }
  std::string avgpool(const std::string& name, const std::string& parent, std::int64_t k, std::int64_t s, std::int64_t p) {
    return add(name, "avgpool2d", {parent}, {{"kernel", k}, {"stride", s}, {"padding", p}});
  }
  // torchvision's BasicConv2d (Inception, GoogLeNet): convolution without bias, batch norm, ReLU.
  std::string basic_conv(const std::string& prefix, const std::string& parent, std::int64_t out, Json kernel, Json stride,
                         Json padding) {
    const std::string c = conv(prefix + ".conv", parent, out, std::move(kernel), std::move(stride), std::move(padding), false);
    return unary(prefix + ".relu", "relu", unary(prefix + ".bn", "batchnorm", c));
  }
  // Classifier tail shared by the CNNs: flatten, [dropout], linear, loss.
  std::string classifier(const std::string& parent, std::int64_t classes, double dropout_rate, const std::string& fc = "fc") {
    std::string x = unary("flatten", "flatten", parent);
    if (dropout_rate > 0) x = dropout("dropout", x, dropout_rate);
    return add("loss", "loss", {linear(fc, x, classes)});
  }
  Json document() const { return doc_; }

private:
  Json doc_;
};

Json pair(std::int64_t h, std::int64_t w) { return Json::array({h, w}); }

Json alexnet(const ZooEntry& e) {
  GraphBuilder g(e);
  std::string x = g.input("data", {3, 224, 224});
  struct C { std::int64_t out, k, s, p; bool pool; };
  const C convs[] = {{64, 11, 4, 2, true}, {192, 5, 1, 2, true}, {384, 3, 1, 1, false}, {256, 3, 1, 1, false}, {256, 3, 1, 1, true}};
  int layer = 0;
  for (const C& c : convs) {
    x = g.conv("features." + std::to_string(layer), x, c.out, c.k, c.s, c.p, true);
    x = g.unary("features." + std::to_string(layer + 1), "relu", x);
    layer += 2;
    if (c.pool) x = g.maxpool("features." + std::to_string(layer++), x, 3, 2, 0);
  }
  x = g.add("avgpool", "adaptive_avgpool2d", {x}, {{"output_size", 6}});
  x = g.unary("flatten", "flatten", x);
  x = g.dropout("classifier.0", x, 0.5);
  x = g.unary("classifier.2", "relu", g.linear("classifier.1", x, 4096));
  x = g.dropout("classifier.3", x, 0.5);
  x = g.unary("classifier.5", "relu", g.linear("classifier.4", x, 4096));
  g.add("loss", "loss", {g.linear("classifier.6", x, 1000)});
  return g.document();
}

Json vgg16(const ZooEntry& e, bool batch_norm) {
  GraphBuilder g(e);
  std::string x = g.input("data", {3, 224, 224});
  const std::int64_t cfg[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
  int layer = 0;
  for (const std::int64_t c : cfg) {
    if (c == 0) {
      x = g.maxpool("features." + std::to_string(layer++), x, 2, 2, 0);
      continue;
    }
    x = g.conv("features." + std::to_string(layer++), x, c, 3, 1, 1, true);
    if (batch_norm) x = g.unary("features." + std::to_string(layer++), "batchnorm", x);
    x = g.unary("features." + std::to_string(layer++), "relu", x);
  }
  x = g.add("avgpool", "adaptive_avgpool2d", {x}, {{"output_size", 7}});
  x = g.unary("flatten", "flatten", x);
  x = g.unary("classifier.1", "relu", g.linear("classifier.0", x, 4096));
  x = g.dropout("classifier.2", x, 0.5);
  x = g.unary("classifier.4", "relu", g.linear("classifier.3", x, 4096));
  x = g.dropout("classifier.5", x, 0.5);
  g.add("loss", "loss", {g.linear("classifier.6", x, 1000)});
  return g.document();
}

Json resnet(const ZooEntry& e, bool bottleneck, const std::vector<int>& blocks) {
  GraphBuilder g(e);
  std::string x = g.input("data", {3, 224, 224});
  x = g.unary("relu", "relu", g.unary("bn1", "batchnorm", g.conv("conv1", x, 64, 7, 2, 3, false)));
  x = g.maxpool("maxpool", x, 3, 2, 1);
  const int expansion = bottleneck ? 4 : 1;
  std::int64_t in_channels = 64;
  for (std::size_t stage = 0; stage < blocks.size(); ++stage) {
    const std::int64_t planes = 64 << stage;
    for (int b = 0; b < blocks[stage]; ++b) {
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(b) + ".";
      const std::int64_t stride = (b == 0 && stage > 0) ? 2 : 1;
      std::string y;
      if (bottleneck) {
        y = g.unary(p + "relu1", "relu", g.unary(p + "bn1", "batchnorm", g.conv(p + "conv1", x, planes, 1, 1, 0, false)));
        y = g.unary(p + "relu2", "relu", g.unary(p + "bn2", "batchnorm", g.conv(p + "conv2", y, planes, 3, stride, 1, false)));
        y = g.unary(p + "bn3", "batchnorm", g.conv(p + "conv3", y, planes * 4, 1, 1, 0, false));
      } else {
        y = g.unary(p + "relu1", "relu", g.unary(p + "bn1", "batchnorm", g.conv(p + "conv1", x, planes, 3, stride, 1, false)));
        y = g.unary(p + "bn2", "batchnorm", g.conv(p + "conv2", y, planes, 3, 1, 1, false));
      }
      std::string shortcut = x;
      if (stride != 1 || in_channels != planes * expansion)
        shortcut = g.unary(p + "downsample.1", "batchnorm", g.conv(p + "downsample.0", x, planes * expansion, 1, stride, 0, false));
      x = g.unary(p + "relu", "relu", g.add(p + "add", "add", {y, shortcut}));
      in_channels = planes * expansion;
    }
  }
  x = g.unary("avgpool", "global_avgpool2d", x);
  g.classifier(x, 1000, 0);
  return g.document();
}

std::string concat(GraphBuilder& g, const std::string& name, const std::vector<std::string>& parts) {
  return g.add(name, "concat", parts, {{"axis", 0}});
}

Json inception_v3(const ZooEntry& e) {
  GraphBuilder g(e);
  std::string x = g.input("data", {3, 299, 299});
  x = g.basic_conv("Conv2d_1a_3x3", x, 32, 3, 2, 0);
  x = g.basic_conv("Conv2d_2a_3x3", x, 32, 3, 1, 0);
  x = g.basic_conv("Conv2d_2b_3x3", x, 64, 3, 1, 1);
  x = g.maxpool("maxpool1", x, 3, 2, 0);
  x = g.basic_conv("Conv2d_3b_1x1", x, 80, 1, 1, 0);
  x = g.basic_conv("Conv2d_4a_3x3", x, 192, 3, 1, 0);
  x = g.maxpool("maxpool2", x, 3, 2, 0);
  auto block_a = [&](const std::string& n, const std::string& in, std::int64_t pool_features) {
    const std::string b1 = g.basic_conv(n + ".branch1x1", in, 64, 1, 1, 0);
    const std::string b5 = g.basic_conv(n + ".branch5x5_2", g.basic_conv(n + ".branch5x5_1", in, 48, 1, 1, 0), 64, 5, 1, 2);
    std::string b3 = g.basic_conv(n + ".branch3x3dbl_1", in, 64, 1, 1, 0);
    b3 = g.basic_conv(n + ".branch3x3dbl_3", g.basic_conv(n + ".branch3x3dbl_2", b3, 96, 3, 1, 1), 96, 3, 1, 1);
    const std::string bp = g.basic_conv(n + ".branch_pool", g.avgpool(n + ".avg_pool", in, 3, 1, 1), pool_features, 1, 1, 0);
    return concat(g, n + ".concat", {b1, b5, b3, bp});
  };
  auto block_b = [&](const std::string& n, const std::string& in) {
    const std::string b3 = g.basic_conv(n + ".branch3x3", in, 384, 3, 2, 0);
    std::string d = g.basic_conv(n + ".branch3x3dbl_1", in, 64, 1, 1, 0);
    d = g.basic_conv(n + ".branch3x3dbl_3", g.basic_conv(n + ".branch3x3dbl_2", d, 96, 3, 1, 1), 96, 3, 2, 0);
    return concat(g, n + ".concat", {b3, d, g.maxpool(n + ".max_pool", in, 3, 2, 0)});
  };
  auto block_c = [&](const std::string& n, const std::string& in, std::int64_t c7) {
    const std::string b1 = g.basic_conv(n + ".branch1x1", in, 192, 1, 1, 0);
    std::string b7 = g.basic_conv(n + ".branch7x7_1", in, c7, 1, 1, 0);
    b7 = g.basic_conv(n + ".branch7x7_2", b7, c7, pair(1, 7), 1, pair(0, 3));
    b7 = g.basic_conv(n + ".branch7x7_3", b7, 192, pair(7, 1), 1, pair(3, 0));
    std::string d = g.basic_conv(n + ".branch7x7dbl_1", in, c7, 1, 1, 0);
    d = g.basic_conv(n + ".branch7x7dbl_2", d, c7, pair(7, 1), 1, pair(3, 0));
    d = g.basic_conv(n + ".branch7x7dbl_3", d, c7, pair(1, 7), 1, pair(0, 3));
    d = g.basic_conv(n + ".branch7x7dbl_4", d, c7, pair(7, 1), 1, pair(3, 0));
    d = g.basic_conv(n + ".branch7x7dbl_5", d, 192, pair(1, 7), 1, pair(0, 3));
    const std::string bp = g.basic_conv(n + ".branch_pool", g.avgpool(n + ".avg_pool", in, 3, 1, 1), 192, 1, 1, 0);
    return concat(g, n + ".concat", {b1, b7, d, bp});
  };
  auto block_d = [&](const std::string& n, const std::string& in) {
    const std::string b3 = g.basic_conv(n + ".branch3x3_2", g.basic_conv(n + ".branch3x3_1", in, 192, 1, 1, 0), 320, 3, 2, 0);
    std::string b7 = g.basic_conv(n + ".branch7x7x3_1", in, 192, 1, 1, 0);
    b7 = g.basic_conv(n + ".branch7x7x3_2", b7, 192, pair(1, 7), 1, pair(0, 3));
    b7 = g.basic_conv(n + ".branch7x7x3_3", b7, 192, pair(7, 1), 1, pair(3, 0));
    b7 = g.basic_conv(n + ".branch7x7x3_4", b7, 192, 3, 2, 0);
    return concat(g, n + ".concat", {b3, b7, g.maxpool(n + ".max_pool", in, 3, 2, 0)});
  };
  auto block_e = [&](const std::string& n, const std::string& in) {
    const std::string b1 = g.basic_conv(n + ".branch1x1", in, 320, 1, 1, 0);
    const std::string b3 = g.basic_conv(n + ".branch3x3_1", in, 384, 1, 1, 0);
    const std::string b3a = g.basic_conv(n + ".branch3x3_2a", b3, 384, pair(1, 3), 1, pair(0, 1));
    const std::string b3b = g.basic_conv(n + ".branch3x3_2b", b3, 384, pair(3, 1), 1, pair(1, 0));
    std::string d = g.basic_conv(n + ".branch3x3dbl_2", g.basic_conv(n + ".branch3x3dbl_1", in, 448, 1, 1, 0), 384, 3, 1, 1);
    const std::string da = g.basic_conv(n + ".branch3x3dbl_3a", d, 384, pair(1, 3), 1, pair(0, 1));
    const std::string db = g.basic_conv(n + ".branch3x3dbl_3b", d, 384, pair(3, 1), 1, pair(1, 0));
    const std::string bp = g.basic_conv(n + ".branch_pool", g.avgpool(n + ".avg_pool", in, 3, 1, 1), 192, 1, 1, 0);
    return concat(g, n + ".concat", {b1, b3a, b3b, da, db, bp});
  };
  x = block_a("Mixed_5b", x, 32);
  x = block_a("Mixed_5c", x, 64);
  x = block_a("Mixed_5d", x, 64);
  x = block_b("Mixed_6a", x);
  x = block_c("Mixed_6b", x, 128);
  x = block_c("Mixed_6c", x, 160);
  x = block_c("Mixed_6d", x, 160);
  x = block_c("Mixed_6e", x, 192);
  // Auxiliary classifier on Mixed_6e (part of the torchvision parameter count and of training).
  std::string aux = g.avgpool("AuxLogits.avg_pool", x, 5, 3, 0);
  aux = g.basic_conv("AuxLogits.conv1", g.basic_conv("AuxLogits.conv0", aux, 128, 1, 1, 0), 768, 5, 1, 0);
  aux = g.unary("AuxLogits.flatten", "flatten", g.add("AuxLogits.adaptive_avg_pool", "adaptive_avgpool2d", {aux}, {{"output_size", 1}}));
  g.add("AuxLogits.loss", "loss", {g.linear("AuxLogits.fc", aux, 1000)});
  x = block_d("Mixed_7a", x);
  x = block_e("Mixed_7b", x);
  x = block_e("Mixed_7c", x);
  x = g.unary("avgpool", "global_avgpool2d", x);
  g.classifier(x, 1000, 0.5);
  return g.document();
}

Json googlenet(const ZooEntry& e) {
  GraphBuilder g(e);
  std::string x = g.input("data", {3, 224, 224});
  x = g.basic_conv("conv1", x, 64, 7, 2, 3);
  x = g.maxpool("maxpool1", x, 3, 2, 0, true);
  x = g.basic_conv("conv3", g.basic_conv("conv2", x, 64, 1, 1, 0), 192, 3, 1, 1);
  x = g.maxpool("maxpool2", x, 3, 2, 0, true);
  auto inception = [&](const std::string& n, const std::string& in, std::int64_t c1, std::int64_t c3r, std::int64_t c3, std::int64_t c5r,
                       std::int64_t c5, std::int64_t pool) {
    const std::string b1 = g.basic_conv(n + ".branch1", in, c1, 1, 1, 0);
    const std::string b2 = g.basic_conv(n + ".branch2.1", g.basic_conv(n + ".branch2.0", in, c3r, 1, 1, 0), c3, 3, 1, 1);
    // torchvision uses a 3x3 convolution in the "5x5" branch (a known quirk of its port).
    const std::string b3 = g.basic_conv(n + ".branch3.1", g.basic_conv(n + ".branch3.0", in, c5r, 1, 1, 0), c5, 3, 1, 1);
    const std::string b4 = g.basic_conv(n + ".branch4.1", g.maxpool(n + ".branch4.0", in, 3, 1, 1, true), pool, 1, 1, 0);
    return concat(g, n + ".concat", {b1, b2, b3, b4});
  };
  x = inception("inception3a", x, 64, 96, 128, 16, 32, 32);
  x = inception("inception3b", x, 128, 128, 192, 32, 96, 64);
  x = g.maxpool("maxpool3", x, 3, 2, 0, true);
  x = inception("inception4a", x, 192, 96, 208, 16, 48, 64);
  x = inception("inception4b", x, 160, 112, 224, 24, 64, 64);
  x = inception("inception4c", x, 128, 128, 256, 24, 64, 64);
  x = inception("inception4d", x, 112, 144, 288, 32, 64, 64);
  x = inception("inception4e", x, 256, 160, 320, 32, 128, 128);
  x = g.maxpool("maxpool4", x, 2, 2, 0, true);
  x = inception("inception5a", x, 256, 160, 320, 32, 128, 128);
  x = inception("inception5b", x, 384, 192, 384, 48, 128, 128);
  x = g.unary("avgpool", "global_avgpool2d", x);
  g.classifier(x, 1000, 0.2);
  return g.document();
}

Json nin(const ZooEntry& e) {
  GraphBuilder g(e);
  std::string x = g.input("data", {3, 224, 224});
  struct Stage { std::int64_t out, k, s, p; };
  const Stage stages[] = {{96, 11, 4, 0}, {256, 5, 1, 2}, {384, 3, 1, 1}, {1024, 3, 1, 1}};
  int cccp = 1;
  for (int i = 0; i < 4; ++i) {
    const Stage& st = stages[i];
    if (i == 3) x = g.dropout("drop", x, 0.5);
    x = g.unary("relu" + std::to_string(i + 1), "relu", g.conv("conv" + std::to_string(i + 1), x, st.out, st.k, st.s, st.p, true));
    for (int j = 0; j < 2; ++j, ++cccp) {
      const std::int64_t out = (i == 3 && j == 1) ? 1000 : st.out;
      const std::string c = "cccp" + std::to_string(cccp);
      x = g.unary(c + ".relu", "relu", g.conv(c, x, out, 1, 1, 0, true));
    }
    if (i < 3) x = g.maxpool("pool" + std::to_string(i + 1), x, 3, 2, 0, true);
  }
  x = g.unary("flatten", "flatten", g.unary("pool4", "global_avgpool2d", x));
  g.add("loss", "loss", {x});
  return g.document();
}

Json mlp(const ZooEntry& e) {
  GraphBuilder g(e);
  std::string x = g.input("data", {784});
  x = g.dropout("dropout1", g.unary("relu1", "relu", g.linear("fc1", x, 512)), 0.2);
  x = g.dropout("dropout2", g.unary("relu2", "relu", g.linear("fc2", x, 512)), 0.2);
  g.add("loss", "loss", {g.linear("fc3", x, 10)});
  return g.document();
}

Json autoencoder(const ZooEntry& e) {
  GraphBuilder g(e);
  std::string x = g.input("data", {784});
  const std::int64_t widths[] = {128, 64, 32, 64, 128};
  int i = 1;
  for (const std::int64_t w : widths) {
    const std::string part = i <= 3 ? "encoder" : "decoder";
    x = g.unary(part + ".relu" + std::to_string(i), "relu", g.linear(part + ".fc" + std::to_string(i), x, w));
    ++i;
  }
  x = g.unary("decoder.sigmoid", "sigmoid", g.linear("decoder.fc6", x, 784));
  g.add("loss", "loss", {x});
  return g.document();
}

Json cnn(const ZooEntry& e) {
  GraphBuilder g(e);
  std::string x = g.input("data", {1, 28, 28});
  x = g.unary("relu1", "relu", g.conv("conv1", x, 32, 3, 1, 0, true));
  x = g.unary("relu2", "relu", g.conv("conv2", x, 64, 3, 1, 0, true));
  x = g.dropout("dropout1", g.maxpool("pool", x, 2, 2, 0), 0.25);
  x = g.unary("relu3", "relu", g.linear("fc1", g.unary("flatten", "flatten", x), 128));
  g.add("loss", "loss", {g.linear("fc2", g.dropout("dropout2", x, 0.5), 10)});
  return g.document();
}

struct TransformerConfig {
  std::int64_t layers, dim, heads, vocab, positions, sequence;
};

// Hugging Face BertModel: embeddings (word, position, token type, LayerNorm), post-LN encoder
// layers, pooler (dense + tanh on the first token). No pre-training heads.
Json bert(const ZooEntry& e, const TransformerConfig& c) {
  GraphBuilder g(e);
  const std::string tokens = g.input("input_ids", {c.sequence});
  const std::string word = g.add("embeddings.word_embeddings", "embedding", {tokens}, {{"num_embeddings", c.vocab}, {"dim", c.dim}});
  const std::string pos = g.add("embeddings.position_embeddings", "embedding", {tokens}, {{"num_embeddings", c.positions}, {"dim", c.dim}, {"positional", true}});
  const std::string type = g.add("embeddings.token_type_embeddings", "embedding", {tokens}, {{"num_embeddings", 2}, {"dim", c.dim}});
  std::string x = g.add("embeddings.sum", "add", {word, pos, type});
  x = g.dropout("embeddings.dropout", g.unary("embeddings.LayerNorm", "layernorm", x), 0.1);
  for (std::int64_t i = 0; i < c.layers; ++i)
    x = g.add("encoder.layer." + std::to_string(i), "transformer", {x}, {{"heads", c.heads}, {"activation", "gelu"}});
  x = g.add("pooler.first_token", "slice", {x}, {{"axis", 0}, {"start", 0}, {"length", 1}});
  g.unary("pooler.activation", "tanh", g.linear("pooler.dense", x, c.dim));
  return g.document();
}

// Hugging Face BertForMaskedLM: BertModel without the pooler, and the masked-LM head (dense +
// GELU + LayerNorm, a decoder tied to the word embeddings with its own bias) scored over the
// vocabulary at every position.
Json bert_mlm(const ZooEntry& e, const TransformerConfig& c) {
  GraphBuilder g(e);
  const std::string tokens = g.input("input_ids", {c.sequence});
  const std::string word =
      g.add("embeddings.word_embeddings", "embedding", {tokens}, {{"num_embeddings", c.vocab}, {"dim", c.dim}});
  const std::string pos = g.add("embeddings.position_embeddings", "embedding", {tokens},
                                {{"num_embeddings", c.positions}, {"dim", c.dim}, {"positional", true}});
  const std::string type =
      g.add("embeddings.token_type_embeddings", "embedding", {tokens}, {{"num_embeddings", 2}, {"dim", c.dim}});
  std::string x = g.add("embeddings.sum", "add", {word, pos, type});
  x = g.dropout("embeddings.dropout", g.unary("embeddings.LayerNorm", "layernorm", x), 0.1);
  for (std::int64_t i = 0; i < c.layers; ++i)
    x = g.add("encoder.layer." + std::to_string(i), "transformer", {x}, {{"heads", c.heads}, {"activation", "gelu"}});
  x = g.unary("cls.predictions.transform.act", "gelu", g.linear("cls.predictions.transform.dense", x, c.dim));
  x = g.unary("cls.predictions.transform.LayerNorm", "layernorm", x);
  x = g.add("cls.predictions.decoder", "linear", {x}, {{"out_features", c.vocab}, {"bias", true}, {"tied_to", word}});
  g.add("loss", "loss", {x});
  return g.document();
}

// Hugging Face GPT2LMHeadModel: token and position embeddings, pre-LN causal blocks, final
// LayerNorm, LM head sharing the token embedding's weight, cross-entropy over the vocabulary.
// Its feed-forward activation is "gelu_new": the tanh approximation written as Python
// arithmetic (transformers' NewGELUActivation), eight elementwise operators.
Json gpt2(const ZooEntry& e, const TransformerConfig& c) {
  GraphBuilder g(e);
  const std::string tokens = g.input("input_ids", {c.sequence});
  const std::string wte = g.add("wte", "embedding", {tokens}, {{"num_embeddings", c.vocab}, {"dim", c.dim}});
  const std::string wpe = g.add("wpe", "embedding", {tokens}, {{"num_embeddings", c.positions}, {"dim", c.dim}, {"positional", true}});
  std::string x = g.dropout("drop", g.add("embeddings.sum", "add", {wte, wpe}), 0.1);
  for (std::int64_t i = 0; i < c.layers; ++i)
    x = g.add("h." + std::to_string(i), "transformer", {x},
              {{"heads", c.heads}, {"activation", "gelu_new"}, {"causal", true}});
  x = g.unary("ln_f", "layernorm", x);
  x = g.add("lm_head", "linear", {x}, {{"out_features", c.vocab}, {"bias", false}, {"tied_to", wte}});
  g.add("loss", "loss", {x});
  return g.document();
}

struct ZooModel {
  ZooEntry entry;
  std::vector<std::string> aliases;
  std::function<Json(const ZooEntry&)> build;
};

const std::vector<ZooModel>& models() {
  static const std::vector<ZooModel> list{
      {{"alexnet", "AlexNet (torchvision), 224x224", 61'100'840}, {}, alexnet},
      {{"vgg16", "VGG-16 (torchvision), 224x224", 138'357'544}, {}, [](const ZooEntry& e) { return vgg16(e, false); }},
      {{"vgg16_bn", "VGG-16 with batch norm (torchvision), 224x224", 138'365'992},
       {},
       [](const ZooEntry& e) { return vgg16(e, true); }},
      {{"resnet18", "ResNet-18 (torchvision), 224x224", 11'689'512},
       {},
       [](const ZooEntry& e) {
         return resnet(e, false, {2, 2, 2, 2});
       }},
      {{"resnet34", "ResNet-34 (torchvision), 224x224", 21'797'672},
       {},
       [](const ZooEntry& e) {
         return resnet(e, false, {3, 4, 6, 3});
       }},
      {{"resnet50", "ResNet-50 v1.5 (torchvision), 224x224", 25'557'032},
       {},
       [](const ZooEntry& e) {
         return resnet(e, true, {3, 4, 6, 3});
       }},
      {{"resnet101", "ResNet-101 v1.5 (torchvision), 224x224", 44'549'160},
       {},
       [](const ZooEntry& e) {
         return resnet(e, true, {3, 4, 23, 3});
       }},
      {{"resnet152", "ResNet-152 v1.5 (torchvision), 224x224", 60'192'808},
       {},
       [](const ZooEntry& e) {
         return resnet(e, true, {3, 8, 36, 3});
       }},
      {{"inception_v3", "Inception v3 with auxiliary classifier (torchvision), 299x299", 27'161'264},
       {"inception3", "inception"},
       inception_v3},
      {{"googlenet", "GoogLeNet without auxiliary classifiers (torchvision), 224x224", 6'624'904},
       {"inception_v1"},
       googlenet},
      {{"nin", "Network in Network (Caffe model zoo, ImageNet), 224x224", 7'595'176}, {"network_in_network"}, nin},
      {{"mlp", "MLP 784-512-512-10, MNIST (Keras mnist_mlp)", 669'706}, {}, mlp},
      {{"autoencoder", "Autoencoder 784-128-64-32-64-128-784, MNIST", 222'384}, {"ae"}, autoencoder},
      {{"cnn", "Small CNN, 2 conv + 2 dense, MNIST (Keras mnist_cnn)", 1'199'882}, {"small_cnn", "mnist_cnn"}, cnn},
      {{"bert_base", "BERT-base with pooler (Hugging Face), sequence 128", 109'482'240},
       {"bert"},
       [](const ZooEntry& e) {
         return bert(e, {12, 768, 12, 30522, 512, 128});
       }},
      {{"bert_base_mlm", "BERT-base masked-LM (Hugging Face BertForMaskedLM), sequence 128", 109'514'298},
       {"bert_mlm"},
       [](const ZooEntry& e) {
         return bert_mlm(e, {12, 768, 12, 30522, 512, 128});
       }},
      {{"bert_large", "BERT-large with pooler (Hugging Face), sequence 128", 335'141'888},
       {},
       [](const ZooEntry& e) {
         return bert(e, {24, 1024, 16, 30522, 512, 128});
       }},
      {{"gpt2", "GPT-2 small, tied LM head (Hugging Face), sequence 1024", 124'439'808},
       {"gpt2_small", "gpt2_124m"},
       [](const ZooEntry& e) {
         return gpt2(e, {12, 768, 12, 50257, 1024, 1024});
       }},
      {{"gpt2_medium", "GPT-2 medium, tied LM head (Hugging Face), sequence 1024", 354'823'168},
       {"gpt2_355m"},
       [](const ZooEntry& e) {
         return gpt2(e, {24, 1024, 16, 50257, 1024, 1024});
       }},
      {{"gpt2_large", "GPT-2 large, tied LM head (Hugging Face), sequence 1024", 774'030'080},
       {"gpt2_774m"},
       [](const ZooEntry& e) {
         return gpt2(e, {36, 1280, 20, 50257, 1024, 1024});
       }},
      {{"gpt2_xl", "GPT-2 XL, tied LM head (Hugging Face), sequence 1024", 1'557'611'200},
       {"gpt2_1.5b"},
       [](const ZooEntry& e) {
         return gpt2(e, {48, 1600, 25, 50257, 1024, 1024});
       }},
  };
  return list;
}

// Lower case without '-' and '_': "ResNet-50" and "resnet_50" both read "resnet50".
std::string squash(std::string_view name) {
  std::string out;
  for (const char c : name)
    if (c != '-' && c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::vector<ZooEntry> zoo() {
  std::vector<ZooEntry> out;
  for (const auto& m : models()) out.push_back(m.entry);
  return out;
}

std::optional<std::string> zoo_canonical_name(std::string_view name) {
  const std::string key = squash(name);
  for (const auto& m : models()) {
    if (squash(m.entry.name) == key) return m.entry.name;
    for (const auto& alias : m.aliases)
      if (squash(alias) == key) return m.entry.name;
  }
  return std::nullopt;
}

Json zoo_layer_graph(const std::string& name) {
  const auto canonical = zoo_canonical_name(name);
  for (const auto& m : models())
    if (canonical && m.entry.name == *canonical) return m.build(m.entry);
  std::vector<std::string> names;
  for (const auto& m : models()) names.push_back(m.entry.name);
  throw InputError("model", "", unknown_name_message("zoo model", name, names));
}

}  // namespace trainsim::workloads
