"""The log zoo (test_torch2_log_zoo) on a GPU: TORCH_TRACE logs of the torch 2 zoo compiled with every tensor on
the device, as users run torch.compile (inductor generates Triton there; SDPA runs CUDA's flash / efficient attention;
under autocast the forward computes in bfloat16), then checked by `jointscope-cli check`.

On the GPU box (torch with CUDA; no CLI needed):
    PYTHONPATH=python:tests/python python3 tests/python/device_log_zoo.py capture OUTDIR
  compiles every zoo model under each configuration below, JS_ZOO_JOBS child processes at a time (one TORCH_TRACE
  log per child, a few models each), and GPT-2-small's LM head under bf16 autocast, until JS_ZOO_SECONDS (default
  420) have passed; writes OUTDIR/<config>/<n>/*.log and OUTDIR/manifest.json (what each child compiled, in order).
Anywhere (no torch needed):
    python3 tests/python/device_log_zoo.py check OUTDIR CLI
  runs `CLI check LOG --json` on every log, pairs each checked compile with the case that made it, prints one line
  per compile that is not torch's decision and a count per configuration; exits 1 if any differs.
To bring the logs off the box (its files come back in a few megabytes):
    python3 tests/python/device_log_zoo.py trim OUTDIR
  rewrites every log without what `check` never reads: chromium events, generated code, C++ guards, FX graph
  cache keys and runnable reproducers (an inductor_output_code record keeps its header: it says inductor ran).
JS_ZOO_EXTRA (python files, comma-separated, each with a `builders()` as models.torch2_zoo_builders) adds models.
"""

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import time

# (name, backend, activation_memory_budget or None, autocast dtype or None, torch.compile mode or None,
# dynamic=True for every model): inductor first, as users run it.
CONFIGS = (("inductor", "inductor", None, None, None, False),
           ("inductor_bf16", "inductor", None, "bfloat16", None, False),
           ("inductor_budget05", "inductor", 0.5, None, None, False),
           ("aot_eager", "aot_eager", None, None, None, False),
           ("inductor_budget01", "inductor", 0.1, None, None, False),
           ("inductor_bf16_budget05", "inductor", 0.5, "bfloat16", None, False),
           ("aot_eager_budget05", "aot_eager", 0.5, None, None, False),
           # CUDA graphs (graphsafe RNG states), every model dynamic, float16 autocast
           ("inductor_reduce_overhead", "inductor", None, None, "reduce-overhead", False),
           ("inductor_reduce_overhead_budget05", "inductor", 0.5, "bfloat16", "reduce-overhead", False),
           ("inductor_dynamic", "inductor", None, None, None, True),
           ("inductor_dynamic_fp16_budget05", "inductor", 0.5, "float16", None, True))
# JS_ZOO_CONFIGS (names, comma-separated; "gpt2" for GPT-2's two children) picks some, JS_ZOO_MODELS some models;
# all by default.
MODELS_PER_CHILD = 3
# GPT-2-small's LM head under bf16 autocast (models.GPT2LM, batch 4 x 512): two steps, no budget and 0.5. Its
# 50257-wide matmuls are what inductor's pad_mm pads when its timing on the GPU says padding pays.
GPT2_CHILD = r"""
import json, sys, torch
from jointscope_torch.models import GPT2LM
torch.set_default_device("cuda")
torch.manual_seed(0)
model = GPT2LM()
idx, targets = torch.randint(0, 50257, (4, 512)), torch.randint(0, 50257, (4, 512))
with torch._functorch.config.patch(activation_memory_budget=float(sys.argv[1])):
    compiled = torch.compile(model)
    for step in range(2):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = compiled(idx, targets)
        loss.backward()
print(json.dumps({"case": "gpt2_lm_bf16", "ok": True}), flush=True)
"""


