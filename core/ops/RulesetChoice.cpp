#include "ops/RulesetChoice.h"

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <utility>

namespace jointscope {
namespace {

using Version = std::pair<int, int>;

std::optional<Version> parseVersion(std::string_view text) {
    int major = 0, minor = 0;
    if (std::sscanf(std::string(text).c_str(), "%d.%d", &major, &minor) != 2)
        return std::nullopt;
    return Version{major, minor};
}

const std::string* attribute(const Graph& graph, std::string_view key) {
    for (const auto& [k, v] : graph.attributes)
        if (k == key)
            return &v;
    return nullptr;
}

// The built-in ruleset of the same major version with the closest minor; across majors, the closest major.
std::string nearestRuleset(Version wanted) {
    std::string best;
    long bestDistance = std::numeric_limits<long>::max();
    for (const BuiltinRuleset& r : builtinRulesets()) {
        const std::optional<Version> v = parseVersion(r.name.substr(6));
        if (!v)
            continue;
        const long distance = std::labs(long(v->first - wanted.first)) * 1000 + std::labs(long(v->second - wanted.second));
        if (distance < bestDistance) {
            bestDistance = distance;
            best = std::string(r.name);
        }
    }
    return best;
}

std::string newestOfMajor(int major) {
    std::string newest;
    for (const BuiltinRuleset& r : builtinRulesets())
        if (std::optional<Version> v = parseVersion(r.name.substr(6)); v && v->first == major)
            newest = std::string(r.name);
    return newest;
}

bool carriesTensorTypes(const Graph& graph) {
    for (const Node& node : graph.nodes())
        if (node.op == NodeOp::CallFunction && node.outputKind != OutputKind::Unknown)
            return true;
    return false;
}

} // namespace

RulesetChoice chooseRuleset(const Graph& graph) {
    if (const std::string* version = attribute(graph, "torch_version"))
        if (const std::optional<Version> v = parseVersion(*version)) {
            const std::string name = nearestRuleset(*v);
            return {name, "torch " + *version + " recorded in the graph: nearest ruleset " + name};
        }
    const std::string torch2 = newestOfMajor(2);
    if (attribute(graph, "compile_id"))
        return {torch2, "a TORCH_TRACE graph (torch 2.x): ruleset " + torch2};
    if (carriesTensorTypes(graph))
        return {torch2, "no torch version recorded; typed FX text is torch 2.x's: ruleset " + torch2};
    const std::string torch1 = newestOfMajor(1);
    return {torch1, "no torch version recorded; FX text without tensor types is torch 1.x's: ruleset " + torch1};
}

RulesetChoice resolveRuleset(std::string_view requested, const Graph& graph) {
    if (requested.empty() || requested == "auto")
        return chooseRuleset(graph);
    return {std::string(requested), "ruleset " + std::string(requested) + " as asked"};
}

Expected<Ruleset> loadRulesetFor(std::string_view requested, const Graph& graph, RulesetChoice* choice) {
    RulesetChoice chosen = resolveRuleset(requested, graph);
    Expected<Ruleset> rules = loadRuleset(chosen.name);
    if (choice)
        *choice = std::move(chosen);
    return rules;
}

} // namespace jointscope
