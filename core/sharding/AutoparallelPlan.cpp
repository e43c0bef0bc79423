#include "sharding/AutoparallelPlan.h"

#include "io/JsonSupport.h"
#include "io/TraceLog.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace jointscope::sharding {

namespace {

using Json = json_support::Json;

constexpr std::string_view kSolutionArtifact = "autoparallel_solution";
constexpr std::string_view kOptimizerLogArtifact = "autoparallel_sharding_optimizer_log";
constexpr std::string_view kPlacementMark = "# placement=";

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

// Splits "A, B, C" at the top-level commas (placements nest parentheses: "S(0)R").
std::vector<std::string_view> splitTopLevel(std::string_view s) {
    std::vector<std::string_view> parts;
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '(' || s[i] == '[')
            ++depth;
        else if (s[i] == ')' || s[i] == ']')
            --depth;
        else if (s[i] == ',' && depth == 0) {
            parts.push_back(trim(s.substr(start, i - start)));
            start = i + 1;
        }
    }
    if (!trim(s.substr(start)).empty())
        parts.push_back(trim(s.substr(start)));
    return parts;
}

// "S(0)R" or "(S(0)R, RR)" -> the placements of each result; nullopt entries for "None".
std::vector<std::optional<Placements>> parseSpecs(std::string_view text) {
    text = trim(text);
    std::vector<std::optional<Placements>> specs;
    // A tuple is parenthesised and starts with '(' directly; a single spec starts with R, S, P or _.
    if (!text.empty() && text.front() == '(' && text.back() == ')') {
        for (std::string_view part : splitTopLevel(text.substr(1, text.size() - 2)))
            specs.push_back(parsePlacements(part));
    } else if (!text.empty()) {
        specs.push_back(parsePlacements(text));
    }
    return specs;
}

std::vector<Placements> knownSpecs(std::string_view text) {
    std::vector<Placements> out;
    for (auto& spec : parseSpecs(text))
        if (spec)
            out.push_back(std::move(*spec));
    return out;
}

