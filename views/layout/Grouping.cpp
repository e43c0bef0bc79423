#include "layout/Grouping.h"

#include "graph/GraphStats.h"
#include "graph/Layers.h"
#include "layout/StandInGraph.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>

namespace jointscope::layout {

namespace {

// "File: /a/b/model.py:12 in forward, code: x = y" -> ("model.py", "model.py:12  x = y").
bool parseTraceLine(const std::string& line, std::string& file, std::string& label) {
    std::string_view text(line);
    if (text.substr(0, 5) != "File:")
        return false;
    text.remove_prefix(5);
    while (!text.empty() && text.front() == ' ')
        text.remove_prefix(1);
    const size_t in = text.find(" in ");
    std::string_view location = text.substr(0, in);
    const size_t colon = location.rfind(':');
    if (colon == std::string_view::npos)
        return false;
    std::string_view path = location.substr(0, colon);
    const size_t slash = path.find_last_of('/');
    file = std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
    label = file + std::string(location.substr(colon));
    if (const size_t code = text.find("code: "); code != std::string_view::npos) {
        std::string_view snippet = text.substr(code + 6);
        if (snippet.size() > 48)
            snippet = snippet.substr(0, 48);
        label += "  " + std::string(snippet);
    }
    return true;
}

class TreeBuilder {
public:
    explicit TreeBuilder(GroupTree& tree) : tree_(tree) {}

