// jointscope JSON (docs/formats.md): a lossless, versioned serialization of the whole IR.
#include "io/JsonFormat.h"

#include "graph/SymbolicExpr.h"
#include "io/GraphCheck.h"
#include "io/JsonSupport.h"
#include "support/EnumNames.h"
#include "support/Utf8.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>

#ifdef JOINTSCOPE_HAVE_SIMDJSON
#include <simdjson.h>
#endif

namespace jointscope {
namespace {

using json_support::Json;

constexpr std::string_view kFormatName = "jointscope-graph";
constexpr size_t kMaxGraphDepth = 32;

constexpr std::array<std::string_view, 6> kTargetKindNames = {"name",         "op_overload", "op_packet",
                                                              "higher_order", "operator",    "python"};
constexpr std::array<std::string_view, 7> kOutputKindNames = {"unknown",   "tensor",   "tuple", "sym_int",
                                                              "sym_float", "sym_bool", "none"};

template <size_t N> int findName(const std::array<std::string_view, N>& names, std::string_view text) {
    for (size_t i = 0; i < N; ++i)
        if (names[i] == text)
            return static_cast<int>(i);
    return -1;
}

// ---------------------------------------------------------------------------------------------------------------
// Writer: appends straight to the output (no DOM), with python's separators (", " and ": ") so that node
// lines read like json.dumps output.

std::string deviceText(const std::string& type, int64_t index) {
    return index < 0 ? type : type + ":" + std::to_string(index);
}

void appendString(std::string& out, std::string_view text) {
    out += '"';
    for (size_t i = 0; i < text.size();) {
        const char c = text[i];
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\f':
            out += "\\f";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char escaped[8];
                std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
                out += escaped;
            } else if (const size_t length = utf8SequenceLength(text, i); length > 0) {
                out.append(text.substr(i, length));
                i += length;
                continue;
            } else {
                out += "\xEF\xBF\xBD"; // invalid UTF-8 (never in files GraphFile accepts): U+FFFD
            }
        }
        ++i;
    }
    out += '"';
}

void appendInt(std::string& out, int64_t value) {
    char buffer[24];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, result.ptr);
}

// Shortest text that reads back to the same double; always with '.' or an exponent so it stays a float.
void appendFloat(std::string& out, double value) {
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    const std::string_view text(buffer, static_cast<size_t>(result.ptr - buffer));
    out += text;
    if (text.find_first_of(".e") == std::string_view::npos)
        out += ".0";
}

void appendKey(std::string& out, std::string_view key, bool& first) {
    if (!first)
        out += ", ";
    first = false;
    appendString(out, key);
    out += ": ";
}

void appendTagged(std::string& out, std::string_view tag, std::string_view text) {
    out += '{';
    appendString(out, tag);
    out += ": ";
    appendString(out, text);
    out += '}';
}

// A JSON array of `items`, each written by appendItem(out, item).
template <typename T, typename AppendItem>
void appendArray(std::string& out, const std::vector<T>& items, AppendItem appendItem) {
    out += '[';
    for (size_t i = 0; i < items.size(); ++i) {
        if (i)
            out += ", ";
        appendItem(out, items[i]);
    }
    out += ']';
}

void appendStrings(std::string& out, const std::vector<std::string>& items) {
    appendArray(out, items, appendString);
}

void appendSymInt(std::string& out, const SymInt& s) {
    if (!s.isSymbolic()) {
        appendInt(out, s.value);
    } else if (s.value == 0) {
        appendString(out, s.expr);
    } else {
        out += "{\"sym\": ";
        appendString(out, s.expr);
        out += ", \"value\": ";
        appendInt(out, s.value);
        out += '}';
    }
}

void appendSymInts(std::string& out, const std::vector<SymInt>& dims) {
    appendArray(out, dims, appendSymInt);
}

void appendTensor(std::string& out, const TensorMeta& t) {
    if (t == TensorMeta{}) {
        out += "null";
        return;
    }
    bool first = true;
    out += '{';
    if (t.dtype != DType::Undefined) {
        appendKey(out, "dtype", first);
        appendString(out, torchName(t.dtype));
    }
    appendKey(out, "sizes", first);
    appendSymInts(out, t.sizes);
    if (!t.strides.empty()) {
        appendKey(out, "strides", first);
        appendSymInts(out, t.strides);
    }
    if (!t.device.type.empty() || t.device.index != -1) {
        appendKey(out, "device", first);
        appendString(out, deviceText(t.device.type, t.device.index));
    }
    out += '}';
}

void appendValue(std::string& out, const Value& v, const Graph& graph);

void appendValues(std::string& out, const std::vector<Value>& values, const Graph& graph) {
    appendArray(out, values, [&](std::string& o, const Value& v) { appendValue(o, v, graph); });
}

void appendValue(std::string& out, const Value& v, const Graph& graph) {
    switch (v.kind()) {
    case ValueKind::None:
        out += "null";
        return;
    case ValueKind::Bool:
        out += v.asBool() ? "true" : "false";
        return;
    case ValueKind::Int:
        appendInt(out, v.asInt());
        return;
    case ValueKind::Float: {
        const double f = v.asFloat();
        if (std::isnan(f))
            out += "{\"float\": \"nan\"}";
        else if (std::isinf(f))
            out += f > 0 ? "{\"float\": \"inf\"}" : "{\"float\": \"-inf\"}";
        else
            appendFloat(out, f);
        return;
    }
    case ValueKind::String:
        appendString(out, v.text());
        return;
    case ValueKind::NodeRef:
        if (v.asNode() < graph.size())
            appendTagged(out, "node", graph.node(v.asNode()).name);
        else
            out += "{\"node\": null}";
        return;
    case ValueKind::List:
        appendValues(out, v.items(), graph);
        return;
    case ValueKind::Tuple:
        out += "{\"tuple\": ";
        appendValues(out, v.items(), graph);
        out += '}';
        return;
    case ValueKind::Dict:
        out += "{\"dict\": [";
        for (size_t i = 0; i + 1 < v.items().size(); i += 2) {
            if (i)
                out += ", ";
            out += '[';
            appendValue(out, v.items()[i], graph);
            out += ", ";
            appendValue(out, v.items()[i + 1], graph);
            out += ']';
        }
        out += "]}";
        return;
    case ValueKind::Slice:
        out += "{\"slice\": ";
        appendValues(out, v.items(), graph);
        out += '}';
        return;
    case ValueKind::DType:
        appendTagged(out, "dtype", torchName(v.asDType()));
        return;
    case ValueKind::Device:
        appendTagged(out, "device", deviceText(v.text(), v.deviceIndex()));
        return;
    case ValueKind::Layout:
        appendTagged(out, "layout", v.text());
        return;
    case ValueKind::MemoryFormat:
        appendTagged(out, "memory_format", v.text());
        return;
    case ValueKind::SymExpr:
        appendTagged(out, "sym", v.text());
        return;
    case ValueKind::Ellipsis:
        out += "{\"ellipsis\": true}";
        return;
    case ValueKind::Opaque:
        appendTagged(out, "opaque", v.text());
        return;
    }
    out += "null";
}

