#include "cost/OpTensors.h"

#include "support/Saturating.h"

#include <algorithm>

namespace jointscope::cost {

const TensorMeta* OpTensors::input(NodeId id) const {
    for (const auto& [ref, tensor] : inputs)
        if (ref == id)
            return &tensor;
    return nullptr;
}

void OpTensors::setInput(NodeId id, TensorMeta tensor) {
    for (auto& [ref, existing] : inputs)
        if (ref == id) {
            existing = std::move(tensor);
            return;
        }
    inputs.emplace_back(id, std::move(tensor));
}

namespace {

// Element `index` of a tuple-producing node, read off its getitem users (needs Graph::computeUsers).
void fillFromGetItems(const Graph& graph, const Node& node, NodeId id, std::vector<TensorMeta>& outputs) {
    for (NodeId user : node.users) {
        const Node& u = graph.node(user);
        if (!u.target.isGetItem() || u.args.size() < 2 || u.args[0].kind() != ValueKind::NodeRef ||
            u.args[0].asNode() != id || u.args[1].kind() != ValueKind::Int || u.args[1].asInt() < 0)
            continue;
        const TensorMeta* tensor = u.tensor();
        if (tensor == nullptr)
            continue;
        const size_t index = static_cast<size_t>(u.args[1].asInt());
        if (outputs.size() <= index)
            outputs.resize(index + 1);
        if (!outputs[index].known() && outputs[index].sizes.empty())
            outputs[index] = *tensor;
    }
}

} // namespace

OpTensors gatherTensors(const Graph& graph, NodeId id) {
    const Node& node = graph.node(id);
    OpTensors tensors;
    node.forEachInput([&](NodeId ref) {
        if (ref >= graph.size() || tensors.input(ref) != nullptr)
            return;
        if (const TensorMeta* tensor = graph.node(ref).tensor())
            tensors.inputs.emplace_back(ref, *tensor);
    });
    switch (node.outputKind) {
    case OutputKind::Tensor:
        tensors.outputs = node.outputs;
        break;
    case OutputKind::Tuple:
        tensors.outputs = node.outputs;
        fillFromGetItems(graph, node, id, tensors.outputs);
        break;
    case OutputKind::Unknown:
        fillFromGetItems(graph, node, id, tensors.outputs);
        break;
    default: // SymInt, SymFloat, SymBool, None: no tensor results
        break;
    }
    return tensors;
}

const Value* argumentOf(const Node& node, size_t index, std::string_view name) {
    if (index < node.args.size())
        return &node.args[index];
    for (const auto& [key, value] : node.kwargs)
        if (key == name)
            return &value;
    return nullptr;
}

uint64_t concreteSize(const SymInt& size) {
    if (!size.isSymbolic())
        return static_cast<uint64_t>(std::max<int64_t>(size.value, 0));
    return static_cast<uint64_t>(size.value > 0 ? size.value : kSymbolicSizeFallback);
}

std::optional<std::vector<uint64_t>> concreteShape(const TensorMeta& tensor) {
    if (!tensor.known() && tensor.sizes.empty())
        return std::nullopt;
    std::vector<uint64_t> shape;
    shape.reserve(tensor.sizes.size());
    for (const SymInt& size : tensor.sizes)
        shape.push_back(concreteSize(size));
    return shape;
}

uint64_t numel(const TensorMeta& tensor) {
    if (!tensor.known() && tensor.sizes.empty())
        return 0;
    uint64_t n = 1;
    for (const SymInt& size : tensor.sizes)
        n = saturatingMul(n, concreteSize(size));
    return n;
}

uint64_t storedElements(const TensorMeta& tensor) {
    if (tensor.strides.size() != tensor.sizes.size())
        return numel(tensor);
    uint64_t n = 1;
    for (size_t i = 0; i < tensor.sizes.size(); ++i) {
        const uint64_t size = concreteSize(tensor.sizes[i]);
        if (size == 0)
            return 0;
        if (tensor.strides[i].isSymbolic() || tensor.strides[i].value != 0)
            n = saturatingMul(n, size);
    }
    return n;
}

} // namespace jointscope::cost
