#!/usr/bin/env python3
"""The JSON Schemas of trainsim's input formats, checked three ways (ctest: schema_check, label unit).

1. Every file the project ships in those formats validates: every scenario in scenarios/ (and each
   point its sweep axes give, one axis at a time), scenarios/validation/systems.json, the platform and
   layer-graph files scenarios name, and the good platform, layer-graph, scenario and systems files
   of tests/data.
2. The schemas follow the readers: every key list a reader gives allow_only() in C++ (the readers refuse
   any other key) is the property set of one object in the schemas, and the layer types and their keys
   are the registry's (workloads/src/layer_costs.cpp). A key added to a reader and not to its schema
   fails here, naming the file and the list.
3. Documents the readers refuse for a type, a range, an enum, a missing or unknown key fail the
   schema too (negative cases below).

Usage: check_schemas.py SOURCE_DIR.  Needs python3-jsonschema (Debian 12: 4.10; 2020-12 drafts).
"""
import copy
import json
import pathlib
import re
import sys

import jsonschema

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
SCHEMAS = {
    "scenario": "simulator/plan/schema/scenario.schema.json",
    "platform": "platforms/schema/platform.schema.json",
    "layer_graph": "workloads/schema/layer_graph.schema.json",
    "systems": "simulator/study/schema/systems.schema.json",
}
failures = []


def fail(message):
    failures.append(message)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


schemas = {name: load(ROOT / rel) for name, rel in SCHEMAS.items()}
Validator = jsonschema.Draft202012Validator
for name, schema in schemas.items():
    Validator.check_schema(schema)

try:  # jsonschema >= 4.18 resolves $ref through `referencing`
    from referencing import Registry, Resource

    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
    validators = {name: Validator(s, registry=registry) for name, s in schemas.items()}
except ImportError:  # Debian 12's jsonschema 4.10: a RefResolver with the schemas in its store
    store = {s["$id"]: s for s in schemas.values()}
    validators = {name: Validator(s, resolver=jsonschema.RefResolver.from_schema(s, store=store)) for name, s in schemas.items()}


def errors_of(kind, document):
    return sorted(validators[kind].iter_errors(document), key=lambda e: list(e.absolute_path))


def expect_valid(kind, document, label):
    errs = errors_of(kind, document)
    for e in errs[:3]:
        fail(f"{label}: not a valid {kind}: /{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}")


def set_path(document, dotted, value):
    cursor = document
    parts = dotted.split(".")
    for p in parts[:-1]:
        cursor = cursor.setdefault(p, {})
    cursor[parts[-1]] = value


# ---- 1. Every shipped file validates ------------------------------------------------------------
def is_layer_graph(document):
    return isinstance(document, dict) and isinstance(document.get("layers"), list)


def check_referenced_files(document, path):
    """The platform and layer-graph files a scenario names, relative to it."""
    workload_file = document.get("workload", {}).get("file")
    if isinstance(workload_file, str) and workload_file.endswith(".json"):
        target = (path.parent / workload_file).resolve()
        graph = load(target)
        if is_layer_graph(graph):  # a Paleo file is another format
            expect_valid("layer_graph", graph, str(target))
    platform_file = document.get("platform", {}).get("file")
    if isinstance(platform_file, str) and platform_file.endswith(".json"):
        target = (path.parent / platform_file).resolve()
        expect_valid("platform", load(target), str(target))


def check_scenario(path):
    document = load(path)
    rel = path.relative_to(ROOT)
    expect_valid("scenario", document, str(rel))
    check_referenced_files(document, path)
    for axis, values in document.get("sweep", {}).items():
        for i, value in enumerate(values):
            point = copy.deepcopy(document)
            point.pop("sweep")
            set_path(point, axis, value)
            expect_valid("scenario", point, f"{rel} with sweep {axis}[{i}] = {json.dumps(value)}")
    return 1


checked = 0
for path in sorted((ROOT / "scenarios").rglob("*.json")):
    if path.name == "systems.json":
        expect_valid("systems", load(path), str(path.relative_to(ROOT)))
        checked += 1
    else:
        checked += check_scenario(path)
if checked < 12:
    fail(f"only {checked} files found under scenarios/: is SOURCE_DIR the repository root?")

good = ROOT / "tests/data"
for path in sorted((good / "good/scenarios").glob("*.json")):
    check_scenario(path)
