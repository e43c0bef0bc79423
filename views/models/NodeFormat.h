// Text and classification of nodes shared by the models and the canvas.
#pragma once

#include "graph/Graph.h"
#include "support/Format.h"

#include <QColor>
#include <QString>

#include <cstdint>
#include <string_view>
#include <vector>

namespace jointscope {
struct GraphStats;
}

namespace jointscope::views {

// What a node is for colouring and the table's "pass" column.
enum class NodeRole : uint8_t {
    Primal,    // placeholder: a forward input (torch's _is_primal)
    Tangent,   // placeholder: an incoming gradient
    Parameter, // placeholder recognised as a module parameter or buffer
    Input,     // any other placeholder
    Forward,   // computation not depending on a tangent
    Backward,  // computation in the tangents' users-closure (GraphStats backwardMask)
    GetAttr,   // attribute read; a HOP body when Node::subgraph >= 0
    Output,
};

std::vector<NodeRole> classifyNodes(const Graph& graph);
QString roleName(
    NodeRole role); // "primal", "tangent", "parameter", "input", "forward", "backward", "get_attr", "output"

struct RoleColors {
    QColor fill;
    QColor border;
};
RoleColors roleColors(NodeRole role);

// Short op label for a box: "mm", "getitem", "placeholder", "invoke_subgraph".
QString opLabel(const Node& node);
QString formatShape(const TensorMeta& tensor);  // "[2, 16, 64]", "[s0, 4]"
QString formatStride(const TensorMeta& tensor); // "(64, 1)" or "" when unknown
QString formatOutputShapes(const Node& node);   // the tensor's shape, "(…, …)" for tuples, "Sym(s0)"
QString formatOutputDTypes(const Node& node);   // "f32", "(f32, f32)"
std::optional<uint64_t> outputBytes(const Node& node); // sum over known outputs; nullopt when none known

// UTF-8 text from the core as a QString.
inline QString toQString(std::string_view text) {
    return QString::fromUtf8(text.data(), qsizetype(text.size()));
}
// The core's quantities (support/Format.h) as QStrings: "12.0 KiB", "12.3 µs", "1.50 GFLOP".
// The status bar's line for a graph: "670 nodes · 238 forward · … · 7.6 MiB tensor data · 4 HOP bodies".
QString graphStatsText(const GraphStats& stats);

inline QString formatBytes(uint64_t bytes) {
    return toQString(jointscope::formatBytes(bytes));
}
inline QString formatMicros(double us) {
    return toQString(jointscope::formatMicros(us));
}
inline QString formatFlops(double flops) {
    return toQString(jointscope::formatFlops(flops));
}
// Python-like text of an argument with node references by name: "[view, 64]".
QString formatValue(const Value& value, const Graph& graph);

} // namespace jointscope::views
