#include "layout/LayoutRunner.h"

#include "layout/LadderLayout.h"

namespace jointscope::layout {

namespace {

using ResultPtr = std::shared_ptr<const LayoutResult>;

// `options` for one pass: a fast pass of a slow choice runs the layered layout instead, and says so; a fast
// ladder takes the dot layouts of its frames from the cache only (the ladder marks what it left for later).
LayoutOptions passOptions(const Graph& graph, LayoutOptions options, bool fast, bool& provisional) {
    provisional = false;
    if (!fast || !options.preview)
        return options;
    const LayoutAlgorithm chosen = chosenAlgorithm(graph, options);
    if (chosen == LayoutAlgorithm::Graphviz) {
        options.algorithm = LayoutAlgorithm::Layered;
        provisional = true;
    } else if (chosen == LayoutAlgorithm::Ladder) {
        options.framesFromCacheOnly = true;
    }
    return options;
}

ResultPtr finish(std::optional<LayoutResult> result, bool provisional) {
    if (!result)
        return nullptr;
    result->provisional = result->provisional || provisional;
    return std::make_shared<const LayoutResult>(std::move(*result));
}

} // namespace

LayoutRunner::LayoutRunner(QObject* parent) : QObject(parent), frames_(std::make_shared<FrameLayoutCache>()) {
    qRegisterMetaType<ResultPtr>("std::shared_ptr<const jointscope::layout::LayoutResult>");
    connect(&job_, &views::BackgroundJob::started, this, &LayoutRunner::started);
    connect(&job_, &views::BackgroundJob::cancelled, this, &LayoutRunner::cancelled);
    connect(&refine_, &views::BackgroundJob::cancelled, this, [this](quint64 job) {
        if (job == refineJob_)
            emit cancelled(refining_);
    });
}

LayoutRunner::~LayoutRunner() {
    disconnect(&job_, nullptr, this, nullptr);
    disconnect(&refine_, nullptr, this, nullptr);
}

quint64 LayoutRunner::start(std::shared_ptr<const Graph> graph, LayoutOptions options) {
    if (!options.frameCache)
        options.frameCache = frames_;
    return launch([graph = std::move(graph), options = std::move(options)](
                      const std::atomic<bool>* flag, bool fast, const ResultPtr&) -> ResultPtr {
        bool provisional = false;
        const LayoutOptions pass = passOptions(*graph, options, fast, provisional);
        return finish(computeLayout(*graph, pass, flag), provisional);
    });
}

quint64 LayoutRunner::startCollapsed(std::shared_ptr<const Graph> graph,
                                     std::shared_ptr<const GroupTree> tree, std::vector<char> expanded,
                                     size_t budget, std::function<NodeSize(const Node&)> measure,
                                     LayoutOptions options) {
    if (!options.frameCache)
        options.frameCache = frames_;
    return launch([graph = std::move(graph), tree = std::move(tree), expanded = std::move(expanded), budget,
                   measure = std::move(measure), options = std::move(options)](
                      const std::atomic<bool>* flag, bool fast, const ResultPtr& provisional) -> ResultPtr {
        // The refinement lays out the view its fast pass built.
        std::shared_ptr<const CollapsedView> view = provisional ? provisional->view : nullptr;
        if (!view) {
            auto groups = tree ? tree : std::make_shared<const GroupTree>(buildGroupTree(*graph));
            auto open =
                expanded.size() == groups->groups.size() ? expanded : initialExpansion(*groups, budget);
            if (flag->load())
                return nullptr;
            view = std::make_shared<const CollapsedView>(collapseView(*graph, groups, std::move(open)));
        }
        LayoutOptions laid = options;
        laid.sizes.clear();
        laid.sizes.reserve(view->items.size());
        for (const ViewItem& item : view->items) {
            if (item.group >= 0)
                laid.sizes.push_back(groupBoxSize(view->tree->groups[size_t(item.group)]));
            else
                laid.sizes.push_back(measure ? measure(graph->node(item.node))
                                             : estimateNodeSize(graph->node(item.node)));
        }
        // dot spends seconds on a few hundred boxes, tens of seconds when their merged edges are dense (every
        // backward chunk reads many forward ones); the layered layout milliseconds, and the user is waiting
        // on a double-click.
        if (laid.algorithm == LayoutAlgorithm::Auto &&
            (view->edges.size() > 3 * view->items.size() || view->items.size() > 300))
            laid.algorithm = LayoutAlgorithm::Layered;
        if (laid.algorithm == LayoutAlgorithm::Ladder)
            laid.sides = ladderSides(*graph, *view, options.recomputed);
        laid.recomputed.clear(); // per graph node, not per view item
        laid.clusters = viewClusters(*view);
        const Graph layoutGraph = viewLayoutGraph(*view);
        bool isProvisional = false;
        auto result =
            computeLayout(layoutGraph, passOptions(layoutGraph, std::move(laid), fast, isProvisional), flag);
        if (!result)
            return nullptr;
        result->view = std::move(view);
        return finish(std::move(result), isProvisional);
    });
}

quint64 LayoutRunner::launch(Work work) {
    refine_.cancel(); // a refinement of an older request is no longer wanted
    latest_ = job_.run(
        [work](views::JobControl& control) { return work(control.flag(), true, nullptr); },
        [this, work](ResultPtr result, quint64 ticket) {
            if (!result) {
                emit cancelled(ticket); // the engine saw its flag
                return;
            }
            emit finished(ticket, result);
            // A receiver of finished() may have started a newer request already: this one is not refined.
            if (!result->provisional || ticket != latest_)
                return;
            const quint64 job = refine_.run(
                [work, result](views::JobControl& control) { return work(control.flag(), false, result); },
                [this, ticket](ResultPtr refined) {
                    if (refined)
                        emit finished(ticket, std::move(refined));
                    else
                        emit cancelled(ticket);
                });
            refining_ = ticket; // after run(): what run() superseded reported under its own ticket
            refineJob_ = job;
        });
    return latest_;
}

void LayoutRunner::cancel() {
    job_.cancel();
    refine_.cancel();
}

void LayoutRunner::waitForDone() {
    job_.waitForDone();
    refine_.waitForDone();
    job_.waitForDone(); // a fast pass delivered while waiting may have started a refinement, and so on
    refine_.waitForDone();
}

} // namespace jointscope::layout
