#include "graph/Layers.h"

#include "graph/ColourRefinement.h"
#include "graph/GraphStats.h"
#include "support/EnumNames.h"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

namespace jointscope {

namespace {

constexpr int32_t kBefore = -1; // before the first layer: embedding (forward), head and loss (backward)
constexpr int32_t kAfter = -2;  // after the last layer: head and loss (forward), embedding (backward)

bool takesPart(const Node& node) {
    return node.op != NodeOp::Placeholder && node.op != NodeOp::Output;
}

// One phase's nodes in graph order (execution order) and, per position, its layer or kBefore / kAfter.
struct PhaseSeq {
    bool backward = false;
    std::vector<NodeId> nodes;
    std::vector<int32_t> layerAt;
    size_t layers = 0;
};

// "blocks.3", "transformer.h.3", "L['self'].layers[3]" -> ("blocks", 3) ...
bool layerFrame(std::string_view path, std::string& prefix, int& index) {
    if (!path.empty() && path.back() == ']')
        path.remove_suffix(1);
    size_t digits = path.size();
    while (digits > 0 && path[digits - 1] >= '0' && path[digits - 1] <= '9')
        --digits;
    if (digits == path.size() || digits < 2 || (path[digits - 1] != '.' && path[digits - 1] != '['))
        return false;
    if (path.size() - digits > 6)
        return false;
    index = std::stoi(std::string(path.substr(digits)));
    prefix = std::string(path.substr(0, digits - 1));
    return true;
}

struct FrameLayer {
    std::string prefix;
    int index = -1;
};

FrameLayer frameLayerOf(const Node& node, const std::string* wanted) {
    FrameLayer result;
    for (const ModuleFrame& frame : node.meta.nnModuleStack) {
        const std::string& path = frame.path.empty() ? frame.key : frame.path;
        if (layerFrame(path, result.prefix, result.index) && (!wanted || result.prefix == *wanted))
            return result;
    }
    return {};
}

// The repeated module list most layers come from: the prefix with the most distinct indices.
std::string layerModulePath(const Graph& graph, const PhaseSeq& phase) {
    std::map<std::string, std::vector<int>> indices;
    for (NodeId id : phase.nodes) {
        FrameLayer f = frameLayerOf(graph.node(id), nullptr);
        if (f.index >= 0)
            indices[f.prefix].push_back(f.index);
    }
    std::string best;
    size_t bestCount = 1;
    for (auto& [prefix, list] : indices) {
        std::sort(list.begin(), list.end());
        const size_t distinct = size_t(std::unique(list.begin(), list.end()) - list.begin());
        if (distinct > bestCount)
            best = prefix, bestCount = distinct;
    }
    return best;
}

// Layers from nn_module_stack: the module-list index, ranked; untagged nodes between tagged ones join the
// layer before them. False when too few nodes carry the module list.
bool layersFromModules(const Graph& graph, const std::string& prefix, PhaseSeq& phase) {
    std::vector<int> index(phase.nodes.size(), -1);
    std::vector<int> distinct;
    size_t tagged = 0;
    for (size_t i = 0; i < phase.nodes.size(); ++i) {
        index[i] = frameLayerOf(graph.node(phase.nodes[i]), &prefix).index;
        if (index[i] >= 0)
            ++tagged, distinct.push_back(index[i]);
    }
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    if (distinct.size() < 2 || tagged * 2 < phase.nodes.size())
        return false;
    phase.layers = distinct.size();
    int32_t current = kBefore;
    for (size_t i = 0; i < phase.nodes.size(); ++i) {
        if (index[i] >= 0)
            current =
                int32_t(std::lower_bound(distinct.begin(), distinct.end(), index[i]) - distinct.begin());
        phase.layerAt[i] = current;
    }
    // Untagged nodes after the last tagged one are the head, not the last layer.
    for (size_t i = phase.nodes.size(); i-- > 0 && index[i] < 0;)
        phase.layerAt[i] = kAfter;
    return true;
}

// Colours that two copies of a layer share: the node's own structure and its producers', so that identical
// ops in different places of a layer tell apart. The few nodes of the first copy that read the embedding
// instead of the residual stream differ; the runs of longestTandem tolerate them. Producers only: the last
// layer's nodes feed the head, not another layer.
std::vector<int32_t> layerColours(const Graph& graph) {
    std::vector<std::string> keys(graph.size());
    std::vector<std::vector<NodeId>> inputs(graph.size());
    for (NodeId id = 0; id < graph.size(); ++id) {
        const Node& n = graph.node(id);
        keys[id] = n.op == NodeOp::GetAttr ? "get_attr" : structuralKey(n);
        n.forEachInput([&](NodeId in) { inputs[id].push_back(in); });
    }
    return refineColours(coloursOfKeys(keys), inputs, {1, false});
}

struct Tandem {
    size_t start = 0;
    size_t period = 0;
    size_t count = 0;
    size_t covered() const { return period * count; }
};

// The longest run of consecutive copies of one block of colours. Candidate periods are the distances between
// consecutive occurrences of one colour, the most frequent first.
Tandem longestTandem(const std::vector<int32_t>& c, size_t minPeriod) {
    const size_t n = c.size();
    // Gaps to the next few occurrences, not only the next: a colour may occur several times in one layer.
    constexpr size_t kReach = 16;
    std::unordered_map<int32_t, std::vector<size_t>> recent;
    std::vector<size_t> gaps(n / 2 + 1, 0); // occurrences of each gap; every gap counted is at most n / 2
    for (size_t i = 0; i < n; ++i) {
        std::vector<size_t>& seen = recent[c[i]];
        for (size_t p : seen)
            if (i - p >= minPeriod && i - p <= n / 2)
                ++gaps[i - p];
        if (seen.size() == kReach)
            seen.erase(seen.begin());
        seen.push_back(i);
    }
    std::vector<std::pair<size_t, size_t>> candidates; // (period, occurrences)
    for (size_t gap = 0; gap < gaps.size(); ++gap)
        if (gaps[gap] > 0)
            candidates.emplace_back(gap, gaps[gap]);
    std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
        return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    if (candidates.size() > 128)
        candidates.resize(128);
    std::vector<Tandem> found;
    for (const auto& [period, occurrences] : candidates) {
        // A run goes on through a few mismatches (nodes of the first copy that read the embedding or the
        // inputs instead of the previous copy).
        const size_t tolerance = std::max<size_t>(2, period / 10);
        // Mismatch positions in the current run, the last `period` only: misses[oldest..]. They ascend, so
        // the ones that leave the window are always the oldest (a long period tolerates thousands of them).
        std::vector<size_t> misses;
        size_t oldest = 0;
        size_t runStart = 0, bestRun = 0, bestEnd = 0;
        for (size_t i = 0; i + period < n; ++i) {
            if (c[i] != c[i + period]) {
                misses.push_back(i);
                while (misses[oldest] + period <= i)
                    ++oldest;
                if (misses.size() - oldest > tolerance || i == runStart) {
                    runStart = i + 1;
                    misses.clear();
                    oldest = 0;
                    continue;
                }
            }
            // A run ends on a match.
            if (c[i] == c[i + period] && i + 1 - runStart > bestRun)
                bestRun = i + 1 - runStart, bestEnd = i + 1;
        }
        // The first copy's first nodes read the embedding instead of the residual stream and may differ:
        // a copy short of a few nodes still counts (layersFromRepeats places the copies).
        const Tandem t{bestEnd - bestRun, period,
                       std::min(n / period, (bestRun + period + period / 4) / period)};
        if (t.count >= 2)
            found.push_back(t);
    }
    // Two copies of a layer repeat too, with twice the period: of the tandems that cover about as much as
    // the best, the shortest period.
    size_t most = 0;
    for (const Tandem& t : found)
        most = std::max(most, t.covered());
    Tandem best;
    for (const Tandem& t : found)
        if (t.covered() + t.period >= most && (best.period == 0 || t.period < best.period))
            best = t;
    return best;
}

// Values live across the boundary before each position (consumers in the same phase only): a layer boundary
// is where only the residual stream crosses.
std::vector<size_t> cutWidths(const Graph& graph, const PhaseSeq& phase) {
    const size_t n = phase.nodes.size();
    std::unordered_map<NodeId, size_t> position;
    for (size_t i = 0; i < n; ++i)
        position.emplace(phase.nodes[i], i);
    std::vector<int64_t> diff(n + 2, 0);
    for (size_t i = 0; i < n; ++i) {
        size_t lastUse = i;
        for (NodeId user : graph.node(phase.nodes[i]).users)
            if (auto it = position.find(user); it != position.end())
                lastUse = std::max(lastUse, it->second);
        if (lastUse > i)
            ++diff[i + 1], --diff[lastUse + 1];
    }
    std::vector<size_t> width(n + 1, 0);
    int64_t live = 0;
    for (size_t p = 0; p <= n; ++p)
        live += diff[p], width[p] = size_t(live);
    return width;
}

// Layers from repeated structure: the longest tandem repeat of the phase's colours, its copies moved (by less
// than a period) to where the fewest values cross their boundaries.
bool layersFromRepeats(const Graph& graph, const std::vector<int32_t>& colour, PhaseSeq& phase,
                       size_t minPeriod) {
    const size_t n = phase.nodes.size();
    std::vector<int32_t> colours;
    colours.reserve(n);
    for (NodeId id : phase.nodes)
        colours.push_back(colour[id]);
    const Tandem t = longestTandem(colours, minPeriod);
    if (t.count < 2 || t.covered() * 10 < n * 3)
        return false;
    const std::vector<size_t> width = cutWidths(graph, phase);
    const int64_t period = int64_t(t.period);
    int64_t bestStart = -1;
    size_t bestScore = 0;
    size_t count = t.count;
    for (; count >= 2 && bestStart < 0; --count)
        for (int64_t shift = 1 - period; shift < period; ++shift) {
            const int64_t start = int64_t(t.start) + shift;
            if (start < 0 || size_t(start) + count * t.period > n)
                continue;
            size_t score = 0;
            for (size_t j = 0; j <= count; ++j)
                score += width[size_t(start) + j * t.period];
            const int64_t distance = std::abs(start - int64_t(t.start));
            if (bestStart < 0 || score < bestScore ||
                (score == bestScore && distance < std::abs(bestStart - int64_t(t.start))))
                bestStart = start, bestScore = score;
        }
    if (bestStart < 0)
        return false;
    ++count;
    const size_t covered = count * t.period;
    phase.layers = count;
    for (size_t i = 0; i < n; ++i) {
        const int64_t offset = int64_t(i) - bestStart;
        phase.layerAt[i] = offset < 0                  ? kBefore
                           : size_t(offset) >= covered ? kAfter
                                                       : int32_t(size_t(offset) / t.period);
    }
    return true;
}

constexpr std::array<std::string_view, 14> kLossOps{"log_softmax",
                                                    "_log_softmax",
                                                    "nll_loss",
                                                    "nll_loss_forward",
                                                    "nll_loss2d_forward",
                                                    "cross_entropy",
                                                    "mse_loss",
                                                    "l1_loss",
                                                    "smooth_l1_loss",
                                                    "huber_loss",
                                                    "kl_div",
                                                    "binary_cross_entropy",
                                                    "binary_cross_entropy_with_logits",
                                                    "soft_margin_loss"};

bool isLossOp(const Node& node) {
    return node.op == NodeOp::CallFunction &&
           std::find(kLossOps.begin(), kLossOps.end(), node.target.op) != kLossOps.end();
}

// nll_loss_backward, _log_softmax_backward_data, mse_loss_backward ...
bool isLossBackward(const Node& node) {
    const std::string& op = node.target.op;
    if (node.op != NodeOp::CallFunction || op.find("backward") == std::string::npos)
        return false;
    for (std::string_view loss : kLossOps)
        if (op.starts_with(loss) || op.starts_with(std::string("_") + std::string(loss)))
            return true;
    return false;
}

class SplitBuilder {
public:
    explicit SplitBuilder(LayerSplit& split) : split_(split) {}

