// What an op's run time depends on, as one canonical string: the key of measured profiles.
#pragma once

#include "graph/Graph.h"

#include <string>

namespace jointscope::cost {

// The op overload, then per argument (and keyword argument, sorted by name): a tensor as
// dtype[sizes]{strides} (strides only when the graph records them), a list of tensors as [..], anything else
// as its Python literal (appendPythonFloat, appendPythonString). Symbolic sizes are written as their
// expression. Two nodes with equal signatures run the same kernel on equally shaped data, so 48 identical
// layers share one signature per op.
//   "aten.addmm.default(f32[256]{1}, f32[64,128]{128,1}, f32[128,256]{1,128})"
//   "aten.convolution.default(f32[2,3,8,8]{192,64,8,1}, ..., [1, 1], [1, 1], [1, 1], False, [0, 0], 1)"
// Defined for call_function nodes; other nodes give their op name and target.
std::string opSignature(const Graph& graph, NodeId id);

} // namespace jointscope::cost
