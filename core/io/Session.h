// The GUI's session file (*.jointscope): the graph that was open, the partition's settings and policy pins,
// the sharding's mesh and placement pins, the window's view settings. Read with a version check.
#pragma once

#include "support/Diagnostic.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jointscope {

// The one version this build reads and writes; a file of any other version is refused.
inline constexpr int64_t kSessionVersion = 1;

// The sharding's part ("sharding"): names and placements as text; the sharding layer checks them.
struct SessionSharding {
    std::vector<int64_t> shape;
    std::vector<std::string> names;
    std::string topology = "h100";
    std::map<std::string, std::string> pins; // node -> output placement as torch prints it, "S(0)R"
    bool solved = false;                     // a plan was shown: re-solve on open

    friend bool operator==(const SessionSharding&, const SessionSharding&) = default;
};

// Policies and option names stay text here: the partition layer knows which are valid.
struct SessionFile {
    int64_t version = kSessionVersion;
    std::string graphPath; // relative: to the session file's folder
    int64_t graphIndex = 0;
    std::string ruleset; // empty: chosen from the graph's torch version
    std::string strategy = "min-cut";
    double memoryBudget = 1.0;
    std::string solver = "dp";
    std::map<std::string, std::string> policies; // node -> "MUST_SAVE" / "MUST_RECOMPUTE" / ...
    std::optional<SessionSharding> sharding;     // absent in sessions older than the sharding explorer
    // The window's own settings (geometry, dock state, the selected node). Only string values are kept.
    std::map<std::string, std::string> view;

    friend bool operator==(const SessionFile&, const SessionFile&) = default;
};

// Parses a session's text. Errors are located (file:line:col): invalid JSON, a field of the wrong type, a
// "format" other than "jointscope-session", a missing or unsupported "version", no graph path.
Expected<SessionFile> parseSession(std::string_view text, const std::string& fileName);
Expected<SessionFile> readSession(const std::string& path);

// The JSON text of `session` (version kSessionVersion, whatever session.version says), ending in a newline.
std::string writeSession(const SessionFile& session);

} // namespace jointscope
