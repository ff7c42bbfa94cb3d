"""The trainsim Python module, with Python's own unittest (run by CTest, see CMakeLists.txt here).

The module is found through PYTHONPATH (the build's python/ folder); TRAINSIM_SOURCE_DIR points at
the repository, for the scenarios and test models.
"""
import copy
import json
import os
import tempfile
import unittest

import trainsim

SOURCE = os.environ["TRAINSIM_SOURCE_DIR"]


def scenario(name):
    with open(os.path.join(SOURCE, "scenarios", name)) as f:
        return json.load(f)


SMALL = {
    "name": "two DGX-A100 nodes",
    "workload": {"model": "resnet50", "batch_per_gpu": 64, "precision": "tf32"},
    "platform": {"preset": "dgx-a100", "nodes": 2},
    "strategy": {"kind": "ring_allreduce", "bucket_MB": 25},
}


class Simulate(unittest.TestCase):
    def test_result_is_the_cli_result(self):
        r = trainsim.simulate(SMALL, reproducible=True)
        self.assertIsInstance(r, dict)
        self.assertGreater(r["samples_per_s"], 0)
        self.assertEqual(r["gpus"], 16)
        self.assertIn("breakdown_s", r)
        # The same scenario through the executable gives the same bytes (the --json document).
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.json")
            out = os.path.join(d, "r.json")
            with open(path, "w") as f:
                json.dump(SMALL, f)
            binary = os.environ["TRAINSIM_BINARY"]
            self.assertEqual(os.spawnv(os.P_WAIT, binary, [binary, "simulate", path, "--json", out, "--reproducible"]), 0)
            with open(out) as f:
                cli = json.load(f)
        self.assertEqual(r, cli)

    def test_repeated_calls_are_independent_and_deterministic(self):
        # SimGrid has one engine per process: each call runs in its own child.
        a = trainsim.simulate(SMALL, reproducible=True)
        b = trainsim.simulate(SMALL, reproducible=True)
        self.assertEqual(a, b)

    def test_sets_override_fields(self):
        one = trainsim.simulate(SMALL, sets=["platform.nodes=1"])
        self.assertEqual(one["gpus"], 8)

    def test_onnx_workload_from_a_dict(self):
        s = scenario("bert_base_onnx.json")
        r = trainsim.simulate(s, source=os.path.join(SOURCE, "scenarios", "bert_base_onnx.json"))
        self.assertGreater(r["samples_per_s"], 0)

    def test_input_is_not_modified(self):
        s = copy.deepcopy(SMALL)
        trainsim.simulate(s)
        self.assertEqual(s, SMALL)


class BadInput(unittest.TestCase):
    def test_wrong_python_type_names_the_key(self):
        s = copy.deepcopy(SMALL)
        s["workload"]["batch_per_gpu"] = {1, 2}
        with self.assertRaises(TypeError) as e:
            trainsim.simulate(s)
        self.assertIn("trainsim.simulate: /workload/batch_per_gpu: a set has no JSON form", str(e.exception))

    def test_scenario_that_is_not_a_dict(self):
        with self.assertRaises(TypeError) as e:
            trainsim.simulate("scenarios/quickstart.json")
        self.assertIn("scenario must be a dict", str(e.exception))

    def test_wrong_json_type_is_an_input_error_with_its_pointer(self):
        s = copy.deepcopy(SMALL)
        s["workload"]["batch_per_gpu"] = "64"
        with self.assertRaises(trainsim.InputError) as e:
            trainsim.simulate(s)
        self.assertIsInstance(e.exception, ValueError)
        self.assertEqual(e.exception.source, "scenario")
        self.assertEqual(e.exception.pointer, "/workload/batch_per_gpu")
        self.assertIn("scenario: /workload/batch_per_gpu:", str(e.exception))

    def test_unknown_key_suggests(self):
        s = copy.deepcopy(SMALL)
        s["strategy"]["bucket_mb"] = 25
        with self.assertRaises(trainsim.InputError) as e:
            trainsim.simulate(s)
        self.assertIn("bucket_MB", e.exception.detail)

    def test_error_inside_the_child_comes_back(self):
        # The workload is loaded in the simulation's child: its error crosses the pipe intact.
        s = copy.deepcopy(SMALL)
        del s["workload"]["model"]
        s["workload"]["onnx"] = os.path.join(SOURCE, "tests", "data", "bad", "workloads", "onnx", "unknown_op.onnx")
        with self.assertRaises(trainsim.InputError) as e:
            trainsim.simulate(s)
        self.assertIn("custom.FancyAct (2 nodes, first '/act1')", str(e.exception))
        self.assertTrue(e.exception.source.endswith("unknown_op.onnx"))


