// jointscope-cli diff: the node and edge differences between two graphs (two ranks, two compiles, a
// recompile), or where the ranks of a folder of per-rank logs diverge.
#include "Command.h"
#include "RankReport.h"

#include "partition/DecisionDiff.h"
#include "support/Format.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace jointscope::cli {
namespace {

using Json = nlohmann::ordered_json;

struct Side {
    std::optional<GraphFile> file;
    size_t index = 0;
    Graph graph;
};

// "FILE" or "FILE#SPEC" (SPEC as --graph takes it); a '#' that is part of an existing file name stays.
int loadSide(const std::string& argument, Side& side) {
    const auto [path, spec] = splitGraphReference(argument);
    Expected<GraphFile> file = GraphFile::open(path);
    if (!file)
        return inputError(file.error());
    std::optional<size_t> index = spec.empty() ? std::nullopt : file->select(spec);
    if (!spec.empty() && !index)
        return usageError(diffCommand(), "no graph '" + spec + "' in " + path + " (`jointscope-cli info " +
                                             path + "` lists them)");
    if (spec.empty() && file->graphs().size() != 1)
        return usageError(diffCommand(), path + " holds " + std::to_string(file->graphs().size()) +
                                             " graphs: choose one as " + path + "#INDEX or " + path +
                                             "#KIND@COMPILE_ID");
    side.index = index.value_or(0);
    Expected<Graph> graph = file->load(side.index);
    if (!graph)
        return inputError(graph.error());
    side.graph = graph.take();
    side.file.emplace(file.take());
    return kExitOk;
}

Json sideJson(const Side& side) {
    const GraphEntry& entry = side.file->graphs()[side.index];
    Json j{{"file", side.file->fileName()},
           {"index", side.index},
           {"title", entry.title()},
           {"nodes", side.graph.size()}};
    if (entry.rank >= 0)
        j["rank"] = entry.rank;
    return j;
}

void printDiffText(const GraphDiff& diff, const Graph& a, const Graph& b) {
    std::printf("%zu added, %zu removed, %zu changed (%zu renamed, %zu checkpoint tags), %zu edges changed\n",
                diff.added, diff.removed, diff.changed, diff.renamed, diff.checkpoint, diff.edges.size());
    for (const DiffEntry& entry : diff.entries)
        std::printf("  %s\n", entry.describe(a, b).c_str());
    for (const EdgeChange& edge : diff.edges) {
        const Graph& g = edge.added ? b : a;
        std::printf("  edge %s: %s -> %s\n", edge.added ? "added" : "removed",
                    g.node(edge.producer).name.c_str(), g.node(edge.consumer).name.c_str());
    }
}

// Two decision documents (partition --json, the GUI's export): what moved between saved and recomputed.
std::optional<int> diffDecisionFiles(const ParsedArgs& args) {
    std::vector<partition::DecisionDocument> docs;
    for (const std::string& path : args.positional) {
        std::ifstream in(path, std::ios::binary);
        std::string head(4096, '\0');
        in.read(head.data(), static_cast<std::streamsize>(head.size()));
        head.resize(static_cast<size_t>(in.gcount()));
        if (!partition::looksLikeDecision(head))
            return docs.empty() ? std::nullopt
                                : std::optional<int>(usageError(
                                      diffCommand(), path + " is not a decision like " + docs[0].file +
                                                         ": diff two decisions or two graphs"));
        std::ostringstream text;
        text << head << in.rdbuf();
        Expected<partition::DecisionDocument> doc = partition::readDecisionDocument(text.str(), path);
        if (!doc)
            return inputError(doc.error());
        docs.push_back(doc.take());
    }
    const partition::DecisionDocument& a = docs[0];
    const partition::DecisionDocument& b = docs[1];
    const partition::DecisionDiff diff = partition::diffDecisions(a, b);
    auto sideSummary = [](const partition::DecisionDocument& d) {
        Json j{{"file", d.file},
               {"graph", d.graph},
               {"decided_by", d.decidedBy},
               {"saved", d.saved.size()},
               {"saved_sym", d.savedSym.size()},
               {"recomputed", d.recomputed.size()}};
        j["memory_budget"] = d.memoryBudget ? Json(*d.memoryBudget) : Json(nullptr);
        j["saved_bytes"] = d.savedBytes ? Json(*d.savedBytes) : Json(nullptr);
        return j;
    };
    const std::vector<std::pair<const char*, const std::vector<std::string>*>> lists = {
        {"saved_only_a", &diff.savedOnlyA},           {"saved_only_b", &diff.savedOnlyB},
        {"saved_sym_only_a", &diff.savedSymOnlyA},    {"saved_sym_only_b", &diff.savedSymOnlyB},
        {"recomputed_only_a", &diff.recomputedOnlyA}, {"recomputed_only_b", &diff.recomputedOnlyB}};
    if (args.has("--json")) {
        Json out{{"a", sideSummary(a)},
                 {"b", sideSummary(b)},
                 {"same_graph", diff.sameGraph},
                 {"identical", diff.identical()},
                 {"order_differs", diff.orderDiffers}};
        for (const auto& [key, names] : lists)
            out[key] = *names;
        std::printf("%s\n", out.dump(2).c_str());
        return kExitOk;
    }
    for (const partition::DecisionDocument* d : {&a, &b}) {
        char budgetText[32] = "";
        if (d->memoryBudget)
            std::snprintf(budgetText, sizeof budgetText, ", budget %g", *d->memoryBudget);
        const std::string budget = budgetText;
        std::string bytes = d->savedBytes ? " (" + formatBytes(uint64_t(*d->savedBytes)) + ")" : "";
        std::printf("%s: %s: graph '%s'%s, %s: %zu saved%s, %zu recomputed\n", d == &a ? "A" : "B",
                    d->file.c_str(), d->graph.c_str(), budget.c_str(),
                    d->decidedBy.empty() ? "-" : d->decidedBy.c_str(), d->saved.size(), bytes.c_str(),
                    d->recomputed.size());
    }
    if (!diff.sameGraph)
        std::printf("note: the decisions name different graphs ('%s', '%s')\n", a.graph.c_str(),
                    b.graph.c_str());
    if (diff.identical()) {
        std::printf("the same decision\n");
        return kExitOk;
    }
    if (diff.orderDiffers)
        std::printf("the same saved values in another order (the forward returns them so)\n");
    for (const auto& [key, names] : lists) {
        if (names->empty())
            continue;
        const bool inA = std::string_view(key).ends_with("_a");
        std::string title(key);
        title = title.substr(0, title.find("_only")); // "saved_sym_only_a" -> "saved sym"
        std::replace(title.begin(), title.end(), '_', ' ');
        std::printf("%s only in %s (%zu):\n", title.c_str(), inA ? "A" : "B", names->size());
        const partition::DecisionDocument& side = inA ? a : b;
        for (const std::string& name : *names) {
            const std::string what = side.describe(name);
            std::printf("  %s%s%s\n", name.c_str(), what.empty() ? "" : "  ", what.c_str());
        }
    }
    return kExitOk;
}

int diffTwo(const ParsedArgs& args) {
    if (std::optional<int> code = diffDecisionFiles(args))
        return *code;
    Side a, b;
    if (int code = loadSide(args.positional[0], a); code != kExitOk)
        return code;
    if (int code = loadSide(args.positional[1], b); code != kExitOk)
        return code;
    const GraphDiff diff = diffGraphs(a.graph, b.graph);
    if (args.has("--json")) {
        Json out{{"a", sideJson(a)}, {"b", sideJson(b)}};
        out.update(graphDiffJson(diff, a.graph, b.graph));
        std::printf("%s\n", out.dump(2).c_str());
        return kExitOk;
    }
    for (const Side* side : {&a, &b})
        std::printf("%s: %s %s (%zu nodes)\n", side == &a ? "A" : "B", side->file->fileName().c_str(),
                    side->file->graphs()[side->index].title().c_str(), side->graph.size());
    printDiffText(diff, a.graph, b.graph);
    return kExitOk;
}

// One folder: the divergence summary, and each graph that differs diffed against the largest group's.
int diffRanks(const ParsedArgs& args) {
    Expected<GraphFile> file = GraphFile::open(args.positional[0]);
    if (!file)
        return inputError(file.error());
    if (file->ranks().size() < 2)
        return usageError(diffCommand(), args.positional[0] + " is not a folder of two or more per-rank "
                                                              "TORCH_TRACE logs: give two graphs to diff");
    const RankDivergence divergence = summarizeRanks(*file);
    Json out = rankDivergenceJson(divergence);
    const bool asJson = args.has("--json");
    if (!asJson)
        for (const std::string& line : divergence.lines())
            std::printf("%s\n", line.c_str());
    for (size_t s = 0; s < divergence.graphs.size(); ++s) {
        const auto& groups = divergence.graphs[s].groups;
        if (groups[0].digest.empty())
            continue;
        Expected<Graph> base = file->load(groups[0].entries[0]);
        if (!base)
            return inputError(base.error());
        for (size_t g = 1; g < groups.size(); ++g) {
            if (groups[g].digest.empty())
                continue;
            Expected<Graph> other = file->load(groups[g].entries[0]);
            if (!other)
                return inputError(other.error());
            const GraphDiff diff = diffGraphs(*base, *other);
            if (asJson) {
                Json d = graphDiffJson(diff, *base, *other);
                d["a_rank"] = groups[0].ranks[0];
                d["b_rank"] = groups[g].ranks[0];
                out["graphs"][s]["diffs"].push_back(std::move(d));
                continue;
            }
            std::printf("\n[%s] %s, rank %d -> rank %d: ", divergence.graphs[s].compileId.c_str(),
                        divergence.graphs[s].kind.c_str(), groups[0].ranks[0], groups[g].ranks[0]);
            printDiffText(diff, *base, *other);
        }
    }
    if (asJson)
        std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
}

int runDiff(const ParsedArgs& args) {
    return args.positional.size() == 1 ? diffRanks(args) : diffTwo(args);
}

} // namespace