// The string form when it parses back to the same target, else the full object.
void appendTarget(std::string& out, const Target& t, NodeOp op) {
    const Target reparsed = op == NodeOp::CallFunction ? Target::parseFunction(t.text) : Target::name(t.text);
    if (reparsed == t) {
        appendString(out, t.text);
        return;
    }
    bool first = true;
    out += '{';
    appendKey(out, "kind", first);
    appendString(out, kTargetKindNames[static_cast<size_t>(t.kind)]);
    appendKey(out, "text", first);
    appendString(out, t.text);
    appendKey(out, "ns", first);
    appendString(out, t.ns);
    appendKey(out, "op", first);
    appendString(out, t.op);
    appendKey(out, "overload", first);
    appendString(out, t.overload);
    out += '}';
}

void appendMeta(std::string& out, const NodeMeta& m, bool& firstInNode) {
    if (m == NodeMeta{})
        return;
    appendKey(out, "meta", firstInNode);
    bool first = true;
    out += '{';
    if (!m.stackTrace.empty()) {
        appendKey(out, "stack_trace", first);
        appendStrings(out, m.stackTrace);
    }
    if (!m.nnModuleStack.empty()) {
        appendKey(out, "nn_module_stack", first);
        appendArray(out, m.nnModuleStack, [](std::string& o, const ModuleFrame& f) {
            o += "{\"key\": ";
            appendString(o, f.key);
            o += ", \"path\": ";
            appendString(o, f.path);
            o += ", \"type\": ";
            appendString(o, f.type);
            o += '}';
        });
    }
    if (!m.recompute.empty()) {
        appendKey(out, "recompute", first);
        appendString(out, m.recompute);
    }
    if (m.acGraphId != -1) {
        appendKey(out, "ac_graph_id", first);
        appendInt(out, m.acGraphId);
    }
    if (!m.partitionerTag.empty()) {
        appendKey(out, "partitioner_tag", first);
        appendString(out, m.partitionerTag);
    }
    if (!m.descriptor.empty()) {
        appendKey(out, "descriptor", first);
        appendString(out, m.descriptor);
    }
    if (!m.extra.empty()) {
        appendKey(out, "extra", first);
        bool firstExtra = true;
        out += '{';
        for (const auto& [key, text] : m.extra) {
            appendKey(out, key, firstExtra);
            appendString(out, text);
        }
        out += '}';
    }
    if (m.sourceLine != 0) {
        appendKey(out, "source_line", first);
        appendInt(out, m.sourceLine);
    }
    out += '}';
}

void appendNode(std::string& out, const Node& n, const Graph& graph) {
    bool first = true;
    out += '{';
    appendKey(out, "name", first);
    appendString(out, n.name);
    appendKey(out, "op", first);
    appendString(out, nodeOpName(n.op));
    appendKey(out, "target", first);
    appendTarget(out, n.target, n.op);
    if (!n.args.empty()) {
        appendKey(out, "args", first);
        appendValues(out, n.args, graph);
    }
    if (!n.kwargs.empty()) {
        appendKey(out, "kwargs", first);
        bool firstKwarg = true;
        out += '{';
        for (const auto& [key, value] : n.kwargs) {
            appendKey(out, key, firstKwarg);
            appendValue(out, value, graph);
        }
        out += '}';
    }
    if (n.outputKind != OutputKind::Unknown) {
        appendKey(out, "output_kind", first);
        appendString(out, kOutputKindNames[static_cast<size_t>(n.outputKind)]);
    }
    if (!n.outputs.empty()) {
        appendKey(out, "outputs", first);
        appendArray(out, n.outputs, appendTensor);
    }
    if (!n.symValue.empty()) {
        appendKey(out, "sym", first);
        appendString(out, n.symValue);
    }
    if (n.subgraph >= 0) {
        appendKey(out, "subgraph", first);
        appendInt(out, n.subgraph);
    }
    appendMeta(out, n.meta, first);
    out += '}';
}

void appendDecision(std::string& out, const PartitionDecision& d) {
    bool first = true;
    out += '{';
    appendKey(out, "name", first);
    appendString(out, d.name);
    if (!d.origin.empty()) {
        appendKey(out, "origin", first);
        appendString(out, d.origin);
    }
    appendKey(out, "saved", first);
    appendStrings(out, d.saved);
    if (!d.savedSym.empty()) {
        appendKey(out, "saved_sym", first);
        appendStrings(out, d.savedSym);
    }
    if (d.seconds) {
        appendKey(out, "seconds", first);
        if (std::isfinite(*d.seconds))
            appendFloat(out, *d.seconds);
        else
            out += "null";
    }
    out += '}';
}