class Sweep(unittest.TestCase):
    def test_points(self):
        s = copy.deepcopy(SMALL)
        s["sweep"] = {"platform.nodes": [1, 2]}
        with tempfile.TemporaryDirectory() as d:
            rows = trainsim.sweep(s, out=d, jobs=2)
            self.assertTrue(os.path.exists(os.path.join(d, "results.csv")))
        self.assertEqual([r["point"]["platform.nodes"] for r in rows], [1, 2])
        self.assertEqual([r["gpus"] for r in rows], [8, 16])

    def test_bad_axis(self):
        s = copy.deepcopy(SMALL)
        s["sweep"] = {"platform.nodez": [1, 2]}
        with self.assertRaises(trainsim.InputError) as e:
            trainsim.sweep(s)
        self.assertIn("/sweep/platform.nodez", str(e.exception))


class Collective(unittest.TestCase):
    def test_sizes(self):
        r = trainsim.collective("dgx-a100", op="allreduce", algorithm="ring", bytes=[1 << 20, 1 << 26])
        self.assertEqual([row["size_bytes"] for row in r["results"]], [1 << 20, 1 << 26])
        self.assertGreater(r["results"][1]["busbw_GBps"], 0)

    def test_bad_size_names_the_option(self):
        with self.assertRaises(trainsim.InputError) as e:
            trainsim.collective("dgx-a100", bytes="8:4")
        self.assertEqual(e.exception.pointer, "--bytes")

    def test_wrong_type(self):
        with self.assertRaises(TypeError):
            trainsim.collective("dgx-a100", bytes=True)


class Fit(unittest.TestCase):
    DATA = {"gpus": [1, 2, 4, 8, 16, 32], "iteration_time_s": [0.1, 0.11, 0.12, 0.13, 0.14, 0.15]}

    def test_columns(self):
        r = trainsim.fit(self.DATA, "iteration_time_s", expression="c0 + c1*log2(gpus)", bounds=["c0=0:1,c1=0:1"], bootstrap=0)
        self.assertAlmostEqual(r["constants"]["c0"], 0.1, delta=0.005)
        self.assertAlmostEqual(r["constants"]["c1"], 0.01, delta=0.002)
        self.assertGreater(r["r2"], 0.99)

    def test_missing_column(self):
        with self.assertRaises(trainsim.InputError) as e:
            trainsim.fit(self.DATA, "time_s", expression="c0", bounds=["c0=0:1"], bootstrap=0)
        self.assertIn("time_s", str(e.exception))

    def test_wrong_cell_type(self):
        with self.assertRaises(TypeError) as e:
            trainsim.fit({"gpus": [1, "two"], "t": [1.0, 2.0]}, "t", expression="c0", bootstrap=0)
        self.assertIn("data['gpus'][1]", str(e.exception))


class WorkloadInfo(unittest.TestCase):
    def test_onnx(self):
        r = trainsim.workload_info(os.path.join(SOURCE, "tests", "data", "good", "workloads", "onnx", "gpt2.onnx"), sequence_length=1024)
        self.assertEqual(r["params"], 124439808)


if __name__ == "__main__":
    unittest.main()