expect_valid("systems", load(good / "good/validate/systems.json"), "tests/data/good/validate/systems.json")
for path in sorted((good / "good/platforms").glob("*.json")) + sorted((good / "fuzz/platform").glob("good_*.json")) + sorted(
    (good / "fuzz/platform").glob("preset_*.json")
):
    expect_valid("platform", load(path), str(path.relative_to(ROOT)))
for path in sorted((good / "good/workloads").glob("*.json")) + sorted((good / "fuzz/layer_graph").glob("good_*.json")) + sorted(
    (good / "fuzz/layer_graph").glob("zoo_*.json")
):
    expect_valid("layer_graph", load(path), str(path.relative_to(ROOT)))


# ---- 2. The schemas follow the readers ---------------------------------------------------------
def object_key_sets(node, out):
    """Every property set an object subschema declares, walking the whole schema."""
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict) and node.get("additionalProperties") is False:
            out.add(frozenset(node["properties"]))
        for v in node.values():
            object_key_sets(v, out)
    elif isinstance(node, list):
        for v in node:
            object_key_sets(v, out)
    return out


key_sets = set()
for s in schemas.values():
    object_key_sets(s, key_sets)

# The readers whose allow_only() lists the schemas describe, and lists that belong to other formats.
READERS = [
    "simulator/plan/src/scenario.cpp",
    "simulator/plan/src/compute_model.cpp",
    "simulator/plan/src/cpu_threading.cpp",
    "simulator/plan/src/input_pipeline.cpp",
    "platforms/src/platform_spec.cpp",
    "platforms/src/cpu_catalog.cpp",
    "workloads/src/layer_graph.cpp",
    "simulator/study/src/validate.cpp",
]
NOT_INPUT_FORMATS = {
    # input_pipeline.cpp: InputPipelineTiming::from_json reads a dumped plan (the plan format), not a scenario.
    frozenset({"loader_threads", "cores_per_gpu", "load_s", "compute_iteration_s", "wait_s"}),
}
allow_only = re.compile(r"allow_only\(\s*\{([^}]*)\}", re.S)
for rel in READERS:
    path = ROOT / rel
    if not path.exists():
        fail(f"{rel}: reader not found (moved? update READERS in {pathlib.Path(__file__).name})")
        continue
    text = path.read_text(encoding="utf-8")
    for m in allow_only.finditer(text):
        keys = frozenset(re.findall(r'"([^"]+)"', m.group(1)))
        if keys in NOT_INPUT_FORMATS:
            continue
        if keys not in key_sets:
            line = text.count("\n", 0, m.start()) + 1
            near = min(key_sets, key=lambda k: len(k ^ keys))
            fail(f"{rel}:{line}: the reader allows {sorted(keys)} and no schema object has exactly these keys "
                 f"(closest differs by {sorted(near ^ keys)})")

# The GPU platform's keys are platform_keys() in platform_spec.cpp.
text = (ROOT / "platforms/src/platform_spec.cpp").read_text(encoding="utf-8")
m = re.search(r"platform_keys\(\)\s*\{\s*static const std::vector<std::string> keys = \{([^}]*)\}", text)
platform_keys = frozenset(re.findall(r'"([^"]+)"', m.group(1))) if m else None
if platform_keys != frozenset(schemas["platform"]["$defs"]["gpuPlatformFields"]["properties"]):
    fail(f"platforms/src/platform_spec.cpp: platform_keys() {sorted(platform_keys or [])} differ from the platform schema's")

# Layer types and their keys: the registry of layer_costs.cpp.
text = (ROOT / "workloads/src/layer_costs.cpp").read_text(encoding="utf-8")
registry = {t: frozenset(re.findall(r'"([^"]+)"', keys)) for t, keys in re.findall(r'\{"(\w+)", entry\(\{([^}]*)\}', text)}
layer = schemas["layer_graph"]["$defs"]["layer"]
if set(registry) != set(layer["properties"]["type"]["enum"]):
    fail(f"layer types: the registry has {sorted(registry)}, the layer-graph schema {layer['properties']['type']['enum']}")
schema_keys = {rule["if"]["properties"]["type"]["const"]: frozenset(rule["then"]["propertyNames"]["enum"]) - {"name", "type", "parents"}
               for rule in layer["allOf"]}
