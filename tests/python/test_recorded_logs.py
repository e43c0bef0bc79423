"""`jointscope-cli check` on TORCH_TRACE logs recorded where CI cannot capture them: on a GPU, or under an older torch.

tests/data/recorded-logs/<torch>-<device>/*.log.xz, xz-compressed as recorded:
- torch2.11-cuda: the torch 2 zoo compiled with torch.compile(backend="inductor") with every tensor on an NVIDIA
  H200, torch 2.11.0+cu130 (tests/python/device_log_zoo.py; docs/benchmarks.md "On a GPU"):
  - dynamic_gpt_seq_budget05: CUDA's efficient attention under a dynamic sequence length; its logsumexp is
    f32[2, 4, 32*CeilToInt(IntTrueDiv(s27, 32))], whose bytes weigh in the knapsack.
  - ac_dropout_masked_attention_budget05: dropout under checkpointing (graphsafe_run_with_rng_state, CUDA's RNG
    states as graph inputs) and a compile dynamo restarted (attempt 1: its graphs say compile 0/0_1, its
    compilation_metrics record says 0/0 inside).
  - budget05_aot_cache_hit: three compiles, the last served by the AOTAutograd cache, which logs no
    torch._functorch.config (its budget is the process's).
  - embedding_max_norm_pad_mm, gpt2_lm_bf16_pad_mm: inductor's pad_mm padded matmuls (a 15-row mm; GPT-2's
    50257-wide LM head under bf16 autocast), a choice torch times on the GPU: read off torch's graphs. GPT-2's
    backward holds f32 -> bf16 -> f32 chains, which torch before 2.13 folds (pointless_convert).
  - embedding_max_norm_addmm_pad_mm: a padded addmm whose operand torch's graphs name after its CSE twin (view
    for the joint's view_2), and a backward mm reading a pad saved by the forward.
  - ac_dropout_addmm_bias_pad: checkpointed dropout models, one whose padded addmm pads its bias with
    cat([bias, full]) (pad_mm's pad_dim).
  - literal_noops_bf16_pad_mm: x / 1.0, x * 1, ... with Python numbers, which torch before 2.14 keeps
    (remove_no_ops takes folded full nodes only), and a padded bf16 addmm.
  - nested_region_bf16_budget05_cudagraphs_body_pad_mm (mode="reduce-overhead"): pad_mm padded a matmul of a
    nested_compile_region body on the body's joint graph, before the body's partition, which saves the slice
    back to size (slice_tensor): read off torch's partitioned bodies and replayed on that body alone.
  - nested_region_bf16_padded_after_partition: the same body padded only after its partition (the outer
    compile's joint-graph passes run again on each partitioned body, naming their nodes afresh: both bodies
    hold a constant_pad_nd_default of their own); the body's saved values are those of the unpadded joint.
  - nested_region_dynamic_fp16_budget05 (dynamic=True, float16 autocast): the body's sizes are in the outer
    graph's symbols, weighed by its hints in the body's knapsack.
  - bert_one_symbol_twice_dynamic_fp16_budget05 (2026-11-30 zoo run): BERT self-attention compiled with
    dynamic=True under float16 autocast at budget 0.5, whose inputs primals_3 and primals_10 are both Sym(s31) (a
    guard made two symbols one): torch 2.11 binds symbols by their replaced expression, so saving primals_10
    binds s31 and primals_3 is not saved (torch 2.14 binds each placeholder's own).
  - gumbel_codebook_bf16_scatter_where (2026-11-30 zoo run): a Gumbel-softmax codebook, spectral norm and a DLRM
    interaction under bf16 autocast; the codebook's one_hot (scatter into a bf16 full) becomes
    scatter_upon_const_tensor's where of two Python numbers, which torch 2.11 leaves float32 (2.13 on converts it
    back to the full's dtype).
  - unet_upsample_dynamic_floordiv_pow (2026-11-30 zoo run): a scaled attention, a cross attention and a UNet
    upsample compiled with dynamic=True; the upsample's backward on CUDA scales by
    FloatTrueDiv(1.0, ToFloat(4*s53*(((s53**2)//s53)))), which tensorify_python_scalars makes into tensor ops,
    a floor division (div.Tensor_mode) and a power (pow.Tensor_Tensor) among them.
  - simsiam_chained_pad_mm (2026-11-30 zoo run): SimSiam's projector and predictor, six 6-row addmms padded to 8,
    the predictor's reading the projector's: torch's graphs name that operand after the projector's slice back
    to size (slice_tensor_8), which pad_mm makes later, visiting the graph from its end.
- torch2.12-cpu: contrastive_clip under inductor, torch 2.12.0 on the CPU (and under bfloat16 autocast: the scaled
  logits converted to float32 first): inductor's mul_softmax_pattern (a tensor scale, logit_scale.exp()) and
  div_softmax_pattern (a temperature) in their form before torch 2.13, which rewrites scale(x) - amax(scale(x))
  without keeping the original where a value is not finite.
  - dino_drop_path_randperm_index_add: DINOv2's drop-path (randperm(b)[:k]), where torch 2.12 replaces only the
    index_add through the sliced randperm (randperm_index_add_pattern), not the index (its sliced index pattern
    traced no slice); then randperm_shuffle, whose full-randperm index that pattern matched and failed torch's
    compile (no forward graph: skipped).
- torch2.14-cpu: dino_drop_path, then randperm_shuffle, under inductor, torch 2.14.0 on the CPU: its randperm
  patterns replace the index through a sliced or a full randperm and the index_add through a sliced one, not yet
  the index_add through a full randperm (torch 2.15's randperm_index_add_full_pattern).
- torch2.13-cpu: embedding_max_norm under inductor, torch 2.13.0 on the CPU: two slices of the weight the forward
  renormalizes in place, which torch's CSE leaves apart (they alias a graph output).
Expected values: torch's own saved lists in each log; `check` must find them for every compile.
"""

