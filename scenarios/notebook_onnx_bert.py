"""A notebook-style study in plain Python: BERT-base brought from PyTorch as an ONNX file.

Run it from the repository root after the README's first command (which builds the module and sets
PYTHONPATH), cell by cell in a notebook or at once:

    python3 scenarios/notebook_onnx_bert.py
"""
# %% The scenario file, as a dict: the model is scenarios/models/bert_base.onnx
import json
import os

import trainsim

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO_FILE = os.path.join(HERE, "bert_base_onnx.json")
with open(SCENARIO_FILE) as f:
    scenario = json.load(f)

# %% What the importer read: parameters and FLOPs of the ONNX graph, node by node
info = trainsim.workload_info(os.path.join(HERE, scenario["workload"]["onnx"]), sequence_length=128)
print(f"{info['name']}: {info['params']:,} parameters, {info['forward_flops'] / 1e9:.1f} GFLOPs forward per sequence, "
      f"{len(info['layers'])} layers")

# %% One iteration (source= makes the model path relative to the scenario file, as the CLI does)
result = trainsim.simulate(scenario, source=SCENARIO_FILE)
b = result["breakdown"]
print(f"{result['gpus']} GPUs: {result['samples_per_s']:.0f} samples/s, scaling efficiency "
      f"{100 * result['scaling_efficiency']:.1f} %, compute {b['compute_s'] * 1e3:.1f} ms, "
      f"exposed communication {b['exposed_communication_s'] * 1e3:.1f} ms")

# %% The sweep of the scenario file (node counts × sequence lengths), two points at a time
rows = trainsim.sweep(scenario, jobs=2, source=SCENARIO_FILE)
print(f"{'nodes':>5} {'sequence':>8} {'samples/s':>10} {'iteration (ms)':>15}")
for r in rows:
    p = r["point"]
    print(f"{p['platform.nodes']:>5} {p['workload.sequence_length']:>8} {r['samples_per_s']:>10.0f} {r['iteration_time_s'] * 1e3:>15.1f}")

# %% A scaling expression fitted to the simulated points at sequence 128 (pandas would read `rows` as is)
at_128 = [r for r in rows if r["point"]["workload.sequence_length"] == 128]
data = {"gpus": [r["gpus"] for r in at_128], "iteration_time_s": [r["iteration_time_s"] for r in at_128]}
fit = trainsim.fit(data, "iteration_time_s", expression="c0 + c1*log2(gpus)", bounds=["c0=0:10,c1=0:10"], bootstrap=0)
print("fitted", {k: fit[k] for k in ("expression", "r2") if k in fit})
