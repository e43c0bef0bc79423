#include "layout/LayoutRunner.h"

namespace jointscope::layout {

using ResultPtr = std::shared_ptr<const LayoutResult>;

LayoutRunner::LayoutRunner(QObject* parent) : QObject(parent) {
    qRegisterMetaType<ResultPtr>("std::shared_ptr<const jointscope::layout::LayoutResult>");
    connect(&job_, &views::BackgroundJob::started, this, &LayoutRunner::started);
    connect(&job_, &views::BackgroundJob::cancelled, this, &LayoutRunner::cancelled);
}

LayoutRunner::~LayoutRunner() {
    disconnect(&job_, nullptr, this, nullptr);
}

quint64 LayoutRunner::start(std::shared_ptr<const Graph> graph, LayoutOptions options) {
    return launch(
        [graph = std::move(graph), options = std::move(options)](const std::atomic<bool>* flag) -> ResultPtr {
            auto result = computeLayout(*graph, options, flag);
            if (!result)
                return nullptr;
            return std::make_shared<const LayoutResult>(std::move(*result));
        });
}

quint64 LayoutRunner::startCollapsed(std::shared_ptr<const Graph> graph,
                                     std::shared_ptr<const GroupTree> tree, std::vector<char> expanded,
                                     size_t budget, std::function<NodeSize(const Node&)> measure,
                                     LayoutOptions options) {
    return launch([graph = std::move(graph), tree = std::move(tree), expanded = std::move(expanded), budget,
                   measure = std::move(measure),
                   options = std::move(options)](const std::atomic<bool>* flag) mutable -> ResultPtr {
        if (!tree)
            tree = std::make_shared<const GroupTree>(buildGroupTree(*graph));
        if (expanded.size() != tree->groups.size())
            expanded = initialExpansion(*tree, budget);
        if (flag->load())
            return nullptr;
        auto view = std::make_shared<CollapsedView>(collapseView(*graph, tree, std::move(expanded)));
        options.sizes.clear();
        options.sizes.reserve(view->items.size());
        for (const ViewItem& item : view->items) {
            if (item.group >= 0)
                options.sizes.push_back(groupBoxSize(tree->groups[size_t(item.group)]));
            else
                options.sizes.push_back(measure ? measure(graph->node(item.node))
                                                : estimateNodeSize(graph->node(item.node)));
        }
        // dot spends seconds on a few hundred boxes, tens of seconds when their merged edges are dense (every
        // backward chunk reads many forward ones); the layered layout milliseconds, and the user is waiting
        // on a double-click.
        if (options.algorithm == LayoutAlgorithm::Auto &&
            (view->edges.size() > 3 * view->items.size() || view->items.size() > 300))
            options.algorithm = LayoutAlgorithm::Layered;
        options.clusters = viewClusters(*view);
        const Graph layoutGraph = viewLayoutGraph(*view);
        auto result = computeLayout(layoutGraph, options, flag);
        if (!result)
            return nullptr;
        result->view = std::move(view);
        return std::make_shared<const LayoutResult>(std::move(*result));
    });
}

quint64 LayoutRunner::launch(Work work) {
    return job_.run([work = std::move(work)](views::JobControl& control) { return work(control.flag()); },
                    [this](ResultPtr result, quint64 ticket) {
                        if (result)
                            emit finished(ticket, std::move(result));
                        else
                            emit cancelled(ticket); // the engine saw its flag
                    });
}

void LayoutRunner::cancel() {
    job_.cancel();
}

void LayoutRunner::waitForDone() {
    job_.waitForDone();
}

} // namespace jointscope::layout
