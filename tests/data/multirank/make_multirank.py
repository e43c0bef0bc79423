# Records the per-rank TORCH_TRACE logs of tests/data/multirank (torch 2.15, CPU, gloo):
#   TORCH_TRACE=/tmp/mr torchrun --nproc_per_node 2 tests/data/multirank/make_multirank.py
# then copy /tmp/mr/dedicated_log_torch_trace_rank_{0,1}_*.log to rank_{0,1}.log here.
# Rank 1 takes a rank-dependent branch in the second function, so its graph (and collective sequence) differ
# from rank 0's there; the first function is the same on both ranks.
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 16)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    block = Block()

    @torch.compile
    def same(x):
        y = block(x)
        return funcol.all_reduce(y, "sum", dist.group.WORLD)

    @torch.compile
    def diverging(x):
        y = block(x)
        if rank == 1:  # a rank-dependent branch: rank 1 compiles a different graph
            y = torch.tanh(y) * 2
            y = funcol.all_reduce(y, "sum", dist.group.WORLD)
        return funcol.all_reduce(y, "sum", dist.group.WORLD)

    x = torch.randn(4, 16, requires_grad=True)
    same(x).sum().backward()
    # Only rank 1 issues the extra all_reduce: give rank 0 the matching call outside the graph.
    # Forward only: the backward of the extra all_reduce would need a partner on rank 0 as well.
    with torch.no_grad():
        out = diverging(x)
    if rank == 0:
        dist.all_reduce(torch.zeros(4, 16))  # pairs with rank 1's extra all_reduce (gloo matches by order)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
