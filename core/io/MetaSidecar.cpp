// torch 1.13 adapters: joint.meta.json (per-node tensor metadata) and reference.json (torch's own decisions).
#include "io/JsonFormat.h"

#include "io/GraphCheck.h"
#include "io/JsonSupport.h"

#include <limits>

namespace jointscope {
namespace {

using json_support::Json;

void setAttribute(Graph& graph, const std::string& key, std::string value) {
    for (auto& [k, v] : graph.attributes) {
        if (k == key) {
            v = std::move(value);
            return;
        }
    }
    graph.attributes.emplace_back(key, std::move(value));
}

bool isIntArray(const Json& j) {
    if (!j.is_array())
        return false;
    for (const Json& item : j)
        if (!item.is_number_integer() ||
            (item.is_number_unsigned() &&
             item.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
            return false;
    return true;
}

std::vector<SymInt> dims(const Json& j) {
    std::vector<SymInt> out;
    out.reserve(j.size());
    for (const Json& item : j)
        out.push_back(SymInt{item.get<int64_t>(), {}});
    return out;
}

std::string stringField(const Json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

} // namespace

std::optional<Diagnostic> applyMetaSidecar(Graph& graph, std::string_view text, const std::string& fileName) {
    Expected<Json> parsed = json_support::parseLocated(text, fileName);
    if (!parsed)
        return parsed.error();
    const Json& root = *parsed;
    auto errorAt = [&](const Json* where, std::string message) {
        return makeError(json_support::locateObject(text, root, where, fileName), std::move(message));
    };
    if (!root.is_object())
        return errorAt(nullptr,
                       "meta sidecar: expected an object {\"torch\", \"num_fwd_outputs\", \"nodes\"}");
    auto nodes = root.find("nodes");
    if (nodes == root.end() || !nodes->is_array())
        return errorAt(&root, "meta sidecar: missing \"nodes\" array");

    // Validate everything before touching the graph, so a bad sidecar leaves it as it was.
    struct Update {
        NodeId id;
        TensorMeta tensor;
    };
    std::vector<Update> updates;
    for (const Json& entry : *nodes) {
        if (!entry.is_object())
            return errorAt(&root, "meta sidecar: every entry of \"nodes\" must be an object");
        const std::string name = stringField(entry, "name");
        if (name.empty())
            return errorAt(&entry, "meta sidecar: node without \"name\"");
        std::optional<NodeId> id = graph.find(name);
        if (!id)
            return errorAt(&entry, "meta sidecar: node '" + name + "' is not in the graph");
        const std::string op = stringField(entry, "op");
        if (!op.empty() && op != nodeOpName(graph.node(*id).op))
            return errorAt(&entry, "meta sidecar: node '" + name + "': op is '" + op + "' here but '" +
                                       std::string(nodeOpName(graph.node(*id).op)) + "' in the graph");
        auto shape = entry.find("shape");
        if (shape == entry.end() || shape->is_null())
            continue; // multi-output nodes carry no tensor_meta: they stay unknown
        if (!isIntArray(*shape))
            return errorAt(&entry,
                           "meta sidecar: node '" + name + "': shape: expected an array of int64 integers");
        TensorMeta tensor;
        tensor.sizes = dims(*shape);
        const std::string dtype = stringField(entry, "dtype");
        std::optional<DType> parsedDType = parseDType(dtype);
        if (!parsedDType)
            return errorAt(&entry, "meta sidecar: node '" + name + "': dtype: unknown dtype '" + dtype + "'");
        tensor.dtype = *parsedDType;
        if (auto stride = entry.find("stride"); stride != entry.end() && !stride->is_null()) {
            if (!isIntArray(*stride))
                return errorAt(&entry,
                               "meta sidecar: node '" + name + "': stride: expected an array of integers");
            tensor.strides = dims(*stride);
        }
        if (std::optional<TensorMetaIssue> issue = checkTensorMeta(tensor))
            return errorAt(&entry, "meta sidecar: node '" + name +
                                       "': " + (issue->stride ? "stride" : "shape") + ": " + issue->message);
        updates.push_back(Update{*id, std::move(tensor)});
    }
    std::optional<int64_t> numFwdOutputs;
    if (auto n = root.find("num_fwd_outputs"); n != root.end() && !n->is_null()) {
        if (!n->is_number_integer())
            return errorAt(&root, "meta sidecar: num_fwd_outputs: expected an integer");
        numFwdOutputs = n->get<int64_t>();
    }

    for (Update& u : updates) {
        Node& node = graph.node(u.id);
        node.outputKind = OutputKind::Tensor;
        node.outputs = {std::move(u.tensor)};
    }
    inferTupleOutputs(graph);
    if (numFwdOutputs)
        graph.numFwdOutputs = numFwdOutputs;
    if (const std::string torch = stringField(root, "torch"); !torch.empty())
        setAttribute(graph, "torch_version", torch);
    return std::nullopt;
}

std::optional<Diagnostic> applyReferenceDecisions(Graph& graph, std::string_view text,
                                                  const std::string& fileName) {
    Expected<Json> parsed = json_support::parseLocated(text, fileName);
    if (!parsed)
        return parsed.error();
    const Json& root = *parsed;
    auto errorAt = [&](std::string message) {
        return makeError(json_support::locateObject(text, root, &root, fileName), std::move(message));
    };
    if (!root.is_object())
        return errorAt("reference: expected an object with \"min_cut_saved\" / \"default_partition_saved\"");
    const std::string torch = stringField(root, "torch");
    const std::string torchSuffix = torch.empty() ? std::string() : " (torch " + torch + ")";

    std::vector<PartitionDecision> decisions;
    auto readSaved = [&](const char* key, std::vector<std::string>& saved) -> std::optional<Diagnostic> {
        const Json& list = root[key];
        if (!list.is_array())
            return errorAt(std::string("reference: ") + key + ": expected an array of node names");
        for (const Json& item : list) {
            if (!item.is_string())
                return errorAt(std::string("reference: ") + key + ": expected an array of node names");
            const std::string name = item.get<std::string>();
            if (!graph.find(name))
                return errorAt(std::string("reference: ") + key + ": node '" + name +
                               "' is not in the graph");
            saved.push_back(name);
        }
        return std::nullopt;
    };
    if (root.contains("min_cut_saved")) {
        PartitionDecision d;
        d.name = "torch_min_cut";
        const std::string partitioner = stringField(root, "partitioner");
        d.origin = (partitioner.empty() ? std::string("functorch min_cut_rematerialization_partition")
                                        : partitioner) +
                   torchSuffix;
        if (auto error = readSaved("min_cut_saved", d.saved))
            return error;
        if (auto seconds = root.find("min_cut_seconds"); seconds != root.end() && seconds->is_number())
            d.seconds = seconds->get<double>();
        decisions.push_back(std::move(d));
    }
    if (root.contains("default_partition_saved")) {
        PartitionDecision d;
        d.name = "torch_default_partition";
        d.origin = "functorch default_partition" + torchSuffix;
        if (auto error = readSaved("default_partition_saved", d.saved))
            return error;
        decisions.push_back(std::move(d));
    }
    for (PartitionDecision& d : decisions) {
        std::erase_if(graph.decisions, [&](const PartitionDecision& old) { return old.name == d.name; });
        graph.decisions.push_back(std::move(d));
    }
    return std::nullopt;
}

} // namespace jointscope