// A graph object over several lines: one line per node, decision and nested graph field.
void writeGraphObject(const Graph& graph, const std::string& indent, std::string& out) {
    const std::string inner = indent + ' ';
    out += "{\n" + inner + "\"name\": ";
    appendString(out, graph.name);
    if (graph.numFwdOutputs) {
        out += ",\n" + inner + "\"num_fwd_outputs\": ";
        appendInt(out, *graph.numFwdOutputs);
    }
    if (!graph.attributes.empty()) {
        out += ",\n" + inner + "\"attributes\": {";
        bool first = true;
        for (const auto& [key, value] : graph.attributes) {
            appendKey(out, key, first);
            appendString(out, value);
        }
        out += '}';
    }
    out += ",\n" + inner + "\"nodes\": [";
    for (size_t i = 0; i < graph.size(); ++i) {
        out += i ? ",\n" : "\n";
        out += inner + ' ';
        appendNode(out, graph.node(static_cast<NodeId>(i)), graph);
    }
    out += graph.size() ? "\n" + inner + "]" : "]";
    if (!graph.subgraphs().empty()) {
        out += ",\n" + inner + "\"subgraphs\": [";
        for (size_t i = 0; i < graph.subgraphs().size(); ++i) {
            out += i ? ",\n" : "\n";
            out += inner + ' ';
            writeGraphObject(*graph.subgraphs()[i], inner + ' ', out);
        }
        out += "\n" + inner + "]";
    }
    if (!graph.decisions.empty()) {
        out += ",\n" + inner + "\"decisions\": [";
        for (size_t i = 0; i < graph.decisions.size(); ++i) {
            out += i ? ",\n" : "\n";
            out += inner + ' ';
            appendDecision(out, graph.decisions[i]);
        }
        out += "\n" + inner + "]";
    }
    out += "\n" + indent + "}";
}

// ---------------------------------------------------------------------------------------------------------------
// Reader

// The reader walks a parsed document through a handle, so that one reader serves two parsers: simdjson, fast,
// for documents that read cleanly, and nlohmann, which can tell where a problem is (readJsonGraph).
enum class JsonKind : uint8_t { Null, Bool, Int, Unsigned, Float, String, Array, Object };

// A document the fast parser cannot read exactly as nlohmann does (repeated keys, a value not of the type
// asked for): read it with nlohmann.
struct LeftToNlohmann {};

// What both handles answer in terms of their kind().
template <typename Value> class JsonValueQueries {
public:
    bool is(JsonKind k) const { return self().kind() == k; }
    bool isNumber() const { return is(JsonKind::Int) || is(JsonKind::Unsigned) || is(JsonKind::Float); }
    std::string text() const { return std::string(self().string()); }
    // nlohmann's names, which messages have always used.
    std::string_view typeName() const {
        static constexpr EnumName<JsonKind> kNames[] = {
            {JsonKind::Null, "null"},       {JsonKind::Bool, "boolean"},  {JsonKind::Int, "number"},
            {JsonKind::Unsigned, "number"}, {JsonKind::Float, "number"},  {JsonKind::String, "string"},
            {JsonKind::Array, "array"},     {JsonKind::Object, "object"},
        };
        return nameOf(kNames, self().kind(), "object");
    }

private:
    const Value& self() const { return static_cast<const Value&>(*this); }
};

// A value of a nlohmann document; `where` is itself, so errors are located.
class NlohmannValue : public JsonValueQueries<NlohmannValue> {
public:
    explicit NlohmannValue(const Json& j) : j_(&j) {}
    const Json* where() const { return j_; }
    JsonKind kind() const {
        switch (j_->type()) {
        case Json::value_t::null:
            return JsonKind::Null;
        case Json::value_t::boolean:
            return JsonKind::Bool;
        case Json::value_t::number_integer:
            return JsonKind::Int;
        case Json::value_t::number_unsigned:
            // Kept apart only beyond int64, as simdjson does.
            return j_->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()) ? JsonKind::Unsigned
                                                                                       : JsonKind::Int;
        case Json::value_t::number_float:
            return JsonKind::Float;
        case Json::value_t::string:
            return JsonKind::String;
        case Json::value_t::array:
            return JsonKind::Array;
        case Json::value_t::object:
            return JsonKind::Object;
        default:
            return JsonKind::Null; // binary and discarded values: nlohmann's parser makes neither
        }
    }
    std::optional<NlohmannValue> find(std::string_view key) const {
        auto it = j_->find(key);
        return it == j_->end() ? std::nullopt : std::optional<NlohmannValue>(NlohmannValue(*it));
    }
    std::string_view string() const { return j_->get_ref<const std::string&>(); }
    int64_t integer() const { return j_->get<int64_t>(); }
    double number() const { return j_->get<double>(); }
    bool boolean() const { return j_->get<bool>(); }
    size_t size() const { return j_->size(); }
    NlohmannValue operator[](size_t i) const { return NlohmannValue((*j_)[i]); }
    template <typename Fn> void forEachElement(Fn&& fn) const {
        for (size_t i = 0; i < j_->size(); ++i)
            fn(i, NlohmannValue((*j_)[i]));
    }
    template <typename Fn> void forEachMember(Fn&& fn) const {
        for (const auto& item : j_->items())
            fn(std::string_view(item.key()), NlohmannValue(item.value()));
    }
    std::string dump() const { return j_->dump(-1, ' ', false, Json::error_handler_t::replace); }

private:
    const Json* j_;
};

