// Per-rank TORCH_TRACE logs of one distributed run, and where the ranks diverge (as tlparse's multi-rank
// report: graph counts, compiles whose graph text differs, collective sequences that differ).
#pragma once

#include "io/GraphFile.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jointscope {

// N from a log file name "..._rank_N_...", "rankN.log"; nullopt when the name carries no rank.
std::optional<int32_t> rankFromFileName(std::string_view fileName);

// The ranks that agree on one thing, with what they agree on (a graph hash, a collective sequence).
struct RankGroup {
    std::vector<int32_t> ranks;
    std::string digest;           // md5 of the graph text; "" for a group of ranks that lack the graph
    std::vector<std::string> ops; // collective groups: the sequence those ranks scheduled
    std::vector<size_t> entries;  // graph groups: the GraphEntry index of each rank in `ranks`
};

struct RankDivergence {
    struct RankInfo {
        int32_t rank = -1;
        std::string file;
        size_t graphs = 0;
        size_t compiles = 0; // distinct compile ids
    };
    // A compile's graph of one kind (the n-th of that kind and id) that is not the same text on every rank.
    struct GraphSplit {
        std::string compileId;
        std::string kind;
        std::vector<RankGroup> groups; // the largest group first; a group with digest "" lacks the graph
    };
    struct CollectiveSplit {
        std::string compileId;
        std::vector<RankGroup> groups; // ops "" group: ranks without a schedule for this compile
    };

    std::vector<RankInfo> ranks; // by rank
    bool graphCountsDiffer = false;
    size_t comparedGraphs = 0; // (compile id, kind) pairs looked at
    std::vector<GraphSplit> graphs;
    std::vector<CollectiveSplit> collectives;

    bool diverges() const { return graphCountsDiffer || !graphs.empty() || !collectives.empty(); }
    // Human summary lines: "rank 1: 12 graphs, rank 0: 10 graphs", "[1/0] dynamo_output_graph: ranks 0 | 1".
    std::vector<std::string> lines() const;
};

// Compares the ranks of a file opened from a folder of per-rank logs (GraphFile::ranks()); a file with one
// rank diverges nowhere.
RankDivergence summarizeRanks(const GraphFile& file);

// "0, 2-5, 7"
std::string rankListText(const std::vector<int32_t>& ranks);

} // namespace jointscope
