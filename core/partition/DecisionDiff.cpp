#include "partition/DecisionDiff.h"

#include "io/JsonSupport.h"
#include "io/ReadFile.h"
#include "partition/DecisionJson.h"

#include <algorithm>
#include <unordered_set>

namespace jointscope::partition {
namespace {

using Json = json_support::Json;

Expected<std::vector<std::string>> namesOf(const Json& doc, const char* key, const std::string& fileName,
                                           bool required) {
    std::vector<std::string> names;
    auto it = doc.find(key);
    if (it == doc.end() || it->is_null()) {
        if (required)
            return makeError({fileName, 1, 1},
                             std::string("a decision lists its \"") + key + "\" node names");
        return names;
    }
    if (!it->is_array())
        return makeError({fileName, 1, 1}, std::string("\"") + key + "\" must be a list of node names");
    for (const Json& name : *it) {
        if (!name.is_string())
            return makeError({fileName, 1, 1}, std::string("\"") + key + "\" must be a list of node names");
        names.push_back(name.get<std::string>());
    }
    return names;
}

// "torch.ops.aten.addmm.default torch.float32[8,1024]" of a node's identity (nodeIdentityJson).
std::string describeIdentity(const Json& identity) {
    std::string text = identity.value("target", std::string());
    const std::string dtype = identity.value("dtype", std::string());
    const Json shape = identity.value("shape", Json());
    if (!dtype.empty() || shape.is_array())
        text += " " + dtype + (shape.is_array() ? shape.dump() : std::string());
    return text;
}

std::vector<std::string> nodeNames(const Graph& graph, const std::vector<NodeId>& ids) {
    std::vector<std::string> names;
    names.reserve(ids.size());
    for (NodeId id : ids)
        names.push_back(graph.node(id).name);
    return names;
}

} // namespace

std::string DecisionDocument::describe(const std::string& node) const {
    auto it = nodes.find(node);
    return it == nodes.end() ? std::string() : it->second;
}

DecisionDocument decisionDocumentOf(const Partition& p, std::string file) {
    DecisionDocument d;
    d.file = std::move(file);
    d.graph = p.graph.name;
    d.decidedBy = std::string(escalationName(p.escalation));
    d.memoryBudget = p.memoryBudget;
    d.savedBytes = int64_t(p.savedBytes);
    d.activationBytes = int64_t(p.activationBytes);
    d.saved = nodeNames(p.graph, p.saved);
    d.savedSym = nodeNames(p.graph, p.savedSym);
    d.recomputed = nodeNames(p.graph, p.recomputed);
    for (const auto* list : {&p.saved, &p.savedSym, &p.recomputed})
        for (NodeId id : *list)
            d.nodes.emplace(p.graph.node(id).name, describeIdentity(nodeIdentityJson(p.graph.node(id))));
    return d;
}

bool looksLikeDecision(std::string_view head) {
    const size_t key = head.find("\"format\"");
    return key != std::string_view::npos &&
           head.find("\"jointscope-decision\"", key) != std::string_view::npos;
}

Expected<DecisionDocument> readDecisionDocument(std::string_view text, const std::string& fileName) {
    Expected<Json> parsed = json_support::parseLocated(text, fileName);
    if (!parsed)
        return parsed.error();
    const Json& doc = *parsed;
    if (!doc.is_object() || doc.value("format", Json()) != "jointscope-decision")
        return makeError(
            {fileName, 1, 1},
            "expected a decision document ({\"format\": \"jointscope-decision\", \"saved\": [...]}, "
            "what `jointscope-cli partition --json` prints)");
    DecisionDocument d;
    d.file = fileName;
    d.graph = doc.value("graph", Json("")).is_string() ? doc.value("graph", std::string()) : std::string();
    if (auto it = doc.find("decided_by"); it != doc.end() && it->is_string())
        d.decidedBy = it->get<std::string>();
    if (auto it = doc.find("memory_budget"); it != doc.end() && it->is_number())
        d.memoryBudget = it->get<double>();
    if (auto it = doc.find("saved_bytes"); it != doc.end() && it->is_number_integer())
        d.savedBytes = it->get<int64_t>();
    if (auto it = doc.find("activation_bytes"); it != doc.end() && it->is_number_integer())
        d.activationBytes = it->get<int64_t>();
    for (auto [key, out, required] :
         {std::tuple{"saved", &d.saved, true}, std::tuple{"saved_sym", &d.savedSym, false},
          std::tuple{"recomputed", &d.recomputed, false}}) {
        Expected<std::vector<std::string>> names = namesOf(doc, key, fileName, required);
        if (!names)
            return names.error();
        *out = names.take();
    }
    if (auto it = doc.find("nodes"); it != doc.end() && it->is_object())
        for (auto node = it->begin(); node != it->end(); ++node) {
            if (node->is_object())
                d.nodes.emplace(node.key(), describeIdentity(*node));
        }
    return d;
}

Expected<DecisionDocument> readDecisionFile(const std::string& path) {
    Expected<std::string> text = readDocumentFile(path, "decision", uint64_t(256) << 20);
    if (!text)
        return text.error();
    return readDecisionDocument(*text, path);
}

std::vector<std::string> namesMissingFrom(const std::vector<std::string>& from,
                                          const std::vector<std::string>& other) {
    const std::unordered_set<std::string> drop(other.begin(), other.end());
    std::vector<std::string> out;
    for (const std::string& name : from)
        if (!drop.count(name))
            out.push_back(name);
    return out;
}

DecisionDiff diffDecisions(const DecisionDocument& a, const DecisionDocument& b) {
    DecisionDiff diff;
    diff.sameGraph = a.graph == b.graph;
    diff.savedOnlyA = namesMissingFrom(a.saved, b.saved);
    diff.savedOnlyB = namesMissingFrom(b.saved, a.saved);
    diff.savedSymOnlyA = namesMissingFrom(a.savedSym, b.savedSym);
    diff.savedSymOnlyB = namesMissingFrom(b.savedSym, a.savedSym);
    diff.recomputedOnlyA = namesMissingFrom(a.recomputed, b.recomputed);
    diff.recomputedOnlyB = namesMissingFrom(b.recomputed, a.recomputed);
    diff.orderDiffers = diff.savedOnlyA.empty() && diff.savedOnlyB.empty() && a.saved != b.saved;
    return diff;
}

} // namespace jointscope::partition
