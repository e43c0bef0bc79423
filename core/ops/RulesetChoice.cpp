#include "ops/RulesetChoice.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

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

// A ruleset torch-X.Y describes torch X.Y and the releases after the previous ruleset (torch-2.12
// covers 2.12, torch-2.8 covers 2.8 and older 2.x): the oldest built-in ruleset of the same major at or
// after the recorded version; past the newest, the newest of that major; for a major without rulesets, the
// closest one.
std::string coveringRuleset(Version wanted) {
    std::vector<std::pair<Version, std::string>> known;
    for (const BuiltinRuleset& r : builtinRulesets()) // sorted by version
        if (const std::optional<Version> v = parseVersion(r.name.substr(6)))
            known.emplace_back(*v, std::string(r.name));
    if (known.empty())
        return {};
    const std::pair<Version, std::string>* sameMajor = nullptr;
    for (const auto& k : known) {
        if (k.first.first != wanted.first)
            continue;
        sameMajor = &k;
        if (k.first >= wanted)
            return k.second;
    }
    if (sameMajor)
        return sameMajor->second; // newer than every ruleset of its major
    const bool newer = wanted > known.back().first;
    return newer ? known.back().second : known.front().second;
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
            const std::string name = coveringRuleset(*v);
            return {name, "torch " + *version + " recorded in the graph: ruleset " + name};
        }
    if (const std::string* bound = attribute(graph, "torch_version_at_most"))
        if (const std::optional<Version> v = parseVersion(*bound)) {
            const std::string name = coveringRuleset(*v);
            return {name, "no torch version recorded; compilation_metrics of this form (no pytorch_version) "
                          "come from torch " +
                              *bound + " or older: ruleset " + name};
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