import json
import lzma
import os
import shutil
import subprocess
import tempfile
import unittest

from clitool import cli_path, run_cli

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "recorded-logs")
RULESET_CHOICE = {
    "torch2.11-cuda": "torch 2.11.0+cu130 recorded in the graph: ruleset torch-2.11",
    "torch2.12-cpu": "torch 2.12.0+cu130 recorded in the graph: ruleset torch-2.12",
    "torch2.13-cpu": "torch 2.13.0+cu130 recorded in the graph: ruleset torch-2.13",
    "torch2.14-cpu": "torch 2.14.0+cu130 recorded in the graph: ruleset torch-2.14",
}


class RecordedLogs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.reports = {}
        for folder in sorted(os.listdir(DATA)):
            for name in sorted(os.listdir(os.path.join(DATA, folder))):
                if not name.endswith(".log.xz"):
                    continue
                log = os.path.join(cls.tmp, folder + "-" + name[:-3])
                with lzma.open(os.path.join(DATA, folder, name)) as src, open(log, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                proc = subprocess.run([cli_path(), "check", log, "--json"], capture_output=True, text=True,
                                      timeout=600)
                report = json.loads(proc.stdout) if proc.stdout.strip() else None
                cls.reports[folder + "/" + name[:-len(".log.xz")]] = (proc, report)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def compiles(self, name):
        proc, report = self.reports[name]
        self.assertIsNotNone(report, proc.stderr)
        return [c for c in report["compiles"] if c["status"] != "skipped"]

    def test_the_recorded_logs(self):
        self.assertEqual(sorted(self.reports), [
            "torch2.11-cuda/ac_dropout_addmm_bias_pad",
            "torch2.11-cuda/ac_dropout_masked_attention_budget05",
            "torch2.11-cuda/bert_one_symbol_twice_dynamic_fp16_budget05", "torch2.11-cuda/budget05_aot_cache_hit",
            "torch2.11-cuda/dynamic_gpt_seq_budget05", "torch2.11-cuda/embedding_max_norm_addmm_pad_mm",
            "torch2.11-cuda/embedding_max_norm_pad_mm", "torch2.11-cuda/gpt2_lm_bf16_pad_mm",
            "torch2.11-cuda/gumbel_codebook_bf16_scatter_where",
            "torch2.11-cuda/literal_noops_bf16_pad_mm",
            "torch2.11-cuda/nested_region_bf16_budget05_cudagraphs_body_pad_mm",
            "torch2.11-cuda/nested_region_bf16_padded_after_partition",
            "torch2.11-cuda/nested_region_dynamic_fp16_budget05", "torch2.11-cuda/simsiam_chained_pad_mm",
            "torch2.11-cuda/unet_upsample_dynamic_floordiv_pow",
            "torch2.12-cpu/contrastive_clip_bf16_softmax_patterns", "torch2.12-cpu/contrastive_clip_softmax_patterns",
            "torch2.12-cpu/dino_drop_path_randperm_index_add",
            "torch2.13-cpu/embedding_max_norm", "torch2.14-cpu/dino_drop_path_randperm_shuffle"])

    def test_nested_region_bodies_are_torchs(self):
        # (log, a value torch's partitioned body saves that tells the case apart)
        for name, telling in (("nested_region_bf16_budget05_cudagraphs_body_pad_mm", "slice_tensor"),
                              ("nested_region_bf16_padded_after_partition", "convert_element_type_10"),
                              ("nested_region_dynamic_fp16_budget05", "convert_element_type_10")):
            bodies = [b for c in self.compiles("torch2.11-cuda/" + name) for b in c.get("invoke_subgraph_bodies", [])]
            with self.subTest(log=name):
                self.assertTrue(bodies)
                for b in bodies:
                    self.assertIn(telling, b["saved"]["torch"])
                    self.assertEqual((b["saved"]["ours"], b["saved_sym"]["ours"]),
                                     (b["saved"]["torch"], b["saved_sym"]["torch"]))

    def test_every_compile_is_torchs_decision(self):
        for name in self.reports:
            compiles = self.compiles(name)
            self.assertGreaterEqual(len(compiles), 1)
            for c in compiles:
                with self.subTest(log=name, compile_id=c["compile_id"]):
                    self.assertEqual(c["status"], "identical", json.dumps(c, indent=1)[:4000])
                    self.assertEqual(c["ruleset_choice"], RULESET_CHOICE[name.split("/")[0]])
                    if name.endswith("budget05"):
                        self.assertIn("activation_memory_budget = 0.5 (log)", c["settings"])

    def test_one_symbol_two_placeholders_binds_once(self):
        # torch's saved symbols, read off its forward graph's outputs: s27 twice, s31 once (primals_10)
        last = self.compiles("torch2.11-cuda/bert_one_symbol_twice_dynamic_fp16_budget05")[-1]
        self.assertEqual(last["saved_sym"]["torch"], ["primals_4", "primals_10", "primals_11"])
        self.assertEqual(last["saved_sym"]["ours"], last["saved_sym"]["torch"])

    def test_float_expressions_with_floor_division_and_powers(self):
        # torch's backward holds div_tensor_mode and pow_tensor_tensor (read off its graph); every float
        # expression is replayed, none reported
        upsample = self.compiles("torch2.11-cuda/unet_upsample_dynamic_floordiv_pow")[-1]
        self.assertEqual(upsample["joint_passes"]["not_replayed"], [])
        made = [n for ch in upsample["joint_passes"]["changes"] if ch["pass"] == "tensorify_python_scalars"
                for n in ch["added"]]
        self.assertIn("div_tensor_mode", made)
        self.assertIn("pow_tensor_tensor", made)

    def test_scatter_upon_const_tensor_keeps_where_dtype_before_2_13(self):
        # torch 2.11's forward: where_self is f32 and read as it is (no convert back to bf16)
        gumbel = self.compiles("torch2.11-cuda/gumbel_codebook_bf16_scatter_where")[0]
        changes = [ch for ch in gumbel["joint_passes"]["changes"] if ch["pass"] == "scatter_upon_const_tensor"]
        self.assertEqual([r for ch in changes for r in ch["replaced"]], [["scatter", "where_self"]])

    def test_restarted_compile_reads_its_metrics(self):
        ids = [c["compile_id"] for c in self.compiles("torch2.11-cuda/ac_dropout_masked_attention_budget05")]
        self.assertIn("0/0_1", ids)

    def test_cache_hit_takes_the_process_config(self):
        last = self.compiles("torch2.11-cuda/budget05_aot_cache_hit")[-1]
        self.assertTrue(any("the AOTAutograd cache served this compile, which logs none" in s
                            for s in last["settings"]), last["settings"])

    def test_pad_mm_is_read_off_torchs_graphs(self):
        # (log, compile, matmuls torch padded: counted by hand in its forward and backward graphs)
        for name, index, padded in (("torch2.11-cuda/embedding_max_norm_pad_mm", 1, 1),
                                    ("torch2.11-cuda/embedding_max_norm_addmm_pad_mm", 1, 2),
                                    ("torch2.11-cuda/literal_noops_bf16_pad_mm", 0, 1),
                                    ("torch2.11-cuda/gpt2_lm_bf16_pad_mm", 0, 3),
                                    ("torch2.11-cuda/ac_dropout_addmm_bias_pad", 1, 3),
                                    ("torch2.11-cuda/simsiam_chained_pad_mm", 1, 10)):
            c = self.compiles(name)[index]
            with self.subTest(log=name):
                # one entry per run of pad_mm changes (pass_patterns walks every pattern at once)
                replaced = [r for ch in c["joint_passes"]["changes"] if ch["pass"] == "pad_mm" for r in ch["replaced"]]
                self.assertEqual(len(replaced), padded, c["joint_passes"])
                self.assertEqual(c["joint_passes"]["not_replayed"], [])

    def test_softmax_patterns_are_replayed(self):
        # (log, the sub nodes torch's graphs show replaced: found by hand in its forward graph, where the
        # cross-entropy's and the temperature's amax / sub are gone)
        for name, replaced in (("torch2.12-cpu/contrastive_clip_softmax_patterns", {"sub", "sub_4"}),
                               ("torch2.12-cpu/contrastive_clip_bf16_softmax_patterns", {"sub", "sub_4"})):
            c = self.compiles(name)[0]
            with self.subTest(log=name):
                ours = {old for ch in c["joint_passes"]["changes"] if ch["pass"].endswith("_softmax_pattern")
                        for old, new in ch["replaced"]}
                self.assertEqual(ours, replaced, c["joint_passes"])

    def test_randperm_patterns_follow_the_torch_version(self):
        # torch 2.12's graphs: the joint's index_put (forward) and index_put_1 (backward) are gone, made
        # index_put_default(_1) over _unsafe_index; index and index_1 are still there (found by hand)
        # torch 2.14's: the DINO compile's index, index_1, index_put and index_put_1 are all gone; the shuffle's
        # index and index_1 are gone, its index_put and index_put_1 (through the full randperm) are still there
        for name, index, expected in (("torch2.12-cpu/dino_drop_path_randperm_index_add", 0,
                                       {"index_put", "index_put_1"}),
                                      ("torch2.14-cpu/dino_drop_path_randperm_shuffle", 0,
                                       {"index", "index_1", "index_put", "index_put_1"}),
                                      ("torch2.14-cpu/dino_drop_path_randperm_shuffle", 1, {"index", "index_1"})):
            c = self.compiles(name)[index]
            with self.subTest(log=name, compile=index):
                replaced = {old for ch in c["joint_passes"]["changes"] if ch["pass"].startswith("randperm_index")
                            for old, new in ch["replaced"]}
                self.assertEqual(replaced, expected, c["joint_passes"])

    def test_partition_replays_what_check_does(self):
        # `partition` on the logged joint graph (the CLI's and the GUI's path) reads pad_mm's choice from the log
        # as `check` does: torch's saved list, the padded LM head's product among it.
        log = os.path.join(self.tmp, "torch2.11-cuda-gpt2_lm_bf16_pad_mm.log")
        ours = json.loads(run_cli("partition", log, "--graph", "aot_joint_graph@0/0", "--json"))
        torch_saved = self.compiles("torch2.11-cuda/gpt2_lm_bf16_pad_mm")[0]["saved"]["torch"]
        self.assertEqual(ours["saved"], torch_saved)
        self.assertIn("mm_default_2", ours["saved"])

    def test_graphs_have_torchs_nodes(self):
        # Every pass replayed made the nodes torch made, and every random op recomputed under checkpointing is
        # wrapped as torch wraps it (functionalize_rng_ops: on CUDA graphsafe_run_with_rng_state, with the
        # generator states fwd_rng_state_K / bwd_rng_state_K as graph inputs): the forward and backward hold
        # exactly torch's node names.
        for name in self.reports:
            for c in self.compiles(name):
                with self.subTest(log=name, compile_id=c["compile_id"]):
                    for graph in ("forward", "backward"):
                        self.assertEqual((c[graph]["only_ours"], c[graph]["only_torch"]), ([], []), graph)
                    self.assertTrue(c["graphs_as_torch"])
            proc, report = self.reports[name]
            self.assertEqual(report["graphs_as_torch"], len(self.compiles(name)))


if __name__ == "__main__":
    unittest.main()