def capture(out):
    import torch  # noqa: F401  (fails here, not in every child, when there is none)
    from jointscope_torch.models import torch2_zoo_builders
    from test_torch2_log_zoo import CHILD

    device = os.environ.get("JS_ZOO_DEVICE", "cuda")
    deadline = time.time() + float(os.environ.get("JS_ZOO_SECONDS", "420"))
    jobs_at_once = int(os.environ.get("JS_ZOO_JOBS", str(os.cpu_count() or 1)))
    # mlp_aot is mlp through aot_module: the child compiles every case with torch.compile.
    models = [name for name in torch2_zoo_builders() if name != "mlp_aot"]
    for path in filter(None, os.environ.get("JS_ZOO_EXTRA", "").split(",")):
        spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        models += [name for name in module.builders() if name not in models]
    if os.environ.get("JS_ZOO_MODELS"):  # names, comma-separated: some models only
        models = [name for name in models if name in os.environ["JS_ZOO_MODELS"].split(",")]
    cache = os.path.join(out, "inductor-cache")
    chosen = os.environ.get("JS_ZOO_CONFIGS")
    chosen = set(chosen.split(",")) if chosen else None
    pending = []
    for name, backend, budget, autocast, mode, dynamic in CONFIGS:
        if chosen is not None and name not in chosen:
            continue
        for first in range(0, len(models), MODELS_PER_CHILD):
            pending.append(dict(config=name, backend=backend, budget=budget, autocast=autocast, mode=mode,
                                dynamic=dynamic, models=models[first:first + MODELS_PER_CHILD],
                                directory=os.path.join(out, name, str(first // MODELS_PER_CHILD))))
    if device.startswith("cuda") and (chosen is None or "gpt2" in chosen):
        for budget in (None, 0.5):
            pending.insert(0, dict(config="gpt2_lm_bf16" + ("_budget05" if budget else ""), budget=budget,
                                   autocast="bfloat16", models=["gpt2_lm_bf16"], child=GPT2_CHILD,
                                   directory=os.path.join(out, "gpt2_lm_bf16" + ("_budget05" if budget else ""))))
    running, done = [], []
    while pending or running:
        while pending and len(running) < jobs_at_once and time.time() < deadline:
            job = pending.pop(0)
            os.makedirs(job["directory"], exist_ok=True)
            env = dict(os.environ, TORCH_TRACE=job["directory"], TORCHINDUCTOR_CACHE_DIR=cache,
                       TORCHINDUCTOR_COMPILE_THREADS="1", JS_ZOO_DEVICE=device)
            for key in ("JS_ZOO_AUTOCAST", "JS_ZOO_MODE", "JS_ZOO_DYNAMIC"):
                env.pop(key, None)
            if job["autocast"]:
                env["JS_ZOO_AUTOCAST"] = job["autocast"]
            if job.get("mode"):
                env["JS_ZOO_MODE"] = job["mode"]
            if job.get("dynamic"):
                env["JS_ZOO_DYNAMIC"] = "1"
            job["stdout"] = open(os.path.join(job["directory"], "child.out"), "w")
            budget = "none" if job["budget"] is None else str(job["budget"])
            argv = ([sys.executable, "-c", job["child"], "1.0" if job["budget"] is None else budget] if "child" in job
                    else [sys.executable, "-c", CHILD, job["backend"], budget, *job["models"]])
            job["proc"] = subprocess.Popen(argv, env=env, stdout=job["stdout"], stderr=subprocess.STDOUT, text=True)
            job["start"] = time.time()
            running.append(job)
        if not running:
            break  # the deadline passed with jobs never started: they are listed as not run
        time.sleep(0.5)
        for job in list(running):
            if job["proc"].poll() is None and time.time() > deadline:
                job["proc"].kill()
                job["proc"].wait()
            if job["proc"].poll() is not None:
                running.remove(job)
                job["seconds"] = round(time.time() - job["start"], 1)
                done.append(job)
                print("%s %s: exit %d in %.0f s" % (job["config"], job["models"], job["proc"].returncode,
                                                    job["seconds"]), flush=True)
    manifest = []
    for job in done + pending:
        job.pop("stdout", None)
        proc = job.pop("proc", None)
        entry = {k: v for k, v in job.items() if k not in ("directory", "start", "child")}
        entry["directory"] = os.path.relpath(job["directory"], out)
        entry["exit"] = None if proc is None else proc.returncode
        entry["captured"] = []
        if proc is not None:
            with open(os.path.join(job["directory"], "child.out")) as f:
                entry["captured"] = [json.loads(line) for line in f if line.startswith("{")]
        entry["logs"] = sorted(f for f in os.listdir(job["directory"]) if f.endswith(".log")) if proc else []
        manifest.append(entry)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"torch": torch.__version__, "device": device,
                   "device_name": torch.cuda.get_device_name() if device.startswith("cuda") else device,
                   "children": manifest}, f, indent=1)
    ok = sum(c["ok"] for e in manifest for c in e["captured"])
    print("captured %d compiles in %d children (%d not run before the deadline)" % (
        ok, sum(e["exit"] is not None for e in manifest), sum(e["exit"] is None for e in manifest)))
    return 0


# Records `check` never reads, by kind (an artifact by its name); inductor_output_code keeps its header line.
TRIMMED = {"chromium_event", "dynamo_cpp_guards_str", "dynamo_guards", "fx_graph_cache_miss", "fx_graph_cache_hit",
           "fx_graph_runnable", "inductor_output_code"}


def trim_log(path):
    """Rewrites one TORCH_TRACE log without the TRIMMED records (inductor_output_code's header stays, payload-less)."""
    kept, skipping = [], False
    with open(path, errors="surrogateescape") as f:
        for line in f:
            if line.startswith("\t"):
                if not skipping:
                    kept.append(line)
                continue
            skipping = False
            brace = line.find("] {")
            if brace >= 0:
                try:
                    record = json.loads(line[brace + 2:])
                except ValueError:
                    record = {}
                kind = next(iter(record), "")
                name = record[kind].get("name", "") if kind == "artifact" and isinstance(record[kind], dict) else kind
                if name in TRIMMED:
                    skipping = True
                    if name != "inductor_output_code":
                        continue
                    if "has_payload" in record:  # the hash of the payload it now has: none
                        line = line.replace(record["has_payload"], hashlib.md5(b"").hexdigest())
            kept.append(line)
    with open(path, "w", errors="surrogateescape") as f:
        f.writelines(kept)


def trim(out):
    before = after = 0
    for directory, _, files in os.walk(out):
        for name in files:
            if name.endswith(".log"):
                path = os.path.join(directory, name)
                before += os.path.getsize(path)
                trim_log(path)
                after += os.path.getsize(path)
    print("trimmed logs: %.1f MB -> %.1f MB" % (before / 1e6, after / 1e6))
    return 0


def check(out, cli):
    with open(os.path.join(out, "manifest.json")) as f:
        manifest = json.load(f)
    counts, differing = {}, 0
    for entry in manifest["children"]:
        # A child may write a second log with no compile in it (a compile worker's): every log's compiles, in turn.
        checked, log = [], None
        for name in entry["logs"]:
            log = os.path.join(out, entry["directory"], name)
            proc = subprocess.run([cli, "check", log, "--json"], capture_output=True, text=True, timeout=600)
            report = json.loads(proc.stdout) if proc.stdout.strip() else {"compiles": []}
            checked += [c for c in report["compiles"] if c["status"] != "skipped"]
        if log is None:
            continue
        cases = [c["case"] for c in entry["captured"] if c["ok"]]
        count = counts.setdefault(entry["config"], {"identical": 0, "other": 0, "cases": 0})
        count["cases"] += len(cases)
        if len(checked) != len(cases):
            print("%s: %d compiles checked for %d cases %s" % (log, len(checked), len(cases), cases))
        for index, c in enumerate(checked):
            case = cases[index] if index < len(cases) and len(checked) == len(cases) else "?"
            if c["status"] == "identical" and not c.get("not_followed"):
                count["identical"] += 1
                continue
            count["other"] += 1
            differing += 1
            print("%s %s compile %s: %s\n%s" % (entry["config"], case, c.get("compile_id"), c["status"],
                                                json.dumps(c, indent=1)[:3000]))
    print("torch %s on %s (%s)" % (manifest["torch"], manifest["device"], manifest["device_name"]))
    for config, count in counts.items():
        print("%-24s %3d cases, %3d compiles identical, %d not" % (config, count["cases"], count["identical"],
                                                                   count["other"]))
    return 1 if differing else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "capture":
        sys.exit(capture(os.path.abspath(sys.argv[2])))
    if len(sys.argv) == 3 and sys.argv[1] == "trim":
        sys.exit(trim(os.path.abspath(sys.argv[2])))
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    sys.exit(__doc__)
