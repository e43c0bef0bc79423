// The UI-thread cost of putting a Graphviz refinement on the canvas, both ways in one run: building every item
// again (GraphScene::applyLayout, what the canvas did before) and moving the items of the fast layered placement
// (GraphScene::moveToLayout). Each graph: the layered placement and dot's layout are computed first (off the
// clock, as the layout thread does), then each way is timed `reps` times on a scene showing the placement.
//
//   QT_QPA_PLATFORM=offscreen build/bench/canvas_refine [--reps N] GRAPH...
#include "canvas/GraphScene.h"
#include "io/GraphFile.h"
#include "layout/GraphLayout.h"

#include <QApplication>
#include <QElapsedTimer>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace jointscope;

namespace {

double medianMs(std::vector<double> ms) {
    std::sort(ms.begin(), ms.end());
    return ms.empty() ? 0 : ms[ms.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    int reps = 5;
    std::vector<std::string> paths;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--reps" && i + 1 < argc)
            reps = std::max(1, std::atoi(argv[++i]));
        else
            paths.push_back(arg);
    }
    std::printf("%-28s %7s %6s %12s %12s %7s\n", "graph", "nodes", "edges", "rebuild_ms", "move_ms", "ratio");
    for (const std::string& path : paths) {
        Expected<GraphFile> file = GraphFile::open(path);
        if (!file) {
            std::fprintf(stderr, "%s\n", file.error().format().c_str());
            return 1;
        }
        Expected<Graph> graph = file->load(0);
        if (!graph) {
            std::fprintf(stderr, "%s\n", graph.error().format().c_str());
            return 1;
        }
        views::GraphScene scene;
        scene.setGraph(&*graph);
        layout::LayoutOptions options;
        options.sizes = scene.measureNodes();
        options.algorithm = layout::LayoutAlgorithm::Layered;
        const auto fast = layout::computeLayout(*graph, options);
        options.algorithm = layout::LayoutAlgorithm::Graphviz;
        const auto refined = layout::computeLayout(*graph, options);
        if (!fast || !refined || refined->algorithm != layout::LayoutAlgorithm::Graphviz) {
            std::fprintf(stderr, "%s: no Graphviz layout\n", path.c_str());
            return 1;
        }
        std::vector<double> rebuild, move;
        for (int r = 0; r < reps; ++r) {
            scene.applyLayout(*fast);
            QElapsedTimer t;
            t.start();
            scene.applyLayout(*refined);
            rebuild.push_back(t.nsecsElapsed() / 1e6);
            scene.applyLayout(*fast);
            t.start();
            if (!scene.moveToLayout(*refined)) {
                std::fprintf(stderr, "%s: the refinement does not match the placement\n", path.c_str());
                return 1;
            }
            move.push_back(t.nsecsElapsed() / 1e6);
        }
        const double a = medianMs(rebuild), b = medianMs(move);
        std::printf("%-28s %7zu %6zu %12.1f %12.1f %7.2f\n", graph->name.c_str(), graph->size(),
                    refined->edges.size(), a, b, a > 0 ? b / a : 0);
    }
    return 0;
}
