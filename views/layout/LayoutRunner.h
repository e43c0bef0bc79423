// Runs layouts off the UI thread (views::BackgroundJob), one at a time, the newest winning, with cancel. With
// LayoutOptions::preview a slow layout comes in two passes: a fast placement first (finished() with a
// provisional result), then the refinement on a second job, which the next request cancels. No widgets:
// usable from tests.
#pragma once

#include "layout/GraphLayout.h"
#include "layout/Grouping.h"
#include "layout/LadderLayout.h"
#include "models/BackgroundJob.h"

#include <QObject>

#include <atomic>
#include <functional>
#include <memory>

namespace jointscope::layout {

class LayoutRunner : public QObject {
    Q_OBJECT
public:
    explicit LayoutRunner(QObject* parent = nullptr);
    ~LayoutRunner() override;

    // The frame layouts kept so far (LayoutOptions::frameCache of every request without its own).
    const FrameLayoutCache& frameCache() const { return *frames_; }

    // Starts laying out `graph` (kept alive by the runner until done) and cancels the layout before it.
    // Returns the ticket that finished() / cancelled() will carry.
    quint64 start(std::shared_ptr<const Graph> graph, LayoutOptions options);
    // Lays out the collapsed view of `graph` under `expanded`, all off the UI thread: builds the group tree
    // when `tree` is null and picks an initial expansion of at most `budget` items when `expanded` is empty.
    // `measure` sizes node boxes (empty: estimated). The result carries the view.
    quint64 startCollapsed(std::shared_ptr<const Graph> graph, std::shared_ptr<const GroupTree> tree,
                           std::vector<char> expanded, size_t budget,
                           std::function<NodeSize(const Node&)> measure, LayoutOptions options);
    // Cancels the running layout (cancelled() at once); its result, if it still arrives, is discarded.
    void cancel();
    // A first placement is on its way.
    bool busy() const { return job_.busy(); }
    // A provisional result is on its way to being refined.
    bool refining() const { return refine_.busy(); }
    // Blocks until every started layout has reported (tests, --screenshot).
    void waitForDone();

signals:
    void started(quint64 ticket);
    void finished(quint64 ticket, std::shared_ptr<const jointscope::layout::LayoutResult> result);
    void cancelled(quint64 ticket);

private:
    using ResultPtr = std::shared_ptr<const LayoutResult>;
    // `fast`: the first pass of a previewed request; a result it marks provisional gets refined (fast =
    // false) with the provisional result at hand.
    using Work = std::function<ResultPtr(const std::atomic<bool>*, bool fast, const ResultPtr& provisional)>;
    quint64 launch(Work work);

    views::BackgroundJob job_{1}; // one thread: layouts run serialised, in order (Graphviz is not reentrant)
    views::BackgroundJob refine_{1}; // apart, so that a refinement still in dot never delays a first frame
    quint64 latest_ = 0;             // the newest request
    quint64 refining_ = 0;           // the request whose refinement runs
    quint64 refineJob_ = 0;          // refine_'s ticket for it
    // Dot's layouts of frame contents, for every request: a layer laid out once is never laid out again.
    std::shared_ptr<FrameLayoutCache> frames_;
};

} // namespace jointscope::layout