    int32_t child(int32_t parent, GroupKind kind, const std::string& key, const std::string& label) {
        auto [it, inserted] = index_.try_emplace({parent, key}, int32_t(tree_.groups.size()));
        if (inserted) {
            Group g;
            g.kind = kind;
            g.label = label;
            g.parent = parent;
            g.depth = tree_.groups[size_t(parent)].depth + 1;
            tree_.groups.push_back(std::move(g));
            tree_.groups[size_t(parent)].children.push_back(it->second);
        }
        return it->second;
    }

private:
    GroupTree& tree_;
    std::map<std::pair<int32_t, std::string>, int32_t> index_;
};

// The HOP call a node belongs to: the call itself, the body it reads, or a getitem of its result.
std::optional<NodeId> hopCallOf(const Graph& graph, NodeId id) {
    const Node& node = graph.node(id);
    if (node.target.kind == TargetKind::HigherOrder)
        return id;
    if (node.subgraph >= 0)
        for (NodeId user : node.users)
            if (graph.node(user).target.kind == TargetKind::HigherOrder)
                return user;
    if (node.target.isGetItem() && !node.args.empty() && node.args[0].kind() == ValueKind::NodeRef) {
        const NodeId producer = node.args[0].asNode();
        if (producer < graph.size() && graph.node(producer).target.kind == TargetKind::HigherOrder)
            return producer;
    }
    return std::nullopt;
}

// Frames of the node's module stack down to the repeated layer module (`blocks.3`): the layer group stands
// for them.
size_t layerFrameDepth(const Node& node, const std::string& modulePath) {
    const auto& stack = node.meta.nnModuleStack;
    for (size_t f = 0; f < stack.size(); ++f) {
        const std::string& path = stack[f].path.empty() ? stack[f].key : stack[f].path;
        if (path.size() > modulePath.size() && path.starts_with(modulePath) &&
            (path[modulePath.size()] == '.' || path[modulePath.size()] == '['))
            return f + 1;
    }
    return 0;
}

void splitLargeGroups(GroupTree& tree, const GroupingOptions& options, const Graph& graph) {
    const size_t chunk = std::max<size_t>(2, std::min(options.chunkSize, options.maxItems));
    for (size_t g = 0; g < tree.groups.size(); ++g) {
        if (tree.groups[g].items() <= options.maxItems)
            continue;
        // Items in graph order: nodes and child groups by their first node.
        struct Entry {
            NodeId first;
            int32_t group;
            NodeId node;
        };
        std::vector<Entry> entries;
        for (NodeId n : tree.groups[g].nodes)
            entries.push_back({n, -1, n});
        for (int32_t c : tree.groups[g].children)
            entries.push_back({tree.groups[size_t(c)].first, c, kNoNode});
        std::stable_sort(entries.begin(), entries.end(),
                         [](const Entry& a, const Entry& b) { return a.first < b.first; });
        tree.groups[g].nodes.clear();
        tree.groups[g].children.clear();
        for (size_t start = 0; start < entries.size(); start += chunk) {
            const size_t end = std::min(entries.size(), start + chunk);
            Group piece;
            piece.kind = GroupKind::Chunk;
            piece.parent = int32_t(g);
            piece.depth = tree.groups[g].depth + 1;
            const auto name = [&](const Entry& e) {
                return e.group >= 0 ? tree.groups[size_t(e.group)].label : graph.node(e.node).name;
            };
            piece.label = name(entries[start]) + " … " + name(entries[end - 1]);
            const int32_t id = int32_t(tree.groups.size());
            for (size_t i = start; i < end; ++i) {
                if (entries[i].group >= 0) {
                    piece.children.push_back(entries[i].group);
                    tree.groups[size_t(entries[i].group)].parent = id;
                } else {
                    piece.nodes.push_back(entries[i].node);
                    tree.groupOf[entries[i].node] = id;
                }
            }
            tree.groups.push_back(std::move(piece));
            tree.groups[g].children.push_back(id);
        }
        // The new chunks are checked by this same loop when their turn comes.
    }
}

// Fills depth, total and first bottom-up and orders children by their first node.
void finish(GroupTree& tree) {
    std::function<void(int32_t, uint32_t)> visit = [&](int32_t g, uint32_t depth) {
        Group& group = tree.groups[size_t(g)];
        group.depth = depth;
        group.total = group.nodes.size();
        group.first = group.nodes.empty() ? kNoNode : group.nodes.front();
        for (int32_t c : group.children) {
            visit(c, depth + 1);
            Group& me = tree.groups[size_t(g)];
            me.total += tree.groups[size_t(c)].total;
            me.first = std::min(me.first, tree.groups[size_t(c)].first);
        }
        Group& me = tree.groups[size_t(g)];
        std::stable_sort(me.children.begin(), me.children.end(), [&](int32_t a, int32_t b) {
            return tree.groups[size_t(a)].first < tree.groups[size_t(b)].first;
        });
    };
    visit(0, 0);
}

} // namespace

std::vector<int32_t> GroupTree::path(int32_t group) const {
    std::vector<int32_t> result;
    for (int32_t g = group; g >= 0; g = groups[size_t(g)].parent)
        result.push_back(g);
    std::reverse(result.begin(), result.end());
    return result;
}

GroupTree buildGroupTree(const Graph& graph, const GroupingOptions& options) {
    GroupTree tree;
    tree.maxItems = options.maxItems;
    tree.groups.push_back(
        Group{GroupKind::Root, graph.name.empty() ? "graph" : graph.name, -1, 0, {}, {}, 0, kNoNode});
    tree.groupOf.assign(graph.size(), 0);
    TreeBuilder builder(tree);
    const std::vector<bool> backward = backwardMask(graph);
    const bool twoPhases = std::find(backward.begin(), backward.end(), true) != backward.end();
    const LayerSplit layers = options.layers ? findLayers(graph) : LayerSplit{};
    std::string file, label;
    for (NodeId id = 0; id < graph.size(); ++id) {
        const Node& node = graph.node(id);
        int32_t g = 0;
        if (twoPhases)
            g = backward[id] ? builder.child(0, GroupKind::Phase, "backward", "backward")
                             : builder.child(0, GroupKind::Phase, "forward", "forward");
        if (node.op == NodeOp::Output) {
            tree.groupOf[id] = 0;
            tree.groups[0].nodes.push_back(id);
            continue;
        }
        size_t moduleDepth = 0; // module frames the layer group already stands for
        if (const int32_t seg = layers.found() ? layers.segmentOf[id] : -1; seg >= 0) {
            const LayerSegment& segment = layers.segments[size_t(seg)];
            const bool isLayer = segment.kind == SegmentKind::Layer;
            g = builder.child(g, isLayer ? GroupKind::Layer : GroupKind::Part, "seg:" + segment.label,
                              segment.label);
            tree.groups[size_t(g)].layer = segment.layer;
            if (isLayer && !layers.modulePath.empty())
                moduleDepth = layerFrameDepth(node, layers.modulePath);
        }
        if (node.op == NodeOp::Placeholder) {
            // Thousands of inputs would otherwise fill the first rank of the view.
            g = builder.child(g, GroupKind::Inputs, "inputs", "inputs");
        } else if (auto call = hopCallOf(graph, id)) {
            const Node& hop = graph.node(*call);
            g = builder.child(g, GroupKind::HopCall, "hop:" + hop.name,
                              hop.target.op.empty() ? hop.name : hop.target.op + " " + hop.name);
        } else if (node.meta.nnModuleStack.size() > moduleDepth) {
            for (size_t f = moduleDepth; f < node.meta.nnModuleStack.size(); ++f) {
                const ModuleFrame& frame = node.meta.nnModuleStack[f];
                const std::string shown = frame.path.empty() ? frame.key : frame.path;
                g = builder.child(g, GroupKind::Module, "mod:" + frame.key + "|" + frame.path,
                                  frame.type.empty() ? shown : shown + " (" + frame.type + ")");
            }
        } else if (!node.meta.stackTrace.empty() &&
                   parseTraceLine(node.meta.stackTrace.back(), file, label)) {
            g = builder.child(g, GroupKind::SourceFile, "file:" + file, file);
            g = builder.child(g, GroupKind::SourceLine, "line:" + label, label);
        }
        tree.groupOf[id] = g;
        tree.groups[size_t(g)].nodes.push_back(id);
    }
    finish(tree);
    splitLargeGroups(tree, options, graph);
    finish(tree);
    return tree;
}

size_t visibleItems(const GroupTree& tree, const std::vector<char>& expanded) {
    size_t count = 0;
    std::vector<int32_t> stack{0};
    while (!stack.empty()) {
        const Group& g = tree.groups[size_t(stack.back())];
        stack.pop_back();
        count += g.nodes.size();
        for (int32_t c : g.children) {
            if (expanded[size_t(c)])
                stack.push_back(c);
            else
                ++count;
        }
    }
    return count;
}

std::vector<char> initialExpansion(const GroupTree& tree, size_t budget) {
    // Level by level, a whole level or nothing: a first view where some siblings are open and others not
    // looks arbitrary.
    std::vector<char> expanded(tree.groups.size(), 0);
    expanded[0] = 1;
    size_t visible = tree.groups[0].items();
    std::vector<int32_t> level(tree.groups[0].children.begin(), tree.groups[0].children.end());
    while (!level.empty()) {
        size_t grown = visible;
        std::vector<int32_t> next;
        for (int32_t g : level) {
            if (tree.groups[size_t(g)].kind == GroupKind::Inputs)
                continue; // placeholders say little at first sight; they stay one box
            grown += tree.groups[size_t(g)].items() - 1;
            next.insert(next.end(), tree.groups[size_t(g)].children.begin(),
                        tree.groups[size_t(g)].children.end());
        }
        if (grown > budget)
            break;
        for (int32_t g : level)
            expanded[size_t(g)] = tree.groups[size_t(g)].kind != GroupKind::Inputs;
        visible = grown;
        level = std::move(next);
    }
    return expanded;
}

void collapseGroup(const GroupTree& tree, std::vector<char>& expanded, int32_t group) {
    if (group <= 0)
        return;
    std::vector<int32_t> stack{group};
    while (!stack.empty()) {
        const int32_t g = stack.back();
        stack.pop_back();
        expanded[size_t(g)] = 0;
        stack.insert(stack.end(), tree.groups[size_t(g)].children.begin(),
                     tree.groups[size_t(g)].children.end());
    }
}

void expandGroup(const GroupTree& tree, std::vector<char>& expanded, int32_t group, size_t budget) {
    const std::vector<int32_t> keep = tree.path(group);
    for (int32_t g : keep)
        expanded[size_t(g)] = 1;
    while (visibleItems(tree, expanded) > budget) {
        int32_t victim = -1;
        for (size_t g = 1; g < tree.groups.size(); ++g)
            if (expanded[g] && std::find(keep.begin(), keep.end(), int32_t(g)) == keep.end() &&
                (victim < 0 || tree.groups[g].depth > tree.groups[size_t(victim)].depth))
                victim = int32_t(g);
        if (victim < 0)
            break;
        collapseGroup(tree, expanded, victim);
    }
}

CollapsedView collapseView(const Graph& graph, std::shared_ptr<const GroupTree> treePtr,
                           std::vector<char> expanded) {
    CollapsedView view;
    const GroupTree& tree = *treePtr;
    view.tree = std::move(treePtr);
    expanded.resize(tree.groups.size(), 0);
    expanded[0] = 1;
    view.expanded = std::move(expanded);
    view.itemOfNode.assign(graph.size(), 0);

    // Visible items in tree order, then sorted by first node (a topological-ish order for the layering).
    std::vector<ViewItem> items;
    std::vector<int32_t> stack{0};
    while (!stack.empty()) {
        const int32_t g = stack.back();
        stack.pop_back();
        const Group& group = tree.groups[size_t(g)];
        if (g != 0)
            view.frames.push_back(g);
        for (NodeId n : group.nodes)
            items.push_back({-1, n});
        for (int32_t c : group.children) {
            if (view.expanded[size_t(c)])
                stack.push_back(c);
            else
                items.push_back({c, kNoNode});
        }
    }
    const auto firstOf = [&](const ViewItem& item) {
        return item.group >= 0 ? tree.groups[size_t(item.group)].first : item.node;
    };
    std::stable_sort(items.begin(), items.end(),
                     [&](const ViewItem& a, const ViewItem& b) { return firstOf(a) < firstOf(b); });
    view.items = std::move(items);

    // Nodes inside a collapsed group stand behind it.
    for (uint32_t i = 0; i < view.items.size(); ++i) {
        const ViewItem& item = view.items[i];
        if (item.group < 0) {
            view.itemOfNode[item.node] = i;
            continue;
        }
        std::vector<int32_t> groups{item.group};
        while (!groups.empty()) {
            const Group& g = tree.groups[size_t(groups.back())];
            groups.pop_back();
            for (NodeId n : g.nodes)
                view.itemOfNode[n] = i;
            groups.insert(groups.end(), g.children.begin(), g.children.end());
        }
    }

    std::unordered_map<uint64_t, uint32_t> index;
    for (auto [from, to] : graphEdges(graph)) {
        const uint32_t a = view.itemOfNode[from], b = view.itemOfNode[to];
        if (a == b)
            continue;
        const uint64_t key = (uint64_t(a) << 32) | b;
        auto [it, inserted] = index.try_emplace(key, uint32_t(view.edges.size()));
        if (inserted)
            view.edges.push_back({a, b, 0, from, 0});
        ViewEdge& edge = view.edges[it->second];
        ++edge.count;
        if (edge.count > 1)
            edge.producer = kNoNode;
        if (const TensorMeta* t = graph.node(from).tensor())
            edge.bytes += t->bytes().value_or(0);
    }
    return view;
}

Graph viewLayoutGraph(const CollapsedView& view) {
    std::vector<std::vector<NodeId>> inputs(view.items.size());
    for (const ViewEdge& e : view.edges)
        inputs[e.to].push_back(e.from);
    return standInGraph(inputs, "v");
}

std::vector<LayoutCluster> viewClusters(const CollapsedView& view) {
    const GroupTree& tree = *view.tree;
    std::vector<int32_t> clusterOf(tree.groups.size(), -1);
    for (size_t i = 0; i < view.frames.size(); ++i)
        clusterOf[size_t(view.frames[i])] = int32_t(i);
    std::vector<LayoutCluster> clusters(view.frames.size());
    for (size_t i = 0; i < view.frames.size(); ++i) {
        const Group& group = tree.groups[size_t(view.frames[i])];
        clusters[i].parent = group.parent > 0 ? clusterOf[size_t(group.parent)] : -1;
        clusters[i].title = group.label;
        // A phase is a column of the ladder. Any other open group is laid out apart and placed whole, closed
        // groups inside it included: on the ladder's rows its members would spread over the rows of the
        // groups beside it (a weight's transpose sinks to its backward reader's row), and its frame over
        // them.
        clusters[i].block = group.kind != GroupKind::Phase;
    }
    for (uint32_t i = 0; i < view.items.size(); ++i) {
        const ViewItem& item = view.items[i];
        const int32_t owner =
            item.group >= 0 ? tree.groups[size_t(item.group)].parent : tree.groupOf[item.node];
        if (owner > 0 && clusterOf[size_t(owner)] >= 0)
            clusters[size_t(clusterOf[size_t(owner)])].nodes.push_back(i);
    }
    return clusters;
}

NodeSize groupBoxSize(const Group& group) {
    const double chars = double(std::min<size_t>(group.label.size(), 44));
    // Three lines: the label, its kind and size, and the facts of the overlays (canvas/GroupFacts).
    return {std::clamp(28.0 + 6.8 * chars, 290.0, 340.0), 64.0};
}

} // namespace jointscope::layout
