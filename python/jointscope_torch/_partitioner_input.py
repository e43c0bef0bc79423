"""log_partitioner_input(): TORCH_TRACE logs the graph torch's min-cut partitioner receives under inductor.

Under inductor, the joint graph torch logs (aot_joint_graph) is not the graph partitioned: inductor's joint-graph
passes (and a stable topological sort) run in between. jointscope-cli replays those passes; this switch removes
the need: inductor's partitioner is wrapped (config.custom_partitioner_fn) by one that logs its input as the
string artifact "jointscope_partitioner_input" -- print_readable text, as torch logs aot_joint_graph -- and then
calls min_cut_rematerialization_partition with exactly the arguments inductor would have passed. `check` and
`partition` prefer the artifact when a compile has one.
"""

import contextlib

import torch

ARTIFACT = "jointscope_partitioner_input"


def _print_readable(gm):
    # The options torch's own aot_joint_graph record uses (expanded_def prints the output descriptors that say
    # which outputs are forward outputs); older torch lacks some of them.
    for options in (dict(include_stride=True, include_device=True, expanded_def=True),
                    dict(include_stride=True, include_device=True), {}):
        try:
            return gm.print_readable(print_output=False, **options)
        except TypeError:
            continue
    return gm.print_readable(print_output=False)


try:  # torch >= 2.6; a class at module level, so that inductor's cache key can pickle it
    from torch._inductor.custom_graph_pass import CustomPartitionerFn as _PartitionerBase
except ImportError:
    _PartitionerBase = None

if _PartitionerBase is not None:

    class JointscopeLoggingPartitioner(_PartitionerBase):
        """min_cut_rematerialization_partition, after logging what it receives."""

        def __call__(self, gm, joint_inputs, **kwargs):
            from torch._functorch.partitioners import min_cut_rematerialization_partition
            from torch._logging import trace_structured

            trace_structured(
                "artifact",
                metadata_fn=lambda: {"name": ARTIFACT, "encoding": "string"},
                payload_fn=lambda: _print_readable(gm),
            )
            return min_cut_rematerialization_partition(gm, joint_inputs, **kwargs)

        def uuid(self):
            # None: inductor's FX graph cache is skipped, so every compile partitions (and logs) again.
            return None


def log_partitioner_input(enable=True):
    """Makes inductor log the exact joint graph its partitioner receives (TORCH_TRACE artifact
    "jointscope_partitioner_input"). Returns the previous inductor setting; also usable as a context manager
    through partitioner_input_logged(). Raises RuntimeError when a custom_partitioner_fn is already set (it
    would be replaced) or the torch has no custom_partitioner_fn (torch before 2.6)."""
    import torch._inductor.config as inductor_config

    if _PartitionerBase is None or not hasattr(inductor_config, "custom_partitioner_fn"):
        raise RuntimeError(f"torch {torch.__version__} has no inductor custom_partitioner_fn: "
                           "jointscope-cli replays the joint-graph passes instead")
    previous = inductor_config.custom_partitioner_fn
    if not enable:
        if previous is not None and type(previous).__name__ == "JointscopeLoggingPartitioner":
            inductor_config.custom_partitioner_fn = None
        return previous
    if previous is not None and type(previous).__name__ != "JointscopeLoggingPartitioner":
        raise RuntimeError(f"inductor's custom_partitioner_fn is already set ({previous!r}); "
                           "jointscope would replace it")
    inductor_config.custom_partitioner_fn = JointscopeLoggingPartitioner()
    return previous


@contextlib.contextmanager
def partitioner_input_logged():
    """with partitioner_input_logged(): torch.compile(...) -- log_partitioner_input() for the block."""
    import torch._inductor.config as inductor_config

    previous = inductor_config.custom_partitioner_fn
    log_partitioner_input(True)
    try:
        yield
    finally:
        inductor_config.custom_partitioner_fn = previous


def _enable_from_environment():
    """JOINTSCOPE_LOG_PARTITIONER_INPUT=1 turns the switch on when jointscope_torch is imported."""
    import os

    if os.environ.get("JOINTSCOPE_LOG_PARTITIONER_INPUT", "") not in ("", "0"):
        log_partitioner_input(True)