#ifdef JOINTSCOPE_HAVE_SIMDJSON
// A value of a simdjson document. Errors found through it carry no location: the caller reads the document
// again with nlohmann to locate them.
class SimdValue : public JsonValueQueries<SimdValue> {
public:
    explicit SimdValue(simdjson::dom::element e) : e_(e) {}
    const Json* where() const { return nullptr; }
    JsonKind kind() const {
        switch (e_.type()) {
        case simdjson::dom::element_type::NULL_VALUE:
            return JsonKind::Null;
        case simdjson::dom::element_type::BOOL:
            return JsonKind::Bool;
        case simdjson::dom::element_type::INT64:
            return JsonKind::Int;
        case simdjson::dom::element_type::UINT64:
            return JsonKind::Unsigned;
        case simdjson::dom::element_type::DOUBLE:
            return JsonKind::Float;
        case simdjson::dom::element_type::STRING:
            return JsonKind::String;
        case simdjson::dom::element_type::ARRAY:
            return JsonKind::Array;
        case simdjson::dom::element_type::OBJECT:
            break;
        }
        return JsonKind::Object;
    }
    // nlohmann keeps the last of repeated keys, simdjson finds the first: such a document is read by
    // nlohmann.
    std::optional<SimdValue> find(std::string_view key) const {
        std::optional<SimdValue> found;
        for (simdjson::dom::key_value_pair field : as<simdjson::dom::object>())
            if (field.key == key) {
                if (found)
                    throw LeftToNlohmann{};
                found.emplace(field.value);
            }
        return found;
    }
    std::string_view string() const { return as<std::string_view>(); }
    int64_t integer() const { return as<int64_t>(); }
    double number() const {
        switch (e_.type()) {
        case simdjson::dom::element_type::INT64:
            return double(as<int64_t>());
        case simdjson::dom::element_type::UINT64:
            return double(as<uint64_t>());
        default:
            return as<double>();
        }
    }
    bool boolean() const { return as<bool>(); }
    size_t size() const {
        return e_.type() == simdjson::dom::element_type::ARRAY ? as<simdjson::dom::array>().size()
                                                               : as<simdjson::dom::object>().size();
    }
    // Walks the array up to i: for pairs and the like; forEachElement walks a whole array.
    SimdValue operator[](size_t i) const {
        simdjson::dom::element item;
        if (as<simdjson::dom::array>().at(i).get(item) != simdjson::SUCCESS)
            throw LeftToNlohmann{};
        return SimdValue(item);
    }
    template <typename Fn> void forEachElement(Fn&& fn) const {
        size_t i = 0;
        for (simdjson::dom::element item : as<simdjson::dom::array>())
            fn(i++, SimdValue(item));
    }
    template <typename Fn> void forEachMember(Fn&& fn) const {
        const simdjson::dom::object object = as<simdjson::dom::object>();
        for (auto a = object.begin(); a != object.end(); ++a)
            for (auto b = object.begin(); b != a; ++b)
                if (b.key() == a.key())
                    throw LeftToNlohmann{};
        for (simdjson::dom::key_value_pair field : object)
            fn(field.key, SimdValue(field.value));
    }
    std::string dump() const { return simdjson::minify(e_); }

private:
    template <typename T> T as() const {
        T value{};
        if (e_.get(value) != simdjson::SUCCESS)
            throw LeftToNlohmann{};
        return value;
    }

    simdjson::dom::element e_;
};
#endif

// A schema violation inside `where` (the innermost object that can be located).
struct SchemaError {
    const Json* where;
    std::string message;
};

// The field being read, e.g. "node 'mm': args[1].tuple[0]". Built on the stack and formatted only when an
// error is reported, so that reading large graphs allocates no messages.
struct Path {
    const Path* parent = nullptr;
    std::string_view key;  // root label ("node", "graph"), or a field name; empty for an index
    std::string_view name; // root only: the node / decision name
    size_t index = 0;

    static Path root(std::string_view label, std::string_view name = {}) {
        return Path{nullptr, label, name, 0};
    }
    Path field(std::string_view k) const { return Path{this, k, {}, 0}; }
    Path at(size_t i) const { return Path{this, {}, {}, i}; }

    std::string str() const {
        if (!parent)
            return name.empty() ? std::string(key) : std::string(key) + " '" + std::string(name) + "'";
        std::string out = parent->str();
        if (key.empty())
            return out + "[" + std::to_string(index) + "]";
        return out + (parent->parent ? "." : ": ") + std::string(key);
    }
};

