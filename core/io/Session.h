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

// What a session may hold. A session is written by the GUI for one graph: a collection larger than any graph
// this build opens is not a session but an attack on the reader, refused at its key.
struct SessionLimits {
    size_t policies = 1'000'000; // node pins: at most one per node
    size_t shardingPins = 1'000'000;
    size_t meshDims = 16;
    size_t viewEntries = 256;      // the window's settings: a few dozen
    size_t stringBytes = 1u << 20; // a node name, a placement, a view value (window state is base64)
};

// Parses a session's text. Errors are located (file:line:col): invalid JSON, a field of the wrong type, a
// "format" other than "jointscope-session", a missing or unsupported "version", no graph path.
Expected<SessionFile> parseSession(std::string_view text, const std::string& fileName,
                                   const SessionLimits& limits = {});
// Reads a session file, and refuses (at graph.path) one whose graph is a session itself: a session names the
// graph file it was made on, so a session naming a session is a loop or a forgery.
Expected<SessionFile> readSession(const std::string& path, const SessionLimits& limits = {});
// The graph file a session read from `sessionPath` names: graph.path, relative to the session's folder.
std::string sessionGraphFile(const SessionFile& session, const std::string& sessionPath);
// Whether the file at `path` is a jointscope session (by its "format"), whatever its name.
bool isSessionFile(const std::string& path);

// Names that are no node of the graph the session is applied to; taken out of `byNode` (policies, sharding
// pins) so that they are reported once instead of failing, or costing, one at a time.
struct UnknownNodes {
    size_t count = 0;
    std::vector<std::string> examples;                // the first few, for the message
    std::string summary(std::string_view what) const; // "3 policies name no node of the graph: 'a', 'b', 'c'"
};
template <class NodeMap, class Contains>
void takeUnknownNodes(NodeMap& byNode, const Contains& isNode, UnknownNodes& unknown) {
    for (auto it = byNode.begin(); it != byNode.end();) {
        if (isNode(it->first)) {
            ++it;
            continue;
        }
        if (unknown.examples.size() < 5)
            unknown.examples.push_back(it->first);
        ++unknown.count;
        it = byNode.erase(it);
    }
}

// The JSON text of `session` (version kSessionVersion, whatever session.version says), ending in a newline.
std::string writeSession(const SessionFile& session);

} // namespace jointscope
