// Splitting a backward graph into input-gradient (dI) and weight-gradient (dW) graphs for pipeline schedules
// that run dW later (zero-bubble style), as autoparallel's split_di_dw_graph does.
#pragma once

#include "graph/Graph.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <string>
#include <vector>

namespace jointscope::partition {

struct DiDwSplit {
    Graph di;                         // the input gradients first, then the values dW reads
    Graph dw;                         // inputs: those values; outputs: the weight gradients
    std::vector<std::string> carried; // the values dI hands to dW (tensors, then symbolic values)
};

// The last `numWeightGrads` outputs of `backward` are its weight gradients. The backward is partitioned as a
// joint graph whose "forward" computes the input gradients: its tangents become ordinary inputs (renamed
// not_tngnt_*, as autoparallel does) and torch's default_partition decides what dI passes on.
Expected<DiDwSplit> splitDiDw(const Graph& backward, int64_t numWeightGrads);

} // namespace jointscope::partition