double numberOr(const Json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string stringOr(const Json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Line and column of byte `offset` in `text`, counted from `firstLine`, with `column0` added to the column
// (the payload's leading tab).
SourceLocation locate(const std::string& file, std::string_view text, size_t offset, uint32_t firstLine,
                      uint32_t column0) {
    offset = std::min(offset, text.size());
    uint32_t line = firstLine;
    size_t lineStart = 0;
    for (size_t i = 0; i < offset; ++i)
        if (text[i] == '\n') {
            ++line;
            lineStart = i + 1;
        }
    return {file, line, static_cast<uint32_t>(offset - lineStart + 1 + column0)};
}

Expected<AutoparallelPlan> readSolutionJson(std::string_view text, const std::string& file,
                                            uint32_t firstLine, uint32_t column0) {
    if (size_t deep = json_support::findTooDeep(text, json_support::kMaxJsonDepth);
        deep != std::string_view::npos)
        return makeError(locate(file, text, deep, firstLine, column0),
                         "autoparallel solution JSON nests too deep");
    Json root;
    try {
        root = Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& e) {
        return makeError(locate(file, text, e.byte > 0 ? e.byte - 1 : 0, firstLine, column0),
                         std::string("autoparallel solution is not JSON: ") + e.what());
    }
    const SourceLocation top = locate(file, text, 0, firstLine, column0);
    if (!root.is_object() || !root.contains("nodes") || !root["nodes"].is_array())
        return makeError(top, "expected autoparallel's solution JSON: an object with \"mesh\", \"nodes\" and "
                              "\"summary\" (its autoparallel_solution artifact)");
    AutoparallelPlan plan;
    plan.source = std::string(kSolutionArtifact);
    if (auto mesh = root.find("mesh"); mesh != root.end() && mesh->is_object())
        if (auto shape = mesh->find("shape"); shape != mesh->end() && shape->is_array())
            for (const Json& s : *shape)
                if (s.is_number_integer())
                    plan.meshShape.push_back(s.get<int64_t>());
    for (const Json& entry : root["nodes"]) {
        if (!entry.is_object() || stringOr(entry, "op") == "output" || !entry.contains("placement"))
            continue;
        AutoparallelNode node;
        node.name = stringOr(entry, "name");
        node.outputs = knownSpecs(stringOr(entry, "placement"));
        node.computeCost = numberOr(entry, "compute_cost");
        node.transitionCost = numberOr(entry, "transition_cost");
        node.line = top.line;
        if (auto inputs = entry.find("inputs"); inputs != entry.end() && inputs->is_array())
            for (const Json& in : *inputs) {
                const std::string dst = in.is_object() ? stringOr(in, "dst_placement") : std::string();
                node.inputs.push_back(dst.empty() ? std::nullopt : parsePlacements(dst));
                if (in.is_object())
                    node.commCost += numberOr(in, "comm_cost");
            }
        if (node.name.empty())
            return makeError(top, "autoparallel solution: a node entry without a \"name\"");
        plan.nodes.push_back(std::move(node));
    }
    if (auto summary = root.find("summary"); summary != root.end() && summary->is_object()) {
        plan.total = numberOr(*summary, "total");
        plan.compute = numberOr(*summary, "compute");
        plan.comm = numberOr(*summary, "comm");
        plan.transition = numberOr(*summary, "transition");
    }
    return plan;
}

// The node a print_readable line assigns: "name: \"f32[4]\" = ..." / "name = ..." / "# name:  # placement=".
std::string_view assignedName(std::string_view line) {
    line = trim(line);
    if (line.substr(0, 2) == "# ")
        line.remove_prefix(2);
    size_t end = 0;
    while (end < line.size() && (std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '_'))
        ++end;
    return line.substr(0, end);
}

// "[(0.0, 7.0, 0), (9.3, 3.5, 1)]": per input (comm, compute, transition).
void addCosts(std::string_view list, AutoparallelNode& node) {
    list = trim(list);
    if (list.size() < 2 || list.front() != '[')
        return;
    for (std::string_view tuple : splitTopLevel(list.substr(1, list.find_last_of(']') - 1))) {
        if (tuple.size() < 2)
            continue;
        const std::vector<std::string_view> numbers = splitTopLevel(tuple.substr(1, tuple.size() - 2));
        double values[3] = {0, 0, 0};
        for (size_t i = 0; i < numbers.size() && i < 3; ++i)
            values[i] = std::strtod(std::string(numbers[i]).c_str(), nullptr); // "inf" too
        node.commCost += values[0];
        node.computeCost += values[1];
        node.transitionCost += values[2];
    }
}

// A total line at the end of the optimizer log: "total_cost: 2566.78", "  comm_cost: 400.78", ...
void readTotal(std::string_view line, AutoparallelPlan& plan) {
    line = trim(line);
    const size_t colon = line.find(": ");
    if (colon == std::string_view::npos)
        return;
    const std::string_view key = line.substr(0, colon);
    const double value = std::strtod(std::string(line.substr(colon + 2)).c_str(), nullptr);
    if (key == "total_cost")
        plan.total = value;
    else if (key == "comm_cost")
        plan.comm = value;
    else if (key == "compute_cost")
        plan.compute = value;
    else if (key == "transition_cost")
        plan.transition = value;
}

Expected<AutoparallelPlan> readOptimizerLog(std::string_view text, const std::string& file,
                                            uint32_t firstLine) {
    AutoparallelPlan plan;
    plan.source = std::string(kOptimizerLogArtifact);
    uint32_t lineNo = firstLine;
    for (size_t pos = 0; pos <= text.size(); ++lineNo) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos)
            end = text.size();
        const std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        const size_t mark = line.find(kPlacementMark);
        if (mark == std::string_view::npos) {
            readTotal(line, plan);
            continue;
        }
        std::string_view strategy = line.substr(mark + kPlacementMark.size());
        const size_t cost = strategy.find(", cost=");
        const std::string_view costs = cost == std::string_view::npos ? "" : strategy.substr(cost + 7);
        strategy = strategy.substr(0, cost);
        if (size_t order = strategy.find(" shard_order="); order != std::string_view::npos)
            strategy = strategy.substr(0, order);
        const size_t arrow = strategy.find(" -> ");
        AutoparallelNode node;
        node.name = std::string(assignedName(line.substr(0, mark)));
        node.line = lineNo;
        if (arrow == std::string_view::npos || node.name.empty())
            return makeError({file, lineNo, static_cast<uint32_t>(mark + 1)},
                             "expected '# placement=(INPUTS) -> OUTPUT' after a node of the graph");
        std::string_view inputs = trim(strategy.substr(0, arrow));
        if (inputs.size() >= 2 && inputs.front() == '(')
            inputs = inputs.substr(1, inputs.size() - 2);
        for (std::string_view in : splitTopLevel(inputs))
            node.inputs.push_back(parsePlacements(in));
        node.outputs = knownSpecs(strategy.substr(arrow + 4));
        addCosts(costs, node);
        plan.nodes.push_back(std::move(node));
    }
    if (plan.nodes.empty())
        return makeError({file, firstLine, 1},
                         "no '# placement=' annotations in autoparallel's optimizer log");
    return plan;
}

} // namespace

