"""Exports the torch 2 model zoo (jointscope_torch.models.torch2_zoo_builders) with torch's own decisions.

    python -m jointscope_torch.zoo --out DIR [--only NAME ...] [--list]

Writes DIR/NAME.json per case (jointscope JSON with the decisions torch_min_cut and torch_default_partition,
taken by torch's partitioners called the way torch.compile calls them, under the case's memory budget and
solver) and DIR/index.json ({"torch_version", "cases": {NAME: {"path", "ok", "error", "options", "seconds"}}}).
Prints one line per case. A case that fails (capture error, or a torch partitioner that failed on the graph) is
reported and the others still run; the exit status is 1 when any case failed.
"""

import argparse
import json
import os
import sys
import time
import traceback

import torch

from ._capture import export_joint
from .models import torch2_zoo_builders

#: case options that are export_joint options
EXPORT_KEYS = ("via", "memory_budget", "solver", "dynamic", "graph_breaks", "functorch_config")


def export_options(options):
    """The export_joint keyword arguments of a zoo case's options."""
    return {k: options[k] for k in EXPORT_KEYS if k in options}


def export_case(name, builder, out_dir):
    """Builds and exports one case; returns its index entry (never raises)."""
    entry = {"path": os.path.join(out_dir, name + ".json"), "ok": False, "error": None}
    start = time.perf_counter()
    try:
        model, args, options = builder()
        entry["options"] = {k: v for k, v in options.items() if k in EXPORT_KEYS or k == "about"}
        if "dynamic" in options:  # JSON object keys are strings
            entry["options"]["dynamic"] = {str(k): v for k, v in options["dynamic"].items()}
        attributes = {"zoo_case": name, "about": options.get("about", "")}
        capture = export_joint(model, args, entry["path"], name=name, attributes=attributes,
                               **export_options(options))
        entry["paths"] = capture.paths
        entry["graphs"] = len(capture.graphs)
        entry["nodes"] = len(list(capture.joint_module.graph.nodes))
        entry["decisions"] = [d["name"] for d in capture.decisions]
        errors = [e for c in capture.graphs for e in c.errors]
        if errors:
            entry["error"] = "; ".join(errors)
        else:
            entry["ok"] = True
        decisions = {d["name"]: d for d in capture.decisions}
        entry["summary"] = summary_text(decisions, entry)
    except Exception as e:  # reported, not fatal to the other cases
        entry["error"] = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")
        entry["traceback"] = traceback.format_exc()
    entry["seconds"] = round(time.perf_counter() - start, 3)
    return entry


def summary_text(decisions, entry):
    parts = ["%d nodes" % entry["nodes"]]
    if entry.get("graphs", 1) > 1:
        parts.append("%d graphs" % entry["graphs"])
    mc = decisions.get("torch_min_cut")
    if mc:
        text = "min-cut saves %d" % len(mc["saved"])
        if mc.get("saved_sym"):
            text += " + %d sym" % len(mc["saved_sym"])
        if mc.get("rng_states"):
            text += " + %d rng states" % len(mc["rng_states"])
        if "memory_budget" in mc:
            text += " (budget %s, %s)" % (mc["memory_budget"], mc["solver"])
        parts.append(text)
    dp = decisions.get("torch_default_partition")
    if dp:
        parts.append("default saves %d" % len(dp["saved"]))
    return ", ".join(parts)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m jointscope_torch.zoo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="output folder (created)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="export only these cases")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--traceback", action="store_true", help="print the traceback of failed cases")
    opts = parser.parse_args(argv)
    builders = torch2_zoo_builders()
    if opts.list:
        for name in builders:
            print(name)
        return 0
    if not opts.out:
        parser.error("--out DIR is required")
    names = opts.only or list(builders)
    unknown = [n for n in names if n not in builders]
    if unknown:
        parser.error("unknown cases: %s (--list shows them)" % ", ".join(unknown))
    os.makedirs(opts.out, exist_ok=True)
    print("torch %s: exporting %d cases to %s" % (torch.__version__, len(names), opts.out), flush=True)
    index = {"torch_version": torch.__version__, "cases": {}}
    failed = 0
    for name in names:
        entry = export_case(name, builders[name], opts.out)
        index["cases"][name] = entry
        if entry["ok"]:
            print("ok    %-28s %6.2f s  %s" % (name, entry["seconds"], entry["summary"]), flush=True)
        else:
            failed += 1
            print("FAIL  %-28s %6.2f s  %s" % (name, entry["seconds"], entry["error"]), flush=True)
            if opts.traceback and entry.get("traceback"):
                print(entry["traceback"], file=sys.stderr)
    index_path = os.path.join(opts.out, "index.json")
    existing = {}
    if opts.only and os.path.isfile(index_path):  # --only updates the index of an earlier full run
        try:
            with open(index_path, encoding="utf-8") as f:
                existing = json.load(f).get("cases", {})
        except (OSError, ValueError):
            existing = {}
    existing.update(index["cases"])
    index["cases"] = existing
    with open(index_path, "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1, sort_keys=False)
        f.write("\n")
    print("%d of %d cases exported%s" % (len(names) - failed, len(names), (", %d failed" % failed) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
