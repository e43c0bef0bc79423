#include "models/Navigation.h"

#include <algorithm>

namespace jointscope::views {

std::vector<NodeId> producersOf(const Graph& graph, NodeId id) {
    std::vector<NodeId> result;
    if (id >= graph.size())
        return result;
    graph.node(id).forEachInput([&](NodeId input) {
        if (input < graph.size() && input != id &&
            std::find(result.begin(), result.end(), input) == result.end())
            result.push_back(input);
    });
    return result;
}

std::vector<NodeId> consumersOf(const Graph& graph, NodeId id) {
    std::vector<NodeId> result;
    if (id >= graph.size())
        return result;
    for (NodeId user : graph.node(id).users)
        if (user < graph.size() && user != id &&
            std::find(result.begin(), result.end(), user) == result.end())
            result.push_back(user);
    std::sort(result.begin(), result.end());
    return result;
}

NodeId EdgeWalker::step(const Graph& graph, NodeId current, WalkStep step) {
    if (current >= graph.size())
        return kNoNode;
    if (current != at_)
        pivot_ = kNoNode; // the selection moved by other means: forget the walked edge
    NodeId target = kNoNode;
    switch (step) {
    case WalkStep::Producer:
    case WalkStep::Consumer: {
        // Walking to a producer makes `current` the pivot as a consumer, and the other way round.
        const bool toProducer = step == WalkStep::Producer;
        const std::vector<NodeId> next =
            toProducer ? producersOf(graph, current) : consumersOf(graph, current);
        if (!next.empty()) {
            target = next.front();
            pivot_ = current;
            pivotIsProducer_ = !toProducer;
        }
        break;
    }
    case WalkStep::Previous:
    case WalkStep::Next: {
        if (pivot_ == kNoNode) {
            if (const auto producers = producersOf(graph, current); !producers.empty()) {
                pivot_ = producers.front();
                pivotIsProducer_ = true;
            } else if (const auto consumers = consumersOf(graph, current); !consumers.empty()) {
                pivot_ = consumers.front();
                pivotIsProducer_ = false;
            }
        }
        if (pivot_ == kNoNode)
            break;
        const auto siblings = pivotIsProducer_ ? consumersOf(graph, pivot_) : producersOf(graph, pivot_);
        const auto it = std::find(siblings.begin(), siblings.end(), current);
        if (it == siblings.end() || siblings.size() < 2)
            break;
        const long n = long(siblings.size());
        const long at = long(it - siblings.begin()) + (step == WalkStep::Next ? 1 : -1);
        target = siblings[size_t((at % n + n) % n)];
        break;
    }
    }
    if (target != kNoNode)
        at_ = target;
    return target;
}

std::string metaSearchText(const Node& node) {
    const NodeMeta& m = node.meta;
    std::string text;
    for (const std::string& line : m.stackTrace)
        text += line + '\n';
    for (const ModuleFrame& frame : m.nnModuleStack)
        text += frame.key + ' ' + frame.path + ' ' + frame.type + '\n';
    for (const std::string* s : {&m.recompute, &m.partitionerTag, &m.descriptor})
        if (!s->empty())
            text += *s + '\n';
    for (const auto& [key, value] : m.extra)
        text += key + ": " + value + '\n';
    return text;
}

} // namespace jointscope::views
