// Graphviz `dot` through the gvc / cgraph C API. gvc keeps global state: never call this from two
// threads at once (LayoutRunner owns the one layout thread).
#include "layout/GraphLayout.h"

#ifdef JOINTSCOPE_HAVE_GRAPHVIZ
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <memory>
#include <mutex>
#include <string>
#endif

namespace jointscope::layout {

#ifndef JOINTSCOPE_HAVE_GRAPHVIZ

bool graphvizAvailable() {
    return false;
}

std::optional<LayoutResult> graphvizLayout(const Graph&, const std::vector<NodeSize>&, const LayoutOptions&,
                                           const std::atomic<bool>*) {
    return std::nullopt;
}

#else

bool graphvizAvailable() {
    return true;
}

namespace {

constexpr double kPointsPerInch = 72.0;

struct GvcDeleter {
    void operator()(GVC_t* gvc) const { gvFreeContext(gvc); }
};

// cgraph takes char* for names and values it only reads.
char* mutableText(std::string& s) {
    return s.data();
}

// gvc and cgraph keep process-wide state (string pools, plugin tables): one layout at a time.
std::mutex& graphvizMutex() {
    static std::mutex mutex;
    return mutex;
}

// Graphviz reads `\N`, `\G`, `\l`, ... in labels; a title is only there to reserve room, so no escapes.
std::string plainLabel(const std::string& text) {
    std::string out = text.substr(0, 48);
    for (char& c : out)
        if (c == '\\' || c == '"' || static_cast<unsigned char>(c) < 0x20 ||
            static_cast<unsigned char>(c) >= 0x80)
            c = ' ';
    return out;
}

// Lays out with `dot`, or returns nullopt (cancelled, or dot failed: the caller may retry without clusters).
// `graph` as a cgraph graph with dot's attributes: a box per node of its size, frames nested as clusters.
// Closes the graph (and frees dot's layout of it) when destroyed.
class DotGraph {
public:
    DotGraph(const Graph& graph, const std::vector<NodeSize>& sizes, const LayoutOptions& options,
             const std::vector<LayoutCluster>& clusters)
        : edges_(graphEdges(graph)) {
        std::string graphName = "g";
        g_ = agopen(mutableText(graphName), Agdirected, nullptr);
        setAttributes(options, !clusters.empty());
        addNodes(graph, sizes);
        addClusters(graph, clusters);
        agEdges_.reserve(edges_.size());
        for (auto [from, to] : edges_) {
            std::string edgeName;
            agEdges_.push_back(agedge(g_, nodes_[from], nodes_[to], mutableText(edgeName), 1));
        }
    }
    DotGraph(const DotGraph&) = delete;
    DotGraph& operator=(const DotGraph&) = delete;
    ~DotGraph() {
        if (laidOutBy_)
            gvFreeLayout(laidOutBy_, g_);
        agclose(g_);
    }

    bool layOut(GVC_t* gvc) {
        if (gvLayout(gvc, g_, "dot") != 0)
            return false;
        laidOutBy_ = gvc;
        return true;
    }

    // dot's placement, y downwards from the top, in points.
    LayoutResult result() const {
        const boxf bb = GD_bb(g_);
        const double top = bb.UR.y;
        LayoutResult result;
        result.algorithm = LayoutAlgorithm::Graphviz;
        result.width = bb.UR.x - bb.LL.x;
        result.height = bb.UR.y - bb.LL.y;
        result.nodes.resize(nodes_.size());
        for (NodeId id = 0; id < nodes_.size(); ++id) {
            const pointf c = ND_coord(nodes_[id]);
            result.nodes[id] = {c.x - bb.LL.x, top - c.y, ND_width(nodes_[id]) * kPointsPerInch,
                                ND_height(nodes_[id]) * kPointsPerInch};
        }
        result.clusters.reserve(clusters_.size());
        for (Agraph_t* sub : clusters_) {
            const boxf cb = GD_bb(sub);
            result.clusters.push_back({(cb.LL.x + cb.UR.x) / 2 - bb.LL.x, top - (cb.LL.y + cb.UR.y) / 2,
                                       cb.UR.x - cb.LL.x, cb.UR.y - cb.LL.y});
        }
        result.edges.reserve(edges_.size());
        for (size_t i = 0; i < edges_.size(); ++i) {
            EdgeRoute route{edges_[i].first, edges_[i].second, {}};
            const splines* spl = ED_spl(agEdges_[i]);
            if (spl && spl->size > 0) {
                const bezier& bz = spl->list[0];
                route.points.reserve(size_t(bz.size));
                for (int k = 0; k < bz.size; ++k)
                    route.points.push_back({bz.list[k].x - bb.LL.x, top - bz.list[k].y});
            }
            if (route.points.size() <
                4) { // dot gave no spline (e.g. both nodes at one place): a straight line
                const auto& a = result.nodes[route.from];
                const auto& b = result.nodes[route.to];
                route.points = {{a.x, a.y}, {a.x, a.y}, {b.x, b.y}, {b.x, b.y}};
            }
            result.edges.push_back(std::move(route));
        }
        return result;
    }

private:
    void setAttributes(const LayoutOptions& options, bool withClusters) {
        auto setGraph = [&](std::string key, std::string value) {
            agattr(g_, AGRAPH, mutableText(key), mutableText(value));
        };
        setGraph("rankdir", "TB");
        setGraph("nodesep", std::to_string(options.nodeSeparation / kPointsPerInch));
        setGraph("ranksep", std::to_string(options.rankSeparation / kPointsPerInch));
        setGraph("splines", "spline");
        // Network simplex runs to convergence by default: 20 s for a 300-node joint graph whose output
        // node reads ~150 values. A few passes per node give nearly the same picture in 0.2 s.
        setGraph("nslimit", "2");
        setGraph("nslimit1", "2");
        std::string shapeKey = "shape", widthKey = "width", heightKey = "height", fixedKey = "fixedsize",
                    labelKey = "label";
        std::string box = "box", one = "0.5", yes = "true", empty = "";
        agattr(g_, AGNODE, mutableText(shapeKey), mutableText(box));
        widthSym_ = agattr(g_, AGNODE, mutableText(widthKey), mutableText(one));
        heightSym_ = agattr(g_, AGNODE, mutableText(heightKey), mutableText(one));
        agattr(g_, AGNODE, mutableText(fixedKey), mutableText(yes));
        agattr(g_, AGNODE, mutableText(labelKey), mutableText(empty));
        std::string arrowKey = "arrowhead", none = "none";
        agattr(g_, AGEDGE, mutableText(arrowKey), mutableText(none));
        if (withClusters) {
            // The frame's title is drawn in the band dot keeps for the cluster label (labelloc=t by default).
            clusterLabelSym_ = agattr(g_, AGRAPH, mutableText(labelKey), mutableText(empty));
            setGraph("fontsize", "12");
            // On the root graph a margin is in inches and pads the drawing: set it on the clusters only.
            std::string marginKey = "margin";
            clusterMarginSym_ = agattr(g_, AGRAPH, mutableText(marginKey), mutableText(empty));
        }
    }

