#include "runtime/OpPolicy.h"

#include <algorithm>
#include <string_view>

namespace jointscope::runtime {
namespace {

struct Rule {
    std::string_view name;   // an op (base name, any overload), a type or an argument name
    std::string_view reason; // the message's last words
};

// Namespaces of tensor math. Others hold collectives that block without a process group, profiler hooks and
// custom ops with side effects.
constexpr std::string_view kNamespaces[] = {"aten", "prims"};

// Refused by name, whatever their schema: ops whose schema looks like tensor math but whose effect leaves the
// tensors. from_file is also caught by its `filename` argument; naming it gives the precise reason. save and
// load are TorchScript's and not dispatcher ops today: refused should a LibTorch register them.
constexpr Rule kRefusedOps[] = {
    {"from_file", "reads or writes files"},
    {"save", "writes files"},
    {"load", "reads files"},
    {"_print", "writes to the program's output"},
    {"_cufft_set_plan_cache_max_size", "changes process-wide state"},
    {"_cufft_clear_plan_cache", "changes process-wide state"},
};

// Types (under Optional and List) an op may take or return: what an FX graph of tensor math passes. c10
// prints SymInt, ScalarType, Layout and MemoryFormat arguments as int; the names are kept for LibTorch
// versions that print the real type.
constexpr std::string_view kAllowedTypes[] = {
    "Tensor", "int",     "SymInt",     "float",  "SymFloat",     "bool",   "SymBool",
    "Scalar", "complex", "ScalarType", "Layout", "MemoryFormat", "Device", "Generator",
    "str", // only for the option arguments below
};

// Types refused with a reason of their own; any other type is refused as one tensor math does not need.
constexpr Rule kRefusedTypes[] = {
    {"Storage", "shares storage (mapped files, memory of other tensors or processes)"},
    {"Stream", "works on device streams"},
};

// String arguments that name an algorithm or a mode, never a file. Any other string argument is refused.
constexpr std::string_view kOptionStrings[] = {
    "activation", "algorithm",     "approximate", "api_name",  "assert_msg",    "driver", "equation",
    "indexing",   "interpolation", "mode",        "norm",      "ord",           "p",      "pad_mode",
    "padding",    "padding_side",  "reduce",      "reduction", "rounding_mode", "side",   "UPLO",
};

// String arguments that name tensor dimensions: c10 describes Dimname as str. Their overloads are for named
// tensors, which ATen graphs do not use.
constexpr std::string_view kDimnameStrings[] = {"dim",   "dims",   "dim0",    "dim1",      "names",
                                                "order", "outdim", "out_dim", "start_dim", "end_dim"};

// String arguments that name files: refused with the reason that says so.
constexpr std::string_view kPathStrings[] = {"filename", "file", "path", "filepath", "f", "dir", "directory"};

template <typename Range> bool contains(const Range& range, std::string_view s) {
    return std::find(std::begin(range), std::end(range), s) != std::end(range);
}

std::optional<std::string_view> reasonFor(const Rule* begin, const Rule* end, std::string_view name) {
    for (const Rule* r = begin; r != end; ++r)
        if (r->name == name)
            return r->reason;
    return std::nullopt;
}

std::optional<std::string> typeRefusal(const std::string& type, const std::string& what) {
    if (contains(kAllowedTypes, type))
        return std::nullopt;
    if (std::optional<std::string_view> reason =
            reasonFor(std::begin(kRefusedTypes), std::end(kRefusedTypes), type))
        return std::string(*reason) + " (" + what + " of type " + type + ")";
    return what + " of type " + type + ", which tensor math does not pass";
}

} // namespace

std::optional<std::string> opRefusal(const OpSchemaView& op) {
    const size_t sep = op.name.find("::");
    const std::string ns = sep == std::string::npos ? std::string() : op.name.substr(0, sep);
    const std::string base = sep == std::string::npos ? op.name : op.name.substr(sep + 2);
    if (!contains(kNamespaces, ns))
        return "ops of namespace '" + ns + "' are not run";
    if (std::optional<std::string_view> reason =
            reasonFor(std::begin(kRefusedOps), std::end(kRefusedOps), base))
        return std::string(*reason);
    for (const OpSchemaView::Argument& a : op.arguments) {
        if (a.type == "str") {
            if (contains(kPathStrings, a.name))
                return "reads or writes files (argument '" + a.name + "')";
            if (contains(kDimnameStrings, a.name))
                return "a named-tensor overload (argument '" + a.name + "' names dimensions)";
            if (!contains(kOptionStrings, a.name))
                return "takes the string argument '" + a.name + "', which is not a known option";
            continue;
        }
        if (std::optional<std::string> why = typeRefusal(a.type, "argument '" + a.name + "'"))
            return why;
    }
    for (const std::string& type : op.returns)
        if (std::optional<std::string> why = typeRefusal(type, "a result"))
            return why;
    return std::nullopt;
}

} // namespace jointscope::runtime
