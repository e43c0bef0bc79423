// The runtime's checks before LibTorch sees anything (runtime/InputChecks.h), fuzzed without a LibTorch.
//
// Input "schema\n" + lines: an op schema (first line "ns::name", then "arg NAME TYPE" / "ret TYPE") judged by
// the op policy, which must refuse what docs/runtime.md says it refuses. Any other input: an FX graph; every
// aten call is judged against the schema table, and every tensor it describes is sized the way the
// interpreter sizes inputs and factory results, which must agree with a 128-bit count made here.
#include "FuzzSupport.h"

#include "graph/DType.h"
#include "ops/OpSchema.h"
#include "runtime/InputChecks.h"

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

namespace {
using namespace jointscope;
using namespace jointscope::runtime;

[[noreturn]] void die(const char* what, const std::string& detail) {
    std::fprintf(stderr, "%s: %s\n", what, detail.c_str());
    std::abort();
}

std::vector<std::string_view> splitLines(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const size_t nl = text.find('\n');
        lines.push_back(text.substr(0, nl));
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    }
    return lines;
}

// docs/runtime.md, "Which ops run": stated again here rather than read from OpPolicy.cpp.
void checkPolicy(const OpSchemaView& op) {
    const std::optional<std::string> why = opRefusal(op);
    if (why && why->empty())
        die("refusal without a reason", op.name);
    if (why)
        return;
    const size_t sep = op.name.find("::");
    const std::string ns = sep == std::string::npos ? "" : op.name.substr(0, sep);
    const std::string base = sep == std::string::npos ? op.name : op.name.substr(sep + 2);
    if (ns != "aten" && ns != "prims")
        die("an op outside aten and prims may run", op.name);
    if (base == "from_file" || base == "save" || base == "load")
        die("a file op may run", op.name);
    auto shared = [](const std::string& type) { return type == "Storage" || type == "Stream"; };
    for (const OpSchemaView::Argument& a : op.arguments) {
        if (shared(a.type))
            die("an op taking a Storage or Stream may run", op.name + " " + a.name);
        if (a.type == "str" && (a.name == "filename" || a.name == "path" || a.name == "file"))
            die("an op taking a path may run", op.name + " " + a.name);
    }
    for (const std::string& type : op.returns)
        if (shared(type))
            die("an op returning a Storage or Stream may run", op.name);
}

OpSchemaView parseSchema(std::string_view text) {
    std::vector<std::string_view> lines = splitLines(text);
    OpSchemaView op;
    if (lines.empty())
        return op;
    op.name = std::string(lines[0]);
    for (size_t i = 1; i < lines.size(); ++i) {
        std::string_view line = lines[i];
        if (line.substr(0, 4) == "ret ") {
            op.returns.emplace_back(line.substr(4));
        } else if (line.substr(0, 4) == "arg ") {
            line = line.substr(4);
            const size_t space = line.find(' ');
            op.arguments.push_back(
                {std::string(line.substr(0, space)),
                 space == std::string_view::npos ? "" : std::string(line.substr(space + 1))});
        }
    }
    return op;
}

// A c10-like schema for a call the table knows: the types c10 would print for each parameter kind.
std::optional<OpSchemaView> tableSchema(const Target& target) {
    std::optional<OpSchema> schema = findOpSchema(target);
    if (!schema)
        return std::nullopt;
    OpSchemaView view;
    view.name = target.ns + "::" + target.op;
    view.overload = target.overload == "default" ? "" : target.overload;
    for (const OpParam& p : schema->params) {
        static constexpr const char* kTypes[] = {"Tensor", "Tensor", "int", "int",  "Scalar",
                                                 "float",  "bool",   "str", "Other"};
        view.arguments.push_back({std::string(p.name), kTypes[static_cast<size_t>(p.kind)]});
    }
    view.returns.push_back("Tensor");
    return view;
}

using Wide = unsigned __int128;

// The bytes a tensor spans, counted in 128 bits and saturated far above any limit; nullopt for a negative
// size or stride.
std::optional<Wide> wideBytes(const std::vector<int64_t>& sizes, const std::vector<int64_t>* strides,
                              size_t itemSize) {
    const Wide cap = Wide(1) << 100;
    auto saturate = [&](Wide v) { return v > cap ? cap : v; };
    Wide elements = 1;
    bool empty = false;
    for (size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] < 0 || (strides && (*strides)[i] < 0))
            return std::nullopt;
        empty = empty || sizes[i] == 0;
    }
    if (empty)
        return 0;
    for (size_t i = 0; i < sizes.size(); ++i)
        elements = strides ? saturate(elements + Wide(sizes[i] - 1) * Wide((*strides)[i]))
                           : saturate(elements * Wide(sizes[i]));
    return saturate(elements * itemSize);
}

void checkSizes(const TensorMeta& meta, const SymbolBindings& symbols) {
    Expected<std::vector<int64_t>> sizes = dimValues(meta.sizes, symbols);
    if (!sizes) {
        if (sizes.error().message.empty())
            die("a size without a value and without a message", "");
        return;
    }
    std::optional<std::vector<int64_t>> strides;
    if (meta.strides.size() == meta.sizes.size()) {
        Expected<std::vector<int64_t>> s = dimValues(meta.strides, symbols);
        if (!s)
            return;
        strides = *s;
    }
    constexpr uint64_t kLimit = 32ULL << 30; // kMaxInputBytes
    const size_t item = meta.dtype == DType::Undefined ? 4 : itemSize(meta.dtype);
    const Expected<uint64_t> bytes = storageBytes(*sizes, strides ? &*strides : nullptr, item, kLimit, "cpu");
    const std::optional<Wide> expected = wideBytes(*sizes, strides ? &*strides : nullptr, item);
    const bool fits = expected && *expected <= kLimit;
    if (bool(bytes) != fits)
        die(bytes ? "a tensor beyond the limit (or with a negative size) was accepted"
                  : "a tensor within the limit was refused",
            bytes ? std::to_string(*bytes) : bytes.error().message);
    if (bytes && Wide(*bytes) != *expected)
        die("byte counts differ", std::to_string(*bytes));
    if (!bytes && bytes.error().message.empty())
        die("a refusal without a message", "");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text = fuzz::asText(data, size);
    if (text.substr(0, 7) == "schema\n") {
        checkPolicy(parseSchema(text.substr(7)));
        return 0;
    }
    FxReadOptions options;
    options.fileName = "fuzz.py";
    Expected<Graph> graph = readFxText(text, options);
    if (!graph)
        return 0;
    if (std::optional<Diagnostic> refused = refusedOpIn(*graph, tableSchema))
        if (refused->message.find("refused: ") == std::string::npos)
            die("a refusal that does not say so", refused->message);
    static const SymbolBindings symbols = {{"s0", 3},
                                           {"s1", std::numeric_limits<int64_t>::max()},
                                           {"s2", std::numeric_limits<int64_t>::min()},
                                           {"s3", -1},
                                           {"s4", 0},
                                           {"s5", 1 << 20},
                                           {"u0", 16}};
    for (const Node& node : graph->nodes())
        for (const TensorMeta& meta : node.outputs)
            checkSizes(meta, symbols);
    return 0;
}