    int32_t segment(SegmentKind kind, bool backward, int32_t layer) {
        const auto key = std::make_tuple(int(kind), backward, layer);
        auto [it, fresh] = index_.try_emplace(key, int32_t(split_.segments.size()));
        if (fresh) {
            LayerSegment s;
            s.kind = kind;
            s.backward = backward;
            s.layer = layer;
            s.label = kind == SegmentKind::Layer ? "layer " + std::to_string(layer)
                                                 : std::string(segmentKindName(kind));
            split_.segments.push_back(std::move(s));
        }
        return it->second;
    }
    void add(NodeId id, int32_t seg) {
        split_.segmentOf[id] = seg;
        split_.segments[size_t(seg)].nodes.push_back(id);
    }

private:
    LayerSplit& split_;
    std::map<std::tuple<int, bool, int32_t>, int32_t> index_;
};

// Forward layer of each backward layer: the one whose forward values it reads most; mirrored order when the
// votes do not give one forward layer per backward layer (a backward-only graph reads no forward node).
std::vector<int32_t> backwardLayerNames(const Graph& graph, const PhaseSeq& bwd, size_t forwardLayers,
                                        const std::vector<int32_t>& forwardLayerOf) {
    std::vector<int32_t> mirror(bwd.layers);
    for (size_t j = 0; j < bwd.layers; ++j)
        mirror[j] = int32_t(bwd.layers - 1 - j);
    if (forwardLayers != bwd.layers)
        return mirror;
    std::vector<std::vector<size_t>> votes(bwd.layers, std::vector<size_t>(forwardLayers, 0));
    for (size_t i = 0; i < bwd.nodes.size(); ++i) {
        if (bwd.layerAt[i] < 0)
            continue;
        graph.node(bwd.nodes[i]).forEachInput([&](NodeId in) {
            if (forwardLayerOf[in] >= 0)
                ++votes[size_t(bwd.layerAt[i])][size_t(forwardLayerOf[in])];
        });
    }
    std::vector<int32_t> names(bwd.layers, -1);
    std::vector<bool> taken(forwardLayers, false);
    for (size_t j = 0; j < bwd.layers; ++j) {
        const auto best = std::max_element(votes[j].begin(), votes[j].end());
        if (*best == 0 || taken[size_t(best - votes[j].begin())])
            return mirror;
        names[j] = int32_t(best - votes[j].begin());
        taken[size_t(names[j])] = true;
    }
    return names;
}

void buildSegments(const Graph& graph, const PhaseSeq& fwd, const PhaseSeq& bwd, LayerSplit& split) {
    SplitBuilder builder(split);
    std::vector<int32_t> forwardLayerOf(graph.size(), -1);
    bool afterLoss = false, hasLoss = false;
    for (size_t i = 0; fwd.layers > 0 && i < fwd.nodes.size(); ++i) {
        const NodeId id = fwd.nodes[i];
        const int32_t at = fwd.layerAt[i];
        if (at >= 0) {
            forwardLayerOf[id] = at;
            builder.add(id, builder.segment(SegmentKind::Layer, false, at));
        } else if (at == kBefore) {
            builder.add(id, builder.segment(SegmentKind::Embedding, false, -1));
        } else {
            afterLoss = afterLoss || isLossOp(graph.node(id));
            hasLoss = hasLoss || afterLoss;
            builder.add(id, builder.segment(afterLoss ? SegmentKind::Loss : SegmentKind::Head, false, -1));
        }
    }
    const std::vector<int32_t> names = backwardLayerNames(graph, bwd, fwd.layers, forwardLayerOf);
    // The backward starts with the loss's gradient: up to the backward of the last loss op.
    size_t lossEnd = 0;
    for (size_t i = 0; hasLoss && i < bwd.nodes.size() && bwd.layerAt[i] == kBefore; ++i)
        if (isLossBackward(graph.node(bwd.nodes[i])))
            lossEnd = i + 1;
    for (size_t i = 0; bwd.layers > 0 && i < bwd.nodes.size(); ++i) {
        const NodeId id = bwd.nodes[i];
        const int32_t at = bwd.layerAt[i];
        if (at >= 0) {
            builder.add(id, builder.segment(SegmentKind::Layer, true, names[size_t(at)]));
        } else if (at == kAfter) {
            builder.add(id, builder.segment(SegmentKind::Embedding, true, -1));
        } else {
            builder.add(id, builder.segment(i < lossEnd ? SegmentKind::Loss : SegmentKind::Head, true, -1));
        }
    }
}

// A late forward node goes with the first of its users that has a segment: into the forward segment of the
// same layer (or part).
void placeLateForward(const Graph& graph, const std::vector<NodeId>& late, LayerSplit& split) {
    std::map<std::tuple<int, int32_t>, int32_t> forwardSegment;
    for (size_t s = 0; s < split.segments.size(); ++s)
        if (!split.segments[s].backward)
            forwardSegment.emplace(std::make_tuple(int(split.segments[s].kind), split.segments[s].layer),
                                   int32_t(s));
    std::vector<int32_t> placed(graph.size(), -1);
    for (auto it = late.rbegin(); it != late.rend(); ++it) {
        for (NodeId user : graph.node(*it).users) {
            const int32_t seg = placed[user] >= 0 ? placed[user] : split.segmentOf[user];
            if (seg < 0)
                continue;
            const LayerSegment& s = split.segments[size_t(seg)];
            auto found = forwardSegment.find(std::make_tuple(int(s.kind), s.layer));
            if (found != forwardSegment.end()) {
                placed[*it] = found->second;
                break;
            }
        }
    }
    const auto head = forwardSegment.find(std::make_tuple(int(SegmentKind::Head), -1));
    for (NodeId id : late) {
        const int32_t seg = placed[id] >= 0 ? placed[id] : head != forwardSegment.end() ? head->second : -1;
        if (seg >= 0) {
            split.segmentOf[id] = seg;
            split.segments[size_t(seg)].nodes.push_back(id);
        }
    }
    for (LayerSegment& s : split.segments)
        std::sort(s.nodes.begin(), s.nodes.end());
}

} // namespace

std::string_view segmentKindName(SegmentKind kind) {
    static constexpr EnumName<SegmentKind> kNames[] = {{SegmentKind::Embedding, "embedding"},
                                                       {SegmentKind::Layer, "layer"},
                                                       {SegmentKind::Head, "head"},
                                                       {SegmentKind::Loss, "loss"}};
    return nameOf(kNames, kind, "layer");
}

std::string_view layerSourceName(LayerSource source) {
    static constexpr EnumName<LayerSource> kNames[] = {{LayerSource::None, "none"},
                                                       {LayerSource::ModuleStack, "nn_module_stack"},
                                                       {LayerSource::Repeats, "repeats"}};
    return nameOf(kNames, source, "none");
}

LayerSplit findLayers(const Graph& graph, const LayerOptions& options) {
    LayerSplit split;
    split.segmentOf.assign(graph.size(), -1);
    const std::vector<bool> backward = backwardMask(graph);
    PhaseSeq fwd, bwd;
    bwd.backward = true;
    // Forward nodes only the backward reads (weight transposes torch 1.13 prints among the backward nodes,
    // saved statistics) join the layer whose backward reads them, afterwards: printed late they would sit
    // between the last forward layer and the head, or break the repeats.
    std::vector<bool> isLate(graph.size(), false);
    for (NodeId id = graph.size(); id-- > 0;) {
        const Node& n = graph.node(id);
        if (backward[id] || !takesPart(n) || n.users.empty())
            continue;
        isLate[id] =
            std::all_of(n.users.begin(), n.users.end(), [&](NodeId u) { return backward[u] || isLate[u]; });
    }
    std::vector<NodeId> late;
    for (NodeId id = 0; id < graph.size(); ++id)
        if (takesPart(graph.node(id)))
            (backward[id] ? bwd.nodes : isLate[id] ? late : fwd.nodes).push_back(id);
    fwd.layerAt.assign(fwd.nodes.size(), kBefore);
    bwd.layerAt.assign(bwd.nodes.size(), kBefore);

    if (options.useModuleStack) {
        split.modulePath = layerModulePath(graph, fwd.nodes.empty() ? bwd : fwd);
        if (!split.modulePath.empty() &&
            layersFromModules(graph, split.modulePath, fwd.nodes.empty() ? bwd : fwd))
            split.source = LayerSource::ModuleStack;
        else
            split.modulePath.clear();
    }
    std::vector<int32_t> colour;
    const auto colours = [&]() -> const std::vector<int32_t>& {
        if (colour.empty())
            colour = layerColours(graph);
        return colour;
    };
    if (split.source == LayerSource::None && layersFromRepeats(graph, colours(), fwd, options.minLayerNodes))
        split.source = LayerSource::Repeats;
    // The backward: its own nn_module_stack when torch copied it there, else its own repeats.
    if (!bwd.nodes.empty() && !(split.source == LayerSource::ModuleStack && !fwd.nodes.empty() &&
                                layersFromModules(graph, split.modulePath, bwd))) {
        if (layersFromRepeats(graph, colours(), bwd, options.minLayerNodes) &&
            split.source == LayerSource::None)
            split.source = LayerSource::Repeats;
    }
    split.layers = std::max(fwd.layers, bwd.layers);
    if (!split.found()) {
        split.source = LayerSource::None;
        split.layers = 0;
        return split;
    }
    buildSegments(graph, fwd, bwd, split);
    placeLateForward(graph, late, split);
    return split;
}

} // namespace jointscope
