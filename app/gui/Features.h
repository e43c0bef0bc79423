// The window's features, built in one place: which exist, in what order their docks and menu entries come,
// and what one feature hands another (the memory timeline and Validate read the partition's decision;
// sessions save the partition's and the sharding's edits).
#pragma once

#include "Feature.h"
#include "FeatureContext.h"

#include <vector>

namespace jointscope::gui {

class SessionController;
class SessionHost;

struct Features {
    std::vector<Feature*> all; // in the order of their docks and menu entries
    SessionController* sessions = nullptr;
};

// `context.canvas` must be set; every object is a child of `parent`.
Features createFeatures(const FeatureContext& context, SessionHost* host, QObject* parent);

} // namespace jointscope::gui
