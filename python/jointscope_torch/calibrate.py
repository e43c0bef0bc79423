"""Measured collectives: times torch.distributed collectives on each mesh dimension and fits latency + bandwidth.

Launched by torchrun on the machines the plan is for, one process per device:

    torchrun --nproc_per_node 8 -m jointscope_torch.calibrate --mesh 2x4 --out comm.json          # one node
    torchrun --nnodes 4 --nproc_per_node 8 --rdzv_backend c10d --rdzv_endpoint HOST:29500 \\
        -m jointscope_torch.calibrate --mesh 4x8 --out comm.json                                  # N nodes
    jointscope-cli profile-db import comm.json
    jointscope-cli shard GRAPH --mesh 4x8 --comm-model measured --json

The process group comes from torchrun's environment (RANK, WORLD_SIZE, MASTER_ADDR, ...): NCCL when CUDA is
available, else gloo. The mesh is torch's DeviceMesh layout (ranks 0..N-1 row-major over the shape, the last
dimension innermost); on torch 1.13, which has no DeviceMesh, the same per-dimension groups are made with
dist.new_group. On every mesh dimension, all of its groups at once (as in training), it times all-gather,
reduce-scatter, all-reduce and all-to-all over message sizes doubling from --min-bytes to --max-bytes.

A message size is what jointscope's cost model calls a collective's bytes (core/sharding/Cost.h): the gathered
result of an all-gather, the unreduced input of a reduce-scatter or all-reduce, one rank's buffer of an
all-to-all. Times: CUDA events on GPUs; on CPUs time.perf_counter after a barrier of the group. Each size runs
warm-up iterations, then --reps timed ones (small messages several calls per repetition); a sample is the median over ranks of
each rank's median. Where gloo has no reduce-scatter (torch 1.13): it is timed as what it moves, an all-to-all of the
input's chunks and the local sum of the received ones (the record says so).

Rank 0 fits each (dimension, collective) as time = latency + bytes / bandwidth by least squares on relative
error (sizes span five orders of magnitude), non-negative; where the curve bends (protocol switches, caches),
two segments split at the sample where the fit error drops most, kept when that at least halves it. It writes a
profile-DB JSON (format version 2, docs/formats.md "Profile DB"): the fits, the raw samples, world size, mesh,
backend, torch version and host names.
"""

import argparse
import datetime
import json
import math
import os
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist

COLLECTIVES = ("all_gather", "reduce_scatter", "all_reduce", "all_to_all")
# gloo on CPUs: large messages take seconds each and CI shares its cores; larger ones say nothing new about a
# CPU's network. --max-bytes overrides.
CPU_DEFAULT_MAX_BYTES = 64 << 20
GPU_DEFAULT_MAX_BYTES = 1 << 30
# A second segment must at least halve the fit's error to be kept.
PIECEWISE_GAIN = 0.5


def parse_mesh(text):
    try:
        shape = [int(s) for s in text.lower().split("x")]
    except ValueError:
        shape = []
    if not shape or any(s < 1 for s in shape):
        raise SystemExit("calibrate: --mesh takes sizes like 2x4 or 8, got %r" % text)
    return shape


def mesh_groups(shape, dim):
    """The rank lists of mesh dimension `dim`: ranks differing only in that coordinate (row-major layout)."""
    world = math.prod(shape)
    stride = math.prod(shape[dim + 1:])
    groups = []
    for rank in range(world):
        if (rank // stride) % shape[dim] == 0:
            groups.append([rank + i * stride for i in range(shape[dim])])
    return groups


def dimension_groups(shape, device_type):
    """This rank's process group on each mesh dimension: DeviceMesh on torch 2, dist.new_group on torch 1.13."""
    try:
        from torch.distributed.device_mesh import init_device_mesh
    except ImportError:
        init_device_mesh = None
    if init_device_mesh is not None:
        mesh = init_device_mesh(device_type, tuple(shape))
        return [mesh.get_group(d) for d in range(len(shape))], "DeviceMesh"
    rank = dist.get_rank()
    mine = []
    for d in range(len(shape)):
        for ranks in mesh_groups(shape, d):  # every rank creates every group, in the same order
            group = dist.new_group(ranks)
            if rank in ranks:
                mine.append(group)
    return mine, "dist.new_group"


def message_sizes(min_bytes, max_bytes):
    sizes = []
    size = min_bytes
    while size <= max_bytes:
        sizes.append(size)
        size *= 2
    return sizes


class Timer:
    def __init__(self, device):
        self.cuda = device.type == "cuda"

    def time_us(self, fn, group, inner):
        """Mean time of `inner` back-to-back calls after a barrier of the group."""
        if self.cuda:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            dist.barrier(group=group)
            torch.cuda.synchronize()
            start.record()
            for _ in range(inner):
                fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) * 1e3 / inner
        dist.barrier(group=group)
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        return (time.perf_counter() - t0) * 1e6 / inner


