// Writer for FX readable text in the modern style (quoted annotations with strides and devices).
#pragma once

#include "graph/Graph.h"

#include <string>

namespace jointscope {

struct FxWriteOptions {
    bool annotations = true;  // "f32[8, 16][16, 1]cuda:0" annotations where known
    bool stackTraces = true;  // "# File:" comments
    bool descriptors = true;  // "# PlainAOTInput(idx=0)" comments
};

// readFxText(writeFxText(g)) reproduces g (names, ops, targets, args, metadata that FX text can carry).
std::string writeFxText(const Graph& graph, const FxWriteOptions& options = {});

} // namespace jointscope
