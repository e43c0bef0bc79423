// Which built-in partitioner ruleset a graph was made under ("--ruleset auto"). The CLI and the GUI both ask
// this one function, so a graph partitions the same way in either, and both print the reason.
#pragma once

#include "graph/Graph.h"
#include "ops/Ruleset.h"
#include "support/Diagnostic.h"

#include <string>
#include <string_view>

namespace jointscope {

struct RulesetChoice {
    std::string name;   // a built-in ruleset name, or what the user named
    std::string reason; // "torch 2.6.0 recorded in the graph: ruleset torch-2.13", ...
};

// The graph's recorded torch version (export attributes, sidecar, TORCH_TRACE metadata) picks the covering
// built-in ruleset, else the newest version it can be ("torch_version_at_most"); without one, the text's form
// does (torch 1.x prints no tensor types; TORCH_TRACE logs and typed FX text come from torch 2.x).
RulesetChoice chooseRuleset(const Graph& graph);

// `requested` empty or "auto": chooseRuleset(graph); else the named ruleset or file, as given.
RulesetChoice resolveRuleset(std::string_view requested, const Graph& graph);

// resolveRuleset, then loadRuleset.
Expected<Ruleset> loadRulesetFor(std::string_view requested, const Graph& graph, RulesetChoice* choice = nullptr);

} // namespace jointscope
