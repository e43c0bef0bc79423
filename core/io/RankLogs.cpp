#include "io/RankLogs.h"

#include "io/Md5.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

namespace jointscope {
namespace {

// Splits `ranks` (each with its value) into groups of equal values, the largest group first (ties: the
// group of the lowest rank first, as the ranks come in order).
template <typename V, typename Fill>
std::vector<RankGroup> groupRanks(const std::vector<std::pair<int32_t, V>>& values, Fill fill) {
    std::vector<std::pair<V, RankGroup>> groups;
    for (const auto& [rank, value] : values) {
        const V& v = value; // clang 14 cannot capture structured bindings
        auto it = std::find_if(groups.begin(), groups.end(), [&v](const auto& g) { return g.first == v; });
        if (it == groups.end()) {
            groups.push_back({value, RankGroup{}});
            it = groups.end() - 1;
        }
        it->second.ranks.push_back(rank);
        fill(it->second, value);
    }
    std::stable_sort(groups.begin(), groups.end(), [](const auto& x, const auto& y) {
        return x.second.ranks.size() > y.second.ranks.size();
    });
    std::vector<RankGroup> out;
    for (auto& g : groups)
        out.push_back(std::move(g.second));
    return out;
}

// The md5 of a graph's text: taken at index time for logs, else hashed here.
std::string digestOf(const GraphEntry& entry) {
    return entry.digest ? entry.digestHex() : md5Hex(entry.payload);
}

std::string groupsText(const std::vector<RankGroup>& groups, bool graphs) {
    std::string text;
    for (const RankGroup& g : groups) {
        text += (text.empty() ? "" : " | ") + std::string(g.ranks.size() == 1 ? "rank " : "ranks ") +
                rankListText(g.ranks);
        if (graphs && g.digest.empty())
            text += " (missing)";
        if (!graphs)
            text += " (" + std::to_string(g.ops.size()) + " collectives)";
    }
    return text;
}

std::string shortOp(std::string_view op) {
    for (std::string_view prefix :
         {"torch.ops._c10d_functional.", "torch.ops.c10d_functional.", "torch.ops."})
        if (op.starts_with(prefix))
            return std::string(op.substr(prefix.size()));
    return std::string(op);
}

} // namespace

std::optional<int32_t> rankFromFileName(std::string_view name) {
    for (size_t at = name.find("rank"); at != std::string_view::npos; at = name.find("rank", at + 1)) {
        size_t i = at + 4;
        if (i < name.size() && (name[i] == '_' || name[i] == '-'))
            ++i;
        size_t end = i;
        while (end < name.size() && end - i < 9 && std::isdigit(static_cast<unsigned char>(name[end])))
            ++end;
        if (end > i && (end == name.size() || !std::isdigit(static_cast<unsigned char>(name[end]))))
            return static_cast<int32_t>(std::stol(std::string(name.substr(i, end - i))));
    }
    return std::nullopt;
}

std::string rankListText(const std::vector<int32_t>& ranks) {
    std::string text;
    for (size_t i = 0; i < ranks.size();) {
        size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
            ++j;
        text += (text.empty() ? "" : ", ") + std::to_string(ranks[i]);
        if (j > i)
            text += (j == i + 1 ? ", " : "-") + std::to_string(ranks[j]);
        i = j + 1;
    }
    return text;
}

RankDivergence summarizeRanks(const GraphFile& file) {
    RankDivergence out;
    for (const RankLog& log : file.ranks()) {
        std::set<std::string> compiles;
        for (const GraphEntry& entry : file.graphs())
            if (entry.rank == log.rank)
                compiles.insert(entry.compileId);
        out.ranks.push_back({log.rank, log.file, log.graphs, compiles.size()});
    }
    if (out.ranks.size() < 2)
        return out;
    for (const auto& info : out.ranks)
        out.graphCountsDiffer = out.graphCountsDiffer || info.graphs != out.ranks.front().graphs;

    // (compile id, kind, n-th of them on its rank) -> per rank: entry index.
    using Key = std::tuple<std::string, std::string, size_t>;
    std::vector<Key> order;
    std::map<Key, std::map<int32_t, size_t>> byKey;
    std::map<std::tuple<int32_t, std::string, std::string>, size_t> seen;
    for (const GraphEntry& entry : file.graphs()) {
        const size_t nth = seen[{entry.rank, entry.compileId, entry.kind}]++;
        Key key{entry.compileId, entry.kind, nth};
        auto [it, fresh] = byKey.try_emplace(key);
        if (fresh)
            order.push_back(key);
        it->second[entry.rank] = entry.index;
    }
    out.comparedGraphs = order.size();
    for (const Key& key : order) {
        std::vector<std::pair<int32_t, std::pair<std::string, size_t>>> values;
        for (const auto& info : out.ranks) {
            const auto& perRank = byKey[key];
            auto it = perRank.find(info.rank);
            values.push_back({info.rank, it == perRank.end()
                                             ? std::pair<std::string, size_t>{"", SIZE_MAX}
                                             : std::pair<std::string, size_t>{
                                                   digestOf(file.graphs()[it->second]), it->second}});
        }
        std::vector<std::pair<int32_t, std::string>> digests;
        for (const auto& [rank, value] : values)
            digests.push_back({rank, value.first});
        std::vector<RankGroup> groups =
            groupRanks(digests, [](RankGroup& g, const std::string& d) { g.digest = d; });
        if (groups.size() < 2)
            continue;
        for (RankGroup& g : groups)
            for (int32_t rank : g.ranks)
                for (const auto& [r, value] : values)
                    if (r == rank)
                        g.entries.push_back(value.second);
        out.graphs.push_back({std::get<0>(key), std::get<1>(key), std::move(groups)});
    }

    std::vector<std::string> compileIds;
    for (const CollectiveSchedule& s : file.collectives())
        if (std::find(compileIds.begin(), compileIds.end(), s.compileId) == compileIds.end())
            compileIds.push_back(s.compileId);
    for (const std::string& id : compileIds) {
        std::vector<std::pair<int32_t, std::vector<std::string>>> sequences;
        for (const auto& info : out.ranks) {
            std::vector<std::string> ops;
            for (const CollectiveSchedule& s : file.collectives())
                if (s.rank == info.rank && s.compileId == id)
                    ops.insert(ops.end(), s.ops.begin(), s.ops.end());
            sequences.push_back({info.rank, std::move(ops)});
        }
        std::vector<RankGroup> groups =
            groupRanks(sequences, [](RankGroup& g, const std::vector<std::string>& ops) { g.ops = ops; });
        if (groups.size() > 1)
            out.collectives.push_back({id, std::move(groups)});
    }
    return out;
}

std::vector<std::string> RankDivergence::lines() const {
    std::vector<std::string> out;
    std::string counts;
    for (const RankInfo& info : ranks)
        counts += (counts.empty() ? "" : ", ") +
                  ("rank " + std::to_string(info.rank) + ": " + std::to_string(info.graphs) + " graphs in " +
                   std::to_string(info.compiles) + " compiles");
    out.push_back((graphCountsDiffer ? "graph counts differ: " : "graph counts agree: ") + counts);
    if (ranks.size() < 2)
        return out;
    out.push_back(std::to_string(graphs.size()) + " of " + std::to_string(comparedGraphs) +
                  " graphs differ across ranks" + (graphs.empty() ? "" : ":"));
    for (const GraphSplit& split : graphs)
        out.push_back("  [" + split.compileId + "] " + split.kind + ": " + groupsText(split.groups, true));
    out.push_back(std::to_string(collectives.size()) + " compiles schedule different collectives" +
                  (collectives.empty() ? "" : ":"));
    for (const CollectiveSplit& split : collectives) {
        out.push_back("  [" + split.compileId + "] " + groupsText(split.groups, false));
        for (const RankGroup& g : split.groups) {
            std::string ops;
            for (const std::string& op : g.ops)
                ops += (ops.empty() ? "" : ", ") + shortOp(op);
            out.push_back("    " + std::string(g.ranks.size() == 1 ? "rank " : "ranks ") +
                          rankListText(g.ranks) + ": " + (ops.empty() ? "none" : ops));
        }
    }
    return out;
}

} // namespace jointscope