Expected<AutoparallelPlan> readAutoparallelPlan(std::string_view text, const std::string& fileName) {
    if (looksLikeTraceLog(text.substr(0, 4096))) {
        // Payload lines sit one tab to the right of the file's column.
        const std::vector<TraceArtifact> solutions = traceArtifacts(text, kSolutionArtifact);
        if (!solutions.empty())
            return readSolutionJson(solutions.back().payload, fileName, solutions.back().payloadLine, 1);
        const std::vector<TraceArtifact> logs = traceArtifacts(text, kOptimizerLogArtifact);
        if (!logs.empty())
            return readOptimizerLog(logs.back().payload, fileName, logs.back().payloadLine);
        return makeError({fileName, 1, 1}, "this TORCH_TRACE log has no autoparallel_solution or "
                                           "autoparallel_sharding_optimizer_log artifact (run autoparallel's "
                                           "optimize_placement with TORCH_TRACE set)");
    }
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && text[first] == '{')
        return readSolutionJson(text, fileName, 1, 0);
    return readOptimizerLog(text, fileName, 1);
}

Expected<AutoparallelPlan> loadAutoparallelPlan(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError({path, 0, 0}, "cannot open autoparallel plan");
    std::ostringstream text;
    text << in.rdbuf();
    return readAutoparallelPlan(text.str(), path);
}

namespace {

size_t alikeInputs(const Strategy& s, const AutoparallelNode& node) {
    size_t alike = 0;
    for (size_t k = 0; k < s.inputs.size() && k < node.inputs.size(); ++k)
        alike += node.inputs[k] && *node.inputs[k] == s.inputs[k];
    return alike;
}

size_t knownInputs(const AutoparallelNode& node) {
    return static_cast<size_t>(
        std::count_if(node.inputs.begin(), node.inputs.end(), [](const auto& p) { return p.has_value(); }));
}

bool sameOutputs(const Strategy& s, const AutoparallelNode& node) {
    const size_t n = std::min(s.outputs.size(), node.outputs.size());
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; ++i)
        if (!(s.outputs[i] == node.outputs[i]))
            return false;
    return true;
}

} // namespace