for t, keys in registry.items():
    if schema_keys.get(t) != keys:
        fail(f"layer type {t}: the registry takes {sorted(keys)}, the schema {sorted(schema_keys.get(t, []))}")

# ---- 3. What the readers refuse for its type, range, enum or keys, the schemas refuse ---------------
quickstart = load(ROOT / "scenarios/quickstart.json")
cpu_scenario = load(ROOT / "scenarios/cpu_threading_inception_vs_resnet.json")
graph = load(good / "good/workloads/tiny_resnet_block.json")
full_platform = load(good / "good/platforms/torus_cluster.json")
systems = load(ROOT / "scenarios/validation/systems.json")


def mutated(document, edit):
    d = copy.deepcopy(document)
    edit(d)
    return d


NEGATIVE = [
    ("scenario", "batch_per_gpu as a string", quickstart, lambda d: d["workload"].update(batch_per_gpu="64")),
    ("scenario", "batch_per_gpu 0", quickstart, lambda d: d["workload"].update(batch_per_gpu=0)),
    ("scenario", "batch_per_gpu 1.5", quickstart, lambda d: d["workload"].update(batch_per_gpu=1.5)),
    ("scenario", "unknown top-level key", quickstart, lambda d: d.update(workers=4)),
    ("scenario", "unknown workload key", quickstart, lambda d: d["workload"].update(batch=4)),
    ("scenario", "both model and file", quickstart, lambda d: d["workload"].update(file="x.json")),
    ("scenario", "strong scaling without global_batch", quickstart, lambda d: d["workload"].update(scaling="strong")),
    ("scenario", "unknown strategy kind", quickstart, lambda d: d["strategy"].update(kind="ring")),
    ("scenario", "overlap as a string", quickstart, lambda d: d["strategy"].update(overlap="yes")),
    ("scenario", "negative bucket", quickstart, lambda d: d["strategy"].update(bucket_MB=-1)),
    ("scenario", "unknown precision", quickstart, lambda d: d["workload"].update(precision="fp64")),
    ("scenario", "missing strategy on a GPU platform", quickstart, lambda d: d.pop("strategy")),
    ("scenario", "dedicated GPU aggregation", quickstart,
     lambda d: d["strategy"].update(kind="parameter_server", server_placement="dedicated", aggregation="gpu")),
    ("scenario", "partition below 1 KiB", quickstart, lambda d: d["strategy"].update(kind="parameter_server", partition_MB=1e-9)),
    ("scenario", "gpu_speed key not an index", quickstart, lambda d: d.update(heterogeneity={"gpu_speed": {"03": 0.5}})),
    ("scenario", "straggler probability above 1", quickstart, lambda d: d.update(heterogeneity={"straggler_probability": 2})),
    ("scenario", "compute efficiency 0", quickstart, lambda d: d.update(compute={"conv_efficiency": 0})),
    ("scenario", "empty sweep axis", quickstart, lambda d: d.update(sweep={"platform.nodes": []})),
    ("scenario", "sweep axis not an array", quickstart, lambda d: d.update(sweep={"platform.nodes": 4})),
    ("scenario", "input pipeline without decode time", quickstart, lambda d: d["workload"].update(input_pipeline={"loader_threads": 4})),
    ("scenario", "threading on a GPU platform", quickstart, lambda d: d.update(threading={"inter_op_pools": 2})),
    ("scenario", "strategy on a CPU platform", cpu_scenario, lambda d: d.update(strategy={"kind": "ring_allreduce"})),
    ("scenario", "CPU platform with 2 nodes", cpu_scenario, lambda d: d["platform"].update(nodes=2)),
    ("scenario", "CPU platform with 9 sockets", cpu_scenario, lambda d: d["platform"].update(sockets=9)),
    ("scenario", "threading mode unknown", cpu_scenario, lambda d: d["threading"].update(mode="serving")),
    ("scenario", "platform device not cpu", quickstart, lambda d: d["platform"].update(device="gpu")),
    ("scenario", "nodes as a string", quickstart, lambda d: d["platform"].update(nodes="4")),
    ("scenario", "a CPU object without its clock", load(ROOT / "scenarios/cpu_resnet50_pytorch_16_cores.json"),
     lambda d: d["platform"]["cpu"].pop("clock_GHz")),
    ("scenario", "a CPU object with 0 cores", load(ROOT / "scenarios/cpu_resnet50_pytorch_16_cores.json"),
     lambda d: d["platform"]["cpu"].update(cores_per_socket=0)),
    ("scenario", "sockets beside a CPU object", load(ROOT / "scenarios/cpu_resnet50_pytorch_16_cores.json"),
     lambda d: d["platform"].update(sockets=2)),
    ("scenario", "execution_mode without onnxruntime", cpu_scenario, lambda d: d["threading"].update(execution_mode="parallel")),
    ("scenario", "unknown framework", cpu_scenario, lambda d: d["threading"].update(framework="jax")),
    ("scenario", "PyTorch with two inter-op pools", cpu_scenario, lambda d: d["threading"].update(framework="pytorch", inter_op_pools=2)),
    ("platform", "full description without a network", full_platform, lambda d: d.pop("network")),
    ("platform", "unknown topology", full_platform, lambda d: d["network"].update(topology="ring")),
    ("platform", "negative latency", full_platform, lambda d: d["network"].update(latency_us=-1)),
    ("platform", "zero bandwidth", full_platform, lambda d: d["network"].update(bandwidth_Gbps=0)),
    ("platform", "sharp as a string", full_platform, lambda d: d["network"].update(sharp="true")),
    ("platform", "fat_tree shape on a torus", full_platform, lambda d: d["network"].update(fat_tree={"levels": 2})),
    ("platform", "unknown network model", full_platform, lambda d: d["network"].update(model="reno")),
    ("platform", "efficiency above 1", full_platform, lambda d: d["intra_node"].update(efficiency=1.5)),
    ("platform", "pcie_bandwidth_GBps with kind pcie", full_platform,
     lambda d: d["intra_node"].update(kind="pcie", pcie_bandwidth_GBps=16)),
    ("platform", "both preset and file", {"preset": "dgx-a100"}, lambda d: d.update(file="p.json")),
    ("platform", "topology beside an XML file", {"file": "two_hosts.xml"}, lambda d: d.update(nodes=2)),
    ("platform", "unknown key", {"preset": "dgx-a100"}, lambda d: d.update(gpus=8)),
    ("layer_graph", "no layers", graph, lambda d: d.update(layers=[])),
    ("layer_graph", "unknown layer type", graph, lambda d: d["layers"][1].update(type="conv3d")),
    ("layer_graph", "a key of another type", graph, lambda d: d["layers"][1].update(rate=0.5)),
    ("layer_graph", "out_channels as a string", graph, lambda d: d["layers"][1].update(out_channels="16")),
    ("layer_graph", "kernel of three sizes", graph, lambda d: d["layers"][1].update(kernel=[3, 3, 3])),
    ("layer_graph", "unknown padding mode", graph, lambda d: d["layers"][1].update(padding="full")),
    ("layer_graph", "conv2d without out_channels", graph, lambda d: d["layers"][1].pop("out_channels")),
    ("layer_graph", "zero size in a shape", graph, lambda d: d["layers"][0].update(shape=[3, 0, 32])),
    ("layer_graph", "parents not an array", graph, lambda d: d["layers"][9].update(parents="bn2")),
    ("layer_graph", "dropout rate 1", graph, lambda d: d["layers"][2].update(type="dropout", rate=1)),
    ("layer_graph", "reshape with two -1", graph, lambda d: d["layers"][12].update(type="reshape", shape=[-1, -1])),
    ("systems", "nodes in a system's platform", systems, lambda d: d["systems"][0]["platform"].update(nodes=2)),
    ("systems", "model in a system's workload", systems, lambda d: d["systems"][0].update(workload={"model": "resnet50"})),
    ("systems", "servers_at on a ring", systems, lambda d: d["systems"][0]["strategies"]["ring_allreduce_nccl (bucket 25MB)"].update(
        servers_per_node=1)),
    ("systems", "no systems", systems, lambda d: d.update(systems=[])),
]
for kind, what, base, edit in NEGATIVE:
    expect_valid(kind, base, f"negative case '{what}' before its edit")
    if not errors_of(kind, mutated(base, edit)):
        fail(f"negative case '{what}': the {kind} schema accepts it, and the reader refuses it")

if failures:
    print("\n".join(failures))
    print(f"schema_check: {len(failures)} failure(s)")
    sys.exit(1)
print(f"schema_check: {len(SCHEMAS)} schemas; {checked} files in scenarios/ and their sweep points valid; "
      f"{len(NEGATIVE)} negative cases refused; reader key lists match")