template <typename J> class GraphReader {
public:
    void readGraph(const J& j, Graph& graph, size_t depth) {
        if (!j.is(JsonKind::Object))
            fail(nullptr, "\"graph\" must be an object");
        if (depth > kMaxGraphDepth)
            fail(&j, "subgraphs nested deeper than " + std::to_string(kMaxGraphDepth) + " levels");
        if (std::optional<J> name = find(j, "name"))
            graph.name = stringOf(*name, &j, Path::root(depth == 0 ? "graph" : "subgraph").field("name"));
        const Path self = depth == 0 ? Path::root("graph") : Path::root("subgraph", graph.name);
        if (std::optional<J> n = find(j, "num_fwd_outputs"); n && !n->is(JsonKind::Null))
            graph.numFwdOutputs = intOf(*n, &j, self.field("num_fwd_outputs"));
        if (std::optional<J> attributes = find(j, "attributes")) {
            if (!attributes->is(JsonKind::Object))
                fail(&j, self.field("attributes").str() + ": expected an object of strings");
            const Path path = self.field("attributes");
            attributes->forEachMember([&](std::string_view key, const J& value) {
                graph.attributes.emplace_back(key, stringOf(value, &j, path.field(key)));
            });
        }
        // Subgraphs first, so that nodes can name them.
        if (std::optional<J> subgraphs = find(j, "subgraphs")) {
            if (!subgraphs->is(JsonKind::Array))
                fail(&j, self.field("subgraphs").str() + ": expected an array");
            subgraphs->forEachElement([&](size_t, const J& sub) {
                auto child = std::make_unique<Graph>();
                readGraph(sub, *child, depth + 1);
                graph.addSubgraph(std::move(child));
            });
        }
        std::optional<J> nodes = find(j, "nodes");
        if (!nodes)
            fail(&j, self.str() + ": missing \"nodes\"");
        if (!nodes->is(JsonKind::Array))
            fail(&j, self.field("nodes").str() + ": expected an array");
        graph.reserve(nodes->size());
        // Names first, so that a reference to a later node is reported as such (validateGraph), not as
        // unknown.
        std::vector<J> nodeObjects;
        nodeObjects.reserve(nodes->size());
        nodes->forEachElement([&](size_t, const J& jn) {
            graph.addNode(readNodeHeader(jn, graph, self));
            nodeObjects.push_back(jn);
        });
        for (NodeId id = 0; id < graph.size(); ++id)
            readNodeBody(nodeObjects[id], graph, graph.node(id));
        // Forward references, cycles and calls that cannot bind to their op, at the node's object.
        if (std::vector<NodeIssue> issues = validateGraph(graph); !issues.empty()) {
            fail(&nodeObjects[issues.front().node], issues.front().message);
        }
        if (std::optional<J> decisions = find(j, "decisions")) {
            if (!decisions->is(JsonKind::Array))
                fail(&j, self.field("decisions").str() + ": expected an array");
            decisions->forEachElement(
                [&](size_t, const J& d) { graph.decisions.push_back(readDecision(d, self)); });
        }
        graph.computeUsers();
    }

private:
    [[noreturn]] static void fail(const J* where, std::string message) {
        throw SchemaError{where ? where->where() : nullptr, std::move(message)};
    }

    static std::optional<J> find(const J& object, std::string_view key) { return object.find(key); }

    static std::string_view stringOf(const J& j, const J* where, const Path& path) {
        if (!j.is(JsonKind::String))
            fail(where, path.str() + ": expected a string, got " + std::string(j.typeName()));
        return j.string();
    }

    static int64_t intOf(const J& j, const J* where, const Path& path) {
        if (!j.is(JsonKind::Int))
            fail(where, path.str() + ": expected an int64 integer, got " + std::string(j.typeName()));
        return j.integer();
    }

    static std::vector<std::string> stringsOf(const J& j, const J* where, const Path& path) {
        if (!j.is(JsonKind::Array))
            fail(where, path.str() + ": expected an array of strings");
        std::vector<std::string> out;
        out.reserve(j.size());
        j.forEachElement(
            [&](size_t i, const J& item) { out.emplace_back(stringOf(item, where, path.at(i))); });
        return out;
    }

    static Device parseDevice(std::string_view text) {
        Device d;
        const size_t colon = text.rfind(':');
        if (colon != std::string_view::npos && colon + 1 < text.size() &&
            text.find_first_not_of("0123456789", colon + 1) == std::string_view::npos &&
            text.size() - colon <= 10) {
            d.type = std::string(text.substr(0, colon));
            std::from_chars(text.data() + colon + 1, text.data() + text.size(), d.index);
        } else {
            d.type = std::string(text);
        }
        return d;
    }

    static DType dtypeOf(const J& j, const J* where, const Path& path) {
        const std::string_view text = stringOf(j, where, path);
        if (text == "undefined")
            return DType::Undefined;
        std::optional<DType> d = parseDType(text);
        if (!d)
            fail(where, path.str() + ": unknown dtype '" + std::string(text) + "'");
        return *d;
    }

    Node readNodeHeader(const J& j, const Graph& graph, const Path& owner) {
        if (!j.is(JsonKind::Object))
            fail(nullptr, owner.field("nodes").str() + ": every entry must be an object");
        Node n;
        std::optional<J> name = find(j, "name");
        if (!name)
            fail(&j, owner.field("nodes").str() + ": node without \"name\"");
        n.name = stringOf(*name, &j, owner.field("nodes").field("name"));
        const Path self = Path::root("node", n.name);
        if (graph.find(n.name))
            fail(&j, self.str() + ": duplicate node name");
        std::optional<J> op = find(j, "op");
        if (!op)
            fail(&j, self.str() + ": missing \"op\"");
        std::optional<NodeOp> nodeOp = parseNodeOp(stringOf(*op, &j, self.field("op")));
        if (!nodeOp)
            fail(&j, self.field("op").str() + ": unknown op '" + op->text() + "'");
        n.op = *nodeOp;
        std::optional<J> target = find(j, "target");
        if (!target)
            fail(&j, self.str() + ": missing \"target\"");
        n.target = readTarget(*target, n.op, &j, self.field("target"));
        return n;
    }

    Target readTarget(const J& j, NodeOp op, const J* where, const Path& path) {
        if (j.is(JsonKind::String))
            return op == NodeOp::CallFunction ? Target::parseFunction(j.string()) : Target::name(j.string());
        if (!j.is(JsonKind::Object))
            fail(where, path.str() + ": expected a string or an object");
        Target t;
        std::optional<J> kind = find(j, "kind");
        const int k = kind ? findName(kTargetKindNames, stringOf(*kind, where, path.field("kind"))) : -1;
        if (k < 0)
            fail(where, path.field("kind").str() +
                            ": expected one of name, op_overload, op_packet, higher_order, operator, python");
        t.kind = static_cast<TargetKind>(k);
        auto text = [&](std::string_view key) {
            std::optional<J> f = find(j, key);
            return f ? std::string(stringOf(*f, where, path.field(key))) : std::string();
        };
        t.text = text("text");
        t.ns = text("ns");
        t.op = text("op");
        t.overload = text("overload");
        return t;
    }

    void readNodeBody(const J& j, const Graph& graph, Node& n) {
        const Path self = Path::root("node", n.name);
        if (std::optional<J> args = find(j, "args")) {
            const Path path = self.field("args");
            if (!args->is(JsonKind::Array))
                fail(&j, path.str() + ": expected an array");
            n.args.reserve(args->size());
            args->forEachElement(
                [&](size_t i, const J& arg) { n.args.push_back(readValue(arg, graph, &j, path.at(i), 0)); });
        }
        if (std::optional<J> kwargs = find(j, "kwargs")) {
            const Path path = self.field("kwargs");
            if (!kwargs->is(JsonKind::Object))
                fail(&j, path.str() + ": expected an object");
            kwargs->forEachMember([&](std::string_view key, const J& value) {
                n.kwargs.emplace_back(key, readValue(value, graph, &j, path.field(key), 0));
            });
        }
        if (std::optional<J> kind = find(j, "output_kind")) {
            const int k = findName(kOutputKindNames, stringOf(*kind, &j, self.field("output_kind")));
            if (k < 0)
                fail(&j, self.field("output_kind").str() + ": unknown kind '" + kind->text() + "'");
            n.outputKind = static_cast<OutputKind>(k);
        }
        if (std::optional<J> outputs = find(j, "outputs")) {
            const Path path = self.field("outputs");
            if (!outputs->is(JsonKind::Array))
                fail(&j, path.str() + ": expected an array");
            outputs->forEachElement(
                [&](size_t i, const J& output) { n.outputs.push_back(readTensor(output, &j, path.at(i))); });
        }
        if (std::optional<J> sym = find(j, "sym"))
            n.symValue = symbolicOf(*sym, &j, self.field("sym"));
        if (std::optional<J> sub = find(j, "subgraph")) {
            const Path path = self.field("subgraph");
            if (sub->is(JsonKind::String)) {
                n.subgraph = graph.findSubgraph(sub->string());
                if (n.subgraph < 0)
                    fail(&j, path.str() + ": no subgraph named '" + sub->text() + "'");
            } else {
                const int64_t index = intOf(*sub, &j, path);
                if (index < -1 || index >= static_cast<int64_t>(graph.subgraphs().size()))
                    fail(&j, path.str() + ": index " + std::to_string(index) + " out of range");
                n.subgraph = static_cast<int32_t>(index);
            }
        }
        if (std::optional<J> meta = find(j, "meta"))
            n.meta = readMeta(*meta, &j, self.field("meta"));
    }

    // A symbolic expression; one checkSymbolic refuses (nesting, overflowing constants) is an error here.
    static std::string symbolicOf(const J& j, const J* where, const Path& path) {
        const std::string_view text = stringOf(j, where, path);
        if (SymbolicCheck check = checkSymbolic(text); check.issue)
            fail(where, path.str() + ": " + check.issue->message);
        return std::string(text);
    }

    SymInt readSymInt(const J& j, const J* where, const Path& path) {
        SymInt s;
        if (j.is(JsonKind::String)) {
            s.expr = j.text();
        } else if (j.is(JsonKind::Object)) {
            std::optional<J> sym = find(j, "sym");
            if (!sym)
                fail(where, path.str() + ": expected {\"sym\": EXPR}");
            s.expr = stringOf(*sym, where, path.field("sym"));
            if (std::optional<J> value = find(j, "value"))
                s.value = intOf(*value, where, path.field("value"));
        } else {
            s.value = intOf(j, where, path);
        }
        return s;
    }

    TensorMeta readTensor(const J& j, const J* where, const Path& path) {
        TensorMeta t;
        if (j.is(JsonKind::Null))
            return t;
        if (!j.is(JsonKind::Object))
            fail(where, path.str() + ": expected a tensor object or null");
        if (std::optional<J> dtype = find(j, "dtype"))
            t.dtype = dtypeOf(*dtype, where, path.field("dtype"));
        auto dims = [&](std::string_view key, std::vector<SymInt>& out) {
            std::optional<J> f = find(j, key);
            if (!f)
                return;
            const Path field = path.field(key);
            if (!f->is(JsonKind::Array))
                fail(where, field.str() + ": expected an array");
            out.reserve(f->size());
            f->forEachElement(
                [&](size_t i, const J& dim) { out.push_back(readSymInt(dim, where, field.at(i))); });
        };
        dims("sizes", t.sizes);
        dims("strides", t.strides);
        if (std::optional<J> device = find(j, "device"))
            t.device = parseDevice(stringOf(*device, where, path.field("device")));
        if (std::optional<TensorMetaIssue> issue = checkTensorMeta(t))
            fail(where, path.field(issue->stride ? "strides" : "sizes").at(issue->dim).str() + ": " +
                            issue->message);
        return t;
    }

    NodeMeta readMeta(const J& j, const J* where, const Path& path) {
        NodeMeta m;
        if (!j.is(JsonKind::Object))
            fail(where, path.str() + ": expected an object");
        if (std::optional<J> f = find(j, "stack_trace"))
            m.stackTrace = stringsOf(*f, where, path.field("stack_trace"));
        if (std::optional<J> f = find(j, "nn_module_stack")) {
            const Path stack = path.field("nn_module_stack");
            if (!f->is(JsonKind::Array))
                fail(where, stack.str() + ": expected an array");
            f->forEachElement([&](size_t i, const J& frame) {
                if (!frame.is(JsonKind::Object))
                    fail(where, stack.at(i).str() + ": expected {\"key\", \"path\", \"type\"}");
                ModuleFrame mf;
                auto text = [&](std::string_view key) {
                    std::optional<J> v = find(frame, key);
                    return v ? std::string(stringOf(*v, where, stack.at(i).field(key))) : std::string();
                };
                mf.key = text("key");
                mf.path = text("path");
                mf.type = text("type");
                m.nnModuleStack.push_back(std::move(mf));
            });
        }
        if (std::optional<J> f = find(j, "recompute"))
            m.recompute = stringOf(*f, where, path.field("recompute"));
        if (std::optional<J> f = find(j, "ac_graph_id"))
            m.acGraphId = intOf(*f, where, path.field("ac_graph_id"));
        if (std::optional<J> f = find(j, "partitioner_tag"))
            m.partitionerTag = stringOf(*f, where, path.field("partitioner_tag"));
        if (std::optional<J> f = find(j, "descriptor"))
            m.descriptor = stringOf(*f, where, path.field("descriptor"));
        if (std::optional<J> f = find(j, "extra")) {
            if (!f->is(JsonKind::Object))
                fail(where, path.field("extra").str() + ": expected an object");
            f->forEachMember([&](std::string_view key, const J& value) {
                m.extra.emplace_back(key, value.is(JsonKind::String) ? value.text() : value.dump());
            });
        }
        if (std::optional<J> f = find(j, "source_line")) {
            const int64_t line = intOf(*f, where, path.field("source_line"));
            if (line < 0 || line > UINT32_MAX)
                fail(where, path.field("source_line").str() + ": out of range");
            m.sourceLine = static_cast<uint32_t>(line);
        }
        return m;
    }

    std::vector<Value> readItems(const J& j, const Graph& graph, const J* where, const Path& path,
                                 size_t depth) {
        if (!j.is(JsonKind::Array))
            fail(where, path.str() + ": expected an array");
        std::vector<Value> items;
        items.reserve(j.size());
        j.forEachElement([&](size_t i, const J& item) {
            items.push_back(readValue(item, graph, where, path.at(i), depth + 1));
        });
        return items;
    }

    Value readValue(const J& j, const Graph& graph, const J* where, const Path& path, size_t depth) {
        switch (j.kind()) {
        case JsonKind::Null:
            return Value::none();
        case JsonKind::Bool:
            return Value::boolean(j.boolean());
        case JsonKind::Int:
        case JsonKind::Unsigned:
            return Value::integer(intOf(j, where, path));
        case JsonKind::Float:
            return Value::real(j.number());
        case JsonKind::String:
            return Value::string(j.text());
        case JsonKind::Array:
            return Value::list(readItems(j, graph, where, path, depth));
        case JsonKind::Object:
            break;
        }
        if (j.size() != 1)
            fail(where,
                 path.str() +
                     ": a tagged value must have exactly one key (\"node\", \"tuple\", \"dict\", ...)");
        std::string_view tag;
        std::optional<J> only;
        j.forEachMember([&](std::string_view key, const J& value) {
            tag = key;
            only = value;
        });
        const J& body = *only;
        const Path field = path.field(tag);
        if (tag == "node") {
            if (body.is(JsonKind::Null))
                return Value::nodeRef(kNoNode);
            const std::string_view name = stringOf(body, where, field);
            std::optional<NodeId> id = graph.find(name);
            if (!id)
                fail(where, path.str() + ": unknown node reference '" + std::string(name) + "'");
            return Value::nodeRef(*id);
        }
        if (tag == "float") {
            if (body.isNumber())
                return Value::real(body.number());
            const std::string_view text = stringOf(body, where, field);
            if (text == "inf")
                return Value::real(std::numeric_limits<double>::infinity());
            if (text == "-inf")
                return Value::real(-std::numeric_limits<double>::infinity());
            if (text == "nan")
                return Value::real(std::numeric_limits<double>::quiet_NaN());
            fail(where, field.str() + ": expected \"inf\", \"-inf\", \"nan\" or a number");
        }
        if (tag == "tuple")
            return Value::tuple(readItems(body, graph, where, field, depth));
        if (tag == "dict") {
            if (!body.is(JsonKind::Array))
                fail(where, field.str() + ": expected an array of [key, value] pairs");
            std::vector<std::pair<Value, Value>> entries;
            entries.reserve(body.size());
            body.forEachElement([&](size_t i, const J& pair) {
                const Path entry = field.at(i);
                if (!pair.is(JsonKind::Array) || pair.size() != 2)
                    fail(where, entry.str() + ": expected a [key, value] pair");
                entries.emplace_back(readValue(pair[0], graph, where, entry.at(0), depth + 1),
                                     readValue(pair[1], graph, where, entry.at(1), depth + 1));
            });
            return Value::dict(std::move(entries));
        }
        if (tag == "slice") {
            std::vector<Value> parts = readItems(body, graph, where, field, depth);
            if (parts.size() != 3)
                fail(where, field.str() + ": expected [start, stop, step]");
            return Value::slice(std::move(parts[0]), std::move(parts[1]), std::move(parts[2]));
        }
        if (tag == "dtype")
            return Value::dtype(dtypeOf(body, where, field));
        if (tag == "device") {
            Device d = parseDevice(stringOf(body, where, field));
            return Value::device(d.type, d.index);
        }
        if (tag == "layout")
            return Value::layout(std::string(stringOf(body, where, field)));
        if (tag == "memory_format")
            return Value::memoryFormat(std::string(stringOf(body, where, field)));
        if (tag == "sym")
            return Value::symExpr(symbolicOf(body, where, field));
        if (tag == "ellipsis")
            return Value::ellipsis();
        if (tag == "opaque")
            return Value::opaque(std::string(stringOf(body, where, field)));
        fail(where, path.str() + ": unknown value tag \"" + std::string(tag) + "\"");
    }

    PartitionDecision readDecision(const J& j, const Path& owner) {
        if (!j.is(JsonKind::Object))
            fail(nullptr, owner.field("decisions").str() + ": every decision must be an object");
        PartitionDecision d;
        std::optional<J> name = find(j, "name");
        if (!name)
            fail(&j, owner.field("decisions").str() + ": decision without \"name\"");
        d.name = stringOf(*name, &j, owner.field("decisions").field("name"));
        const Path self = Path::root("decision", d.name);
        if (std::optional<J> f = find(j, "origin"))
            d.origin = stringOf(*f, &j, self.field("origin"));
        if (std::optional<J> f = find(j, "saved"))
            d.saved = stringsOf(*f, &j, self.field("saved"));
        if (std::optional<J> f = find(j, "saved_sym"))
            d.savedSym = stringsOf(*f, &j, self.field("saved_sym"));
        if (std::optional<J> f = find(j, "seconds"); f && !f->is(JsonKind::Null)) {
            if (!f->isNumber())
                fail(&j, self.field("seconds").str() + ": expected a number");
            d.seconds = f->number();
        }
        return d;
    }
};

} // namespace