MappedPlan mapAutoparallelPlan(const Graph& graph, const ShardingProblem& problem,
                               const AutoparallelPlan& plan) {
    MappedPlan mapped;
    mapped.choice.assign(problem.nodes.size(), -1);
    mapped.output.assign(problem.nodes.size(), std::nullopt);
    std::vector<const AutoparallelNode*> byNode(problem.nodes.size(), nullptr);
    for (const AutoparallelNode& node : plan.nodes) {
        const std::optional<NodeId> id = graph.find(node.name);
        if (!id || *id >= problem.nodes.size()) {
            mapped.unknownNames.push_back(node.name);
            continue;
        }
        byNode[*id] = &node;
    }
    for (NodeId id = 0; id < problem.nodes.size(); ++id) {
        const StrategyList& options = problem.nodes[id].options;
        if (options.empty())
            continue;
        const AutoparallelNode* theirs = byNode[id];
        if (!theirs) {
            // Not in autoparallel's plan (it skips what it does not solve for): our replicated option.
            for (size_t o = 0; o < options.size() && mapped.choice[id] < 0; ++o)
                if (!options[o].outputs.empty() && allReplicate(options[o].outputs[0]))
                    mapped.choice[id] = static_cast<int32_t>(o);
            if (mapped.choice[id] < 0)
                mapped.choice[id] = 0;
            continue;
        }
        ++mapped.placed;
        if (!theirs->outputs.empty())
            mapped.output[id] = theirs->outputs[0];
        int32_t best = -1;
        size_t bestAlike = 0;
        for (size_t o = 0; o < options.size(); ++o) {
            if (!sameOutputs(options[o], *theirs))
                continue;
            const size_t alike = alikeInputs(options[o], *theirs);
            if (best < 0 || alike > bestAlike) {
                best = static_cast<int32_t>(o);
                bestAlike = alike;
            }
        }
        if (best >= 0) {
            if (bestAlike < knownInputs(*theirs))
                mapped.inputsDiffer.push_back(id);
            mapped.choice[id] = best;
            continue;
        }
        // No option of ours produces autoparallel's placement: the option with the most alike inputs.
        mapped.unmatched.push_back(id);
        best = 0;
        bestAlike = 0;
        for (size_t o = 0; o < options.size(); ++o)
            if (const size_t alike = alikeInputs(options[o], *theirs); alike > bestAlike) {
                best = static_cast<int32_t>(o);
                bestAlike = alike;
            }
        mapped.choice[id] = best;
    }
    return mapped;
}

std::vector<PlacementDifference> differingPlacements(const ShardingProblem& problem, const Plan& ours,
                                                     const MappedPlan& theirs) {
    std::vector<PlacementDifference> out;
    for (NodeId id = 0; id < problem.nodes.size() && id < ours.choice.size() && id < theirs.output.size();
         ++id) {
        if (ours.choice[id] < 0 || !theirs.output[id])
            continue;
        const Strategy& s = problem.nodes[id].options[ours.choice[id]];
        if (s.outputs.empty() || s.outputs[0] == *theirs.output[id])
            continue;
        out.push_back({id, s.outputs[0], *theirs.output[id]});
    }
    return out;
}

Expected<PlanComparison> compareWithAutoparallel(const Graph& graph, const ShardingSolution& solution,
                                                 AutoparallelPlan theirs, const std::string& planFile) {
    const ShardingProblem& problem = *solution.problem;
    if (!theirs.meshShape.empty() && theirs.meshShape != solution.mesh.shape) {
        auto shapeText = [](const std::vector<int64_t>& shape) {
            std::string text;
            for (int64_t s : shape)
                text += (text.empty() ? "" : "x") + std::to_string(s);
            return text;
        };
        return makeError({planFile, 0, 0}, "autoparallel solved for mesh " + shapeText(theirs.meshShape) +
                                               ", not " + shapeText(solution.mesh.shape));
    }
    PlanComparison c;
    c.mapped = mapAutoparallelPlan(graph, problem, theirs);
    if (c.mapped.placed == 0)
        return makeError({planFile, 0, 0}, "none of the " + std::to_string(theirs.nodes.size()) +
                                               " nodes of autoparallel's plan is in this graph (is it the "
                                               "joint graph autoparallel optimized?)");
    c.theirs = std::move(theirs);
    c.oursCost = solution.plan.cost;
    c.theirsCost = evaluatePlan(graph, problem, c.mapped.choice, *solution.model);
    c.differing = differingPlacements(problem, solution.plan, c.mapped);
    return c;
}

} // namespace jointscope::sharding