Json rankDivergenceJson(const RankDivergence& divergence) {
    Json ranks = Json::array();
    for (const auto& info : divergence.ranks)
        ranks.push_back(
            {{"rank", info.rank}, {"file", info.file}, {"graphs", info.graphs}, {"compiles", info.compiles}});
    auto groupsJson = [](const std::vector<RankGroup>& groups, bool graphs) {
        Json out = Json::array();
        for (const RankGroup& g : groups) {
            Json j{{"ranks", g.ranks}};
            if (graphs) {
                j["digest"] = g.digest.empty() ? Json(nullptr) : Json(g.digest);
                j["entries"] = Json::array();
                for (size_t e : g.entries)
                    j["entries"].push_back(e == SIZE_MAX ? Json(nullptr) : Json(e));
            } else {
                j["ops"] = g.ops;
            }
            out.push_back(std::move(j));
        }
        return out;
    };
    Json graphs = Json::array();
    for (const auto& split : divergence.graphs)
        graphs.push_back({{"compile_id", split.compileId},
                          {"kind", split.kind},
                          {"groups", groupsJson(split.groups, true)}});
    Json collectives = Json::array();
    for (const auto& split : divergence.collectives)
        collectives.push_back({{"compile_id", split.compileId}, {"groups", groupsJson(split.groups, false)}});
    return Json{{"ranks", std::move(ranks)},
                {"graph_counts_differ", divergence.graphCountsDiffer},
                {"compared_graphs", divergence.comparedGraphs},
                {"graphs", std::move(graphs)},
                {"collectives", std::move(collectives)},
                {"diverges", divergence.diverges()}};
}