bool looksLikeJsonGraph(std::string_view head) {
    const size_t first = head.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
    if (first == std::string_view::npos || head[first] != '{')
        return false;
    const std::string_view window = head.substr(first, 4096);
    const size_t key = window.find("\"format\"");
    return key != std::string_view::npos &&
           window.find("\"jointscope-graph\"", key) != std::string_view::npos;
}

std::string writeJsonGraph(const Graph& graph) {
    std::string out =
        "{\n \"format\": \"jointscope-graph\",\n \"version\": " + std::to_string(kJsonFormatVersion) +
        ",\n \"graph\": ";
    writeGraphObject(graph, " ", out);
    out += "\n}\n";
    return out;
}

namespace {

// The document's "graph" object once "format" and "version" check out; else a located diagnostic.
Expected<const Json*> checkDocument(const Json& root, std::string_view text, const std::string& fileName) {
    auto errorAt = [&](const Json* where, std::string message) {
        return makeError(json_support::locateObject(text, root, where, fileName), std::move(message));
    };
    if (!root.is_object())
        return errorAt(nullptr, "expected a JSON object with \"format\": \"jointscope-graph\"");
    auto format = root.find("format");
    if (format == root.end() || !format->is_string() || format->get<std::string>() != kFormatName) {
        std::string message = "not a jointscope graph: expected \"format\": \"jointscope-graph\"";
        if (root.contains("nodes") && root.contains("num_fwd_outputs"))
            message += " (this looks like a torch 1.13 meta sidecar: open the graph text with --meta)";
        else if (root.contains("min_cut_saved"))
            message += " (this looks like a torch 1.13 reference.json)";
        return errorAt(&root, std::move(message));
    }
    auto version = root.find("version");
    if (version == root.end() || !version->is_number_integer())
        return errorAt(&root, "missing integer \"version\"");
    if (version->get<int64_t>() != kJsonFormatVersion)
        return errorAt(&root, "unsupported version " + version->dump() + " (this build reads version " +
                                  std::to_string(kJsonFormatVersion) + ")");
    auto graphJson = root.find("graph");
    if (graphJson == root.end())
        return errorAt(&root, "missing \"graph\"");
    if (!graphJson->is_object())
        return errorAt(&root, "\"graph\" must be an object");
    return &*graphJson;
}

#ifdef JOINTSCOPE_HAVE_SIMDJSON
// fn(the document's "graph") for a document that simdjson reads cleanly and that checkDocument would take;
// nullopt for any problem (the caller reads the document again with nlohmann, which locates it).
template <typename Fn>
auto withCleanGraph(std::string_view text, Fn&& fn)
    -> std::optional<decltype(fn(std::declval<SimdValue>()))> {
    simdjson::dom::parser parser;
    // simdjson counts the document itself as one level, as findTooDeep does.
    if (parser.allocate(text.size(), json_support::kMaxJsonDepth) != simdjson::SUCCESS)
        return std::nullopt;
    simdjson::dom::element root;
    if (parser.parse(text.data(), text.size()).get(root) != simdjson::SUCCESS)
        return std::nullopt;
    try {
        const SimdValue document(root);
        if (!document.is(JsonKind::Object))
            return std::nullopt;
        const std::optional<SimdValue> format = document.find("format");
        const std::optional<SimdValue> version = document.find("version");
        const std::optional<SimdValue> graphJson = document.find("graph");
        if (!format || !format->is(JsonKind::String) || format->string() != kFormatName || !version ||
            !version->is(JsonKind::Int) || version->integer() != kJsonFormatVersion || !graphJson ||
            !graphJson->is(JsonKind::Object))
            return std::nullopt;
        return fn(*graphJson);
    } catch (const SchemaError&) {
        return std::nullopt;
    } catch (const LeftToNlohmann&) {
        return std::nullopt;
    }
}

std::optional<Graph> readCleanDocument(std::string_view text) {
    return withCleanGraph(text, [](const SimdValue& graphJson) {
        Graph graph;
        GraphReader<SimdValue>().readGraph(graphJson, graph, 0);
        return graph;
    });
}
#endif

} // namespace

