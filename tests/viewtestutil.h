// Helpers shared by the canvas suites (tst_view_*).
#pragma once

#include "canvas/GraphScene.h"
#include "layout/GraphLayout.h"

#include <QtTest>

namespace jointscope::test {

// Lays the scene's graph out synchronously (the runner's thread is not needed in tests) and shows it.
inline void layOutScene(views::GraphScene& scene) {
    layout::LayoutOptions options;
    options.sizes = scene.measureNodes();
    auto result = layout::computeLayout(*scene.graph(), options);
    QVERIFY(result.has_value());
    scene.applyLayout(*result);
}

} // namespace jointscope::test
