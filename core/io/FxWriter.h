// Writer for FX readable text in the modern style (quoted annotations with strides and devices).
#pragma once

#include "graph/Graph.h"

#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace jointscope {

struct FxWriteOptions {
    bool annotations = true;  // "f32[8, 16][16, 1]cuda:0" annotations where known
    bool stackTraces = true;  // "# File:" comments
    bool descriptors = true;  // "# PlainAOTInput(idx=0)" comments
};

// readFxText(writeFxText(g)) reproduces g (names, ops, targets, args, metadata that FX text can carry).
std::string writeFxText(const Graph& graph, const FxWriteOptions& options = {});

// Python's repr() of a float ("1.0", "1e-05", "inf") and of a str ('a', "it's", '\n'), appended to `out`: the
// literals FX text and op signatures (cost/OpSignature.h) are written with.
void appendPythonFloat(std::string& out, double v);
void appendPythonString(std::string& out, std::string_view s);

// How appendPythonValue writes what has no literal of its own: a node reference (`nodeRef` appends it to the
// same string), and a device, as FX prints it (device(type='cuda', index=0)) or short (device('cuda', 0)).
struct PythonValueStyle {
    std::function<void(NodeId)> nodeRef;
    bool shortDevice = false;
};

// A Value as Python source (None, True, 1.0, 'a', [x, y], (x,), {k: v}, torch.float32, ...) appended to
// `out`: FX text's arguments and op signatures are written with it.
void appendPythonValue(std::string& out, const Value& v, const PythonValueStyle& style);
// Values separated by ", ".
void appendPythonItems(std::string& out, std::span<const Value> items, const PythonValueStyle& style);

} // namespace jointscope