Expected<Graph> readJsonGraph(std::string_view text, const std::string& fileName, JsonParser parser) {
#ifdef JOINTSCOPE_HAVE_SIMDJSON
    if (parser == JsonParser::Fast)
        if (std::optional<Graph> graph = readCleanDocument(text))
            return std::move(*graph);
#else
    (void)parser;
#endif
    Expected<Json> parsed = json_support::parseLocated(text, fileName);
    if (!parsed)
        return parsed.error();
    const Json& root = *parsed;
    Expected<const Json*> graphJson = checkDocument(root, text, fileName);
    if (!graphJson)
        return graphJson.error();
    Graph graph;
    try {
        GraphReader<NlohmannValue>().readGraph(NlohmannValue(**graphJson), graph, 0);
    } catch (const SchemaError& e) {
        return makeError(json_support::locateObject(text, root, e.where ? e.where : *graphJson, fileName),
                         e.message);
    }
    return graph;
}

namespace {

// Reads the few fields a file listing needs in one streaming pass, without building the document: opening a
// large graph file must not parse it twice into a DOM. Anything unexpected sets `suspicious`, and the caller
// then takes the full (slower, precisely located) path.
class SummaryHandler : public nlohmann::json_sax<Json> {
public:
    json_support::JsonGraphSummary summary;
    std::string format;
    int64_t version = -1;
    bool sawGraph = false;

    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t v) override { return integer(v); }
    bool number_unsigned(number_unsigned_t v) override { return integer(static_cast<int64_t>(v)); }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t& v) override {
        if (at({"format"}))
            format = v;
        else if (at({"graph", "attributes", "kind"}))
            summary.kind = v;
        else if (at({"graph", "attributes", "compile_id"}))
            summary.compileId = v;
        return true;
    }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override {
        if (at({"graph", "nodes", ""}) && inArray_.back())
            ++summary.nodes;
        sawGraph = sawGraph || at({"graph"});
        return open(false);
    }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override { return open(true); }
    bool end_array() override { return close(); }
    bool key(string_t& k) override {
        keys_.back() = k;
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;
    }