Json graphDiffJson(const GraphDiff& diff, const Graph& a, const Graph& b) {
    auto name = [](const Graph& g, NodeId id) {
        return id == kNoNode ? Json(nullptr) : Json(g.node(id).name);
    };
    Json nodes = Json::array();
    for (const DiffEntry& entry : diff.entries) {
        Json changes = Json::array();
        for (const NodeChange& c : entry.changes)
            changes.push_back({{"field", c.field}, {"before", c.before}, {"after", c.after}});
        nodes.push_back({{"kind", diffKindName(entry.kind)},
                         {"a", name(a, entry.a)},
                         {"b", name(b, entry.b)},
                         {"changes", std::move(changes)}});
    }
    Json edges = Json::array();
    for (const EdgeChange& edge : diff.edges) {
        const Graph& g = edge.added ? b : a;
        edges.push_back({{"kind", edge.added ? "added" : "removed"},
                         {"producer", g.node(edge.producer).name},
                         {"consumer", g.node(edge.consumer).name}});
    }
    return Json{{"identical", diff.identical()}, {"added", diff.added},      {"removed", diff.removed},
                {"changed", diff.changed},       {"renamed", diff.renamed},  {"checkpoint", diff.checkpoint},
                {"nodes", std::move(nodes)},     {"edges", std::move(edges)}};
}

const Command& diffCommand() {
    static const Command command{
        "diff",
        {"A B", "DIR"},
        "Diff two graphs (A, B: FILE or FILE#GRAPH, GRAPH as --graph takes it, e.g. log#aot_joint_graph@1/0, "
        "dir#rank1:3): added, removed, changed nodes and edges; or two partition decisions (decision.json, "
        "what "
        "partition --json prints): saved and recomputed only in one; or where the per-rank logs of a folder "
        "diverge.",
        {jsonOption()},
        1,
        2,
        &runDiff,
    };
    return command;
}

} // namespace jointscope::cli