def inner_iterations(nbytes):
    """Calls per timed repetition: small messages run several back to back, so that one repetition outlasts the
    barrier's skew between ranks and the scheduler's hiccups. The same on every rank (it depends on the size
    only)."""
    return max(1, min(16, (1 << 20) // nbytes))


def collective_call(name, nbytes, group, n, device, backend):
    """A closure running collective `name` on a message of `nbytes` (the cost model's meaning), and whether it
    is emulated."""
    elements = max(n, (nbytes // 4) // n * n)  # float32, divisible into n chunks
    chunk = elements // n
    if name == "all_gather":
        src = torch.ones(chunk, device=device)
        if hasattr(dist, "all_gather_into_tensor") and backend == "nccl":
            dst = torch.empty(elements, device=device)
            return lambda: dist.all_gather_into_tensor(dst, src, group=group), None
        outs = [torch.empty(chunk, device=device) for _ in range(n)]
        return lambda: dist.all_gather(outs, src, group=group), None
    if name == "reduce_scatter":
        src = torch.ones(elements, device=device)
        dst = torch.empty(chunk, device=device)
        candidates = [lambda: dist.reduce_scatter(dst, list(src.chunk(n)), group=group)]
        if hasattr(dist, "reduce_scatter_tensor"):
            candidates.insert(0, lambda: dist.reduce_scatter_tensor(dst, src, group=group))
        for fn in candidates:
            try:  # an unsupported collective fails on every rank alike, before it communicates
                fn()
                return fn, None
            except RuntimeError as e:
                if "not support" not in str(e):
                    raise
        received = torch.empty(elements, device=device)

        def emulated():
            dist.all_to_all_single(received, src, group=group)
            torch.sum(received.view(n, chunk), dim=0, out=dst)

        return emulated, "all_to_all of the input's chunks + local sum (gloo has no reduce_scatter here)"
    if name == "all_reduce":
        buf = torch.ones(elements, device=device)
        return lambda: dist.all_reduce(buf, group=group), None
    if name == "all_to_all":
        src = torch.ones(elements, device=device)
        dst = torch.empty(elements, device=device)
        return lambda: dist.all_to_all_single(dst, src, group=group), None
    raise ValueError(name)


def measure(shape, groups, sizes, reps, warmup, device, backend):
    """{(dim, collective): [(bytes, this rank's median us), ...]} and the emulation notes."""
    timer = Timer(device)
    out, notes = {}, {}
    for d, group in enumerate(groups):
        n = shape[d]
        if n < 2:
            continue
        for name in COLLECTIVES:
            samples = []
            for nbytes in sizes:
                fn, note = collective_call(name, nbytes, group, n, device, backend)
                if note:
                    notes[name] = note
                for _ in range(warmup):
                    fn()
                times = [timer.time_us(fn, group, inner_iterations(nbytes)) for _ in range(reps)]
                samples.append((nbytes, statistics.median(times)))
            out[(d, name)] = samples
    return out, notes


def fit_line(points):
    """time = a + b * bytes minimising relative squared error, with a, b > 0. Returns (a, b, rms relative error)."""
    w = [1.0 / (t * t) for _, t in points]
    sw = sum(w)
    sx = sum(wi * x for wi, (x, _) in zip(w, points))
    sy = sum(wi * y for wi, (_, y) in zip(w, points))
    sxx = sum(wi * x * x for wi, (x, _) in zip(w, points))
    sxy = sum(wi * x * y for wi, (x, y) in zip(w, points))
    det = sw * sxx - sx * sx
    a = b = 0.0
    if len(points) >= 2 and det > 0:
        b = (sw * sxy - sx * sy) / det
        a = (sy - b * sx) / sw
    if a <= 0 or b <= 0:
        # Noise that says time falls with size, or a segment that is pure latency or pure bandwidth: keep one
        # coefficient at a floor (1 % of what the samples show) and fit the other with it fixed.
        x_max, t_max = max(points)
        floor_a = 0.01 * min(t for _, t in points)
        floor_b = 0.01 * t_max / x_max
        fit_b = max((sxy - floor_a * sx) / sxx, floor_b) if sxx > 0 else floor_b
        fit_a = max((sy - floor_b * sx) / sw, floor_a)
        a, b = min([(floor_a, fit_b), (fit_a, floor_b)], key=lambda ab: rel_error(points, ab[0], ab[1]))
    return a, b, rel_error(points, a, b)


def rel_error(points, a, b):
    return math.sqrt(sum(((a + b * x) / t - 1.0) ** 2 for x, t in points) / len(points))


def fit_segments(points):
    """One or two α-β segments: [{"max_bytes", "latency_us", "bytes_per_s"}], the last with max_bytes None."""
    points = sorted(points)
    a, b, err = fit_line(points)
    best = None
    for k in range(2, len(points) - 1):  # each segment keeps at least two samples
        left, right = points[:k], points[k:]
        la, lb, le = fit_line(left)
        ra, rb, re_ = fit_line(right)
        total = math.sqrt((le * le * len(left) + re_ * re_ * len(right)) / len(points))
        if best is None or total < best[0]:
            best = (total, left[-1][0], (la, lb), (ra, rb))
    segment = lambda ab, max_bytes: {"max_bytes": max_bytes, "latency_us": ab[0], "bytes_per_s": 1e6 / ab[1]}
    if best is not None and best[0] <= PIECEWISE_GAIN * err:
        return [segment(best[2], best[1]), segment(best[3], None)], best[0]
    return [segment((a, b), None)], err


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m jointscope_torch.calibrate", description=__doc__.split("\n")[0])
    parser.add_argument("--mesh", required=True, help="mesh shape, e.g. 2x4 (its product is the world size)")
    parser.add_argument("--out", required=True, help="profile-DB JSON rank 0 writes")
    parser.add_argument("--min-bytes", type=int, default=4096)
    parser.add_argument("--max-bytes", type=int, default=None,
                        help="default 1 GiB on GPUs, %d MiB on CPUs (gloo)" % (CPU_DEFAULT_MAX_BYTES >> 20))
    parser.add_argument("--reps", type=int, default=None, help="timed repetitions per size (default 20 GPU, 5 CPU)")
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args(argv)
    shape = parse_mesh(args.mesh)
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        raise SystemExit("calibrate: run me under torchrun, e.g. torchrun --nproc_per_node %d -m "
                         "jointscope_torch.calibrate --mesh %s --out %s" % (math.prod(shape), args.mesh, args.out))
    cuda = torch.cuda.is_available()
    backend = "nccl" if cuda else "gloo"
    if cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group(backend=backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    if math.prod(shape) != world:
        if rank == 0:
            print("calibrate: mesh %s has %d ranks but torchrun started %d" % (args.mesh, math.prod(shape), world),
                  file=sys.stderr)
        dist.destroy_process_group()
        return 2
    device = torch.device("cuda", torch.cuda.current_device()) if cuda else torch.device("cpu")
    max_bytes = args.max_bytes or (GPU_DEFAULT_MAX_BYTES if cuda else CPU_DEFAULT_MAX_BYTES)
    if rank == 0 and args.max_bytes is None and not cuda:
        print("calibrate: gloo on CPUs: sizes capped at %d MiB (--max-bytes to change)" % (max_bytes >> 20),
              file=sys.stderr)
    reps = args.reps or (20 if cuda else 5)
    sizes = message_sizes(args.min_bytes, max_bytes)
    groups, how = dimension_groups(shape, "cuda" if cuda else "cpu")
    measured, notes = measure(shape, groups, sizes, reps, args.warmup, device, backend)

    gathered = [None] * world
    mine = {"host": socket.gethostname(), "samples": {"%d/%s" % k: v for k, v in measured.items()}}
    dist.all_gather_object(gathered, mine)
    if rank == 0:
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        hosts = sorted({g["host"] for g in gathered})
        entries = []
        for (d, name) in sorted(measured, key=lambda k: (k[0], COLLECTIVES.index(k[1]))):
            key = "%d/%s" % (d, name)
            # The median over ranks of each rank's median: every rank of a group waits for the slowest, so their
            # times agree but for the barrier's skew and the scheduler, which the median leaves out.
            samples = [(nbytes, statistics.median(g["samples"][key][i][1] for g in gathered))
                       for i, (nbytes, _) in enumerate(measured[(d, name)])]
            segments, err = fit_segments(samples)
            entry = {"backend": backend, "torch": torch.__version__, "hosts": hosts, "world_size": world,
                     "mesh": shape, "dim": d, "group_size": shape[d], "collective": name, "segments": segments,
                     "rms_rel_error": err, "samples": [[x, t] for x, t in samples], "reps": reps,
                     "measured_at": now}
            if name in notes:
                entry["note"] = notes[name]
            entries.append(entry)
        doc = {"format": "jointscope-profile", "version": 2, "records": [], "collectives": entries}
        with open(args.out, "w") as f:
            f.write("{\n \"format\": \"jointscope-profile\",\n \"version\": 2,\n \"records\": [],\n"
                    " \"collectives\": [\n  ")
            f.write(",\n  ".join(json.dumps(e) for e in doc["collectives"]))
            f.write("\n ]\n}\n")
        print("calibrate: %s, mesh %s (%s), %d sizes %d..%d bytes, %d reps: wrote %s"
              % (backend, "x".join(map(str, shape)), how, len(sizes), sizes[0], sizes[-1], reps, args.out))
        for e in entries:
            segs = "; ".join("%s%.1f us + %.3g GB/s" % ("" if s["max_bytes"] is None else "<=%d B: " % s["max_bytes"],
                                                         s["latency_us"], s["bytes_per_s"] / 1e9)
                             for s in e["segments"])
            print("  d%d %-14s %s (rms error %.0f%%)" % (e["dim"], e["collective"], segs, 100 * e["rms_rel_error"]))
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