private:
    // One entry per open container: the key being read in it ("" in arrays).
    std::vector<std::string> keys_;
    std::vector<bool> inArray_;

    bool at(std::initializer_list<std::string_view> path) const {
        return keys_.size() == path.size() && std::equal(path.begin(), path.end(), keys_.begin());
    }
    bool integer(int64_t v) {
        if (at({"version"}))
            version = v;
        return true;
    }
    bool open(bool array) {
        keys_.emplace_back();
        inArray_.push_back(array);
        return true;
    }
    bool close() {
        keys_.pop_back();
        inArray_.pop_back();
        return true;
    }
};

} // namespace

Expected<json_support::JsonGraphSummary> json_support::summarizeJsonGraph(std::string_view text,
                                                                          const std::string& fileName) {
#ifdef JOINTSCOPE_HAVE_SIMDJSON
    // What SummaryHandler collects, read from simdjson's document.
    std::optional<JsonGraphSummary> clean = withCleanGraph(text, [](const SimdValue& graphJson) {
        JsonGraphSummary summary;
        if (std::optional<SimdValue> attributes = graphJson.find("attributes");
            attributes && attributes->is(JsonKind::Object)) {
            if (std::optional<SimdValue> kind = attributes->find("kind"); kind && kind->is(JsonKind::String))
                summary.kind = kind->text();
            if (std::optional<SimdValue> id = attributes->find("compile_id"); id && id->is(JsonKind::String))
                summary.compileId = id->text();
        }
        if (std::optional<SimdValue> nodes = graphJson.find("nodes"); nodes && nodes->is(JsonKind::Array))
            nodes->forEachElement([&](size_t, const SimdValue& node) {
                if (node.is(JsonKind::Object))
                    ++summary.nodes;
            });
        return summary;
    });
    if (clean)
        return std::move(*clean);
#endif
    SummaryHandler handler;
    const bool parsed =
        Json::sax_parse(text.begin(), text.end(), &handler, nlohmann::detail::input_format_t::json,
                        /*strict=*/true);
    if (parsed && handler.format == kFormatName && handler.version == kJsonFormatVersion && handler.sawGraph)
        return handler.summary;
    // Not a well-formed jointscope graph: the DOM path explains exactly what and where.
    Expected<Json> dom = parseLocated(text, fileName);
    if (!dom)
        return dom.error();
    Expected<const Json*> graphJson = checkDocument(*dom, text, fileName);
    if (!graphJson)
        return graphJson.error();
    return handler.summary;
}

} // namespace jointscope