    void addNodes(const Graph& graph, const std::vector<NodeSize>& sizes) {
        nodes_.resize(graph.size());
        for (NodeId id = 0; id < graph.size(); ++id) {
            std::string name = "n" + std::to_string(id);
            Agnode_t* node = agnode(g_, mutableText(name), 1);
            std::string w = std::to_string(sizes[id].width / kPointsPerInch);
            std::string h = std::to_string(sizes[id].height / kPointsPerInch);
            agxset(node, widthSym_, mutableText(w));
            agxset(node, heightSym_, mutableText(h));
            nodes_[id] = node;
        }
    }

    // Parents come first: a cluster is a subgraph of its parent's, and dot nests their boxes.
    void addClusters(const Graph& graph, const std::vector<LayoutCluster>& clusters) {
        std::string clusterMargin = "10";
        clusters_.assign(clusters.size(), nullptr);
        for (size_t c = 0; c < clusters.size(); ++c) {
            const int32_t parent = clusters[c].parent;
            Agraph_t* owner = parent >= 0 && size_t(parent) < c ? clusters_[size_t(parent)] : g_;
            std::string name = "cluster_" + std::to_string(c);
            Agraph_t* sub = agsubg(owner, mutableText(name), 1);
            std::string label = plainLabel(clusters[c].title);
            agxset(sub, clusterLabelSym_, mutableText(label));
            agxset(sub, clusterMarginSym_, mutableText(clusterMargin));
            for (NodeId id : clusters[c].nodes)
                if (id < graph.size())
                    agsubnode(sub, nodes_[id], 1);
            clusters_[c] = sub;
        }
    }

    Agraph_t* g_ = nullptr;
    GVC_t* laidOutBy_ = nullptr;
    Agsym_t* widthSym_ = nullptr;
    Agsym_t* heightSym_ = nullptr;
    Agsym_t* clusterLabelSym_ = nullptr;
    Agsym_t* clusterMarginSym_ = nullptr;
    std::vector<std::pair<NodeId, NodeId>> edges_;
    std::vector<Agnode_t*> nodes_;
    std::vector<Agraph_t*> clusters_;
    std::vector<Agedge_t*> agEdges_;
};

std::optional<LayoutResult> runDot(GVC_t* gvc, const Graph& graph, const std::vector<NodeSize>& sizes,
                                   const LayoutOptions& options, const std::vector<LayoutCluster>& clusters,
                                   const std::atomic<bool>* cancel) {
    DotGraph dot(graph, sizes, options, clusters);
    if ((cancel && cancel->load()) || !dot.layOut(gvc))
        return std::nullopt;
    LayoutResult result = dot.result();
    if (cancel && cancel->load())
        return std::nullopt;
    return result;
}

} // namespace

std::optional<LayoutResult> graphvizLayout(const Graph& graph, const std::vector<NodeSize>& sizes,
                                           const LayoutOptions& options, const std::atomic<bool>* cancel) {
    std::lock_guard<std::mutex> lock(graphvizMutex());
    std::unique_ptr<GVC_t, GvcDeleter> gvc(gvContext());
    if (!gvc)
        return std::nullopt;
    auto result = runDot(gvc.get(), graph, sizes, options, options.clusters, cancel);
    // dot's cluster ranking has known failures on some inputs ("trouble in init_rank"): frames drawn around
    // an unclustered layout beat no layout.
    if (!result && !options.clusters.empty() && !(cancel && cancel->load()))
        result = runDot(gvc.get(), graph, sizes, options, {}, cancel);
    return result;
}

#endif

} // namespace jointscope::layout
