#include "graph/FxNamespace.h"

#include "graph/HopBody.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

namespace jointscope {
namespace {

struct SplitName {
    std::string_view base;
    std::optional<int64_t> num;
};

// _name_regex "^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$": the lazy base leaves the last "_digits" as the
// number.
SplitName splitName(std::string_view name) {
    const size_t underscore = name.rfind('_');
    if (underscore == std::string_view::npos || underscore == 0 || underscore + 1 == name.size())
        return {name, std::nullopt};
    const std::string_view digits = name.substr(underscore + 1);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return {name, std::nullopt};
    int64_t num = 0;
    if (std::from_chars(digits.data(), digits.data() + digits.size(), num).ec != std::errc())
        return {name, std::nullopt};
    return {name.substr(0, underscore), num};
}

// _illegal_names: Python's keywords and builtins (a node named "sum" would shadow the builtin).
bool isIllegalName(std::string_view name) {
    static constexpr std::string_view kNames[] = {
        "ArithmeticError",
        "AssertionError",
        "AttributeError",
        "BaseException",
        "BaseExceptionGroup",
        "BlockingIOError",
        "BrokenPipeError",
        "BufferError",
        "BytesWarning",
        "ChildProcessError",
        "ConnectionAbortedError",
        "ConnectionError",
        "ConnectionRefusedError",
        "ConnectionResetError",
        "DeprecationWarning",
        "EOFError",
        "Ellipsis",
        "EncodingWarning",
        "EnvironmentError",
        "Exception",
        "ExceptionGroup",
        "False",
        "FileExistsError",
        "FileNotFoundError",
        "FloatingPointError",
        "FutureWarning",
        "GeneratorExit",
        "IOError",
        "ImportError",
        "ImportWarning",
        "IndentationError",
        "IndexError",
        "InterruptedError",
        "IsADirectoryError",
        "KeyError",
        "KeyboardInterrupt",
        "LookupError",
        "MemoryError",
        "ModuleNotFoundError",
        "NameError",
        "None",
        "NotADirectoryError",
        "NotImplemented",
        "NotImplementedError",
        "OSError",
        "OverflowError",
        "PendingDeprecationWarning",
        "PermissionError",
        "ProcessLookupError",
        "RecursionError",
        "ReferenceError",
        "ResourceWarning",
        "RuntimeError",
        "RuntimeWarning",
        "StopAsyncIteration",
        "StopIteration",
        "SyntaxError",
        "SyntaxWarning",
        "SystemError",
        "SystemExit",
        "TabError",
        "TimeoutError",
        "True",
        "TypeError",
        "UnboundLocalError",
        "UnicodeDecodeError",
        "UnicodeEncodeError",
        "UnicodeError",
        "UnicodeTranslateError",
        "UnicodeWarning",
        "UserWarning",
        "ValueError",
        "Warning",
        "ZeroDivisionError",
        "abs",
        "aiter",
        "all",
        "and",
        "anext",
        "any",
        "as",
        "ascii",
        "assert",
        "async",
        "await",
        "bin",
        "bool",
        "break",
        "breakpoint",
        "bytearray",
        "bytes",
        "callable",
        "chr",
        "class",
        "classmethod",
        "compile",
        "complex",
        "continue",
        "copyright",
        "credits",
        "def",
        "del",
        "delattr",
        "dict",
        "dir",
        "divmod",
        "elif",
        "else",
        "enumerate",
        "eval",
        "except",
        "exec",
        "exit",
        "filter",
        "finally",
        "float",
        "for",
        "format",
        "from",
        "frozenset",
        "getattr",
        "global",
        "globals",
        "hasattr",
        "hash",
        "help",
        "hex",
        "id",
        "if",
        "import",
        "in",
        "input",
        "int",
        "is",
        "isinstance",
        "issubclass",
        "iter",
        "lambda",
        "len",
        "license",
        "list",
        "locals",
        "map",
        "max",
        "memoryview",
        "min",
        "next",
        "nonlocal",
        "not",
        "object",
        "oct",
        "open",
        "or",
        "ord",
        "pass",
        "pow",
        "print",
        "property",
        "quit",
        "raise",
        "range",
        "repr",
        "return",
        "reversed",
        "round",
        "set",
        "setattr",
        "slice",
        "sorted",
        "staticmethod",
        "str",
        "sum",
        "super",
        "try",
        "tuple",
        "type",
        "vars",
        "while",
        "with",
        "yield",
        "zip",
    };
    return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

// How many elements node `id` returns: its body's outputs for a higher-order op, else its typed tuple.
size_t tupleSize(const Graph& graph, NodeId id) {
    if (const Graph* body = bodyOf(graph, id); body && graph.node(id).op == NodeOp::CallFunction)
        return body->outputLeaves().size();
    const Node& n = graph.node(id);
    return n.outputKind == OutputKind::Tuple ? n.outputs.size() : 0;
}

} // namespace

FxNamespace::FxNamespace(const Graph& graph) {
    for (const Node& n : graph.nodes())
        take(n.name);
    // The getitems FX made for the elements of a tuple are numbered in a row: getitem_N reads element i, so
    // element last was getitem_{N - i + last}, erased or not.
    for (NodeId id = 0; id < graph.size(); ++id) {
        const size_t size = tupleSize(graph, id);
        std::optional<int64_t> offset;
        bool inRow = true;
        for (NodeId user : graph.node(id).users) {
            const Node& u = graph.node(user);
            if (!u.target.isGetItem() || u.args.size() != 2 || u.args[1].kind() != ValueKind::Int)
                continue;
            const SplitName split = splitName(u.name);
            if (split.base != "getitem") {
                inRow = false;
                break;
            }
            const int64_t o = split.num.value_or(0) - u.args[1].asInt();
            if (offset && *offset != o) {
                inRow = false;
                break;
            }
            offset = o;
        }
        if (inRow && offset && size > 0) {
            int64_t& count = baseCount_["getitem"];
            count = std::max(count, *offset + int64_t(size) - 1);
        }
    }
}

void FxNamespace::take(std::string_view name) {
    used_.emplace(name);
    const SplitName split = splitName(name);
    int64_t& count = baseCount_[std::string(split.base)];
    count = std::max(count, split.num.value_or(0));
}

std::string FxNamespace::targetToName(std::string_view target) {
    std::string out;
    for (size_t i = 0; i < target.size(); ++i) {
        const char c = target[i];
        if (std::isupper(static_cast<unsigned char>(c)) && i > 0 &&
            std::islower(static_cast<unsigned char>(target[i - 1])))
            out += '_';
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

std::string FxNamespace::create(std::string_view text) {
    std::string candidate;
    bool inRun = false; // _illegal_char_regex: a run of other characters becomes one '_'
    for (char c : text) {
        const bool legal = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        if (legal || !inRun)
            candidate += legal ? c : '_';
        inRun = !legal;
    }
    if (candidate.empty())
        candidate = "_unnamed";
    if (std::isdigit(static_cast<unsigned char>(candidate[0])))
        candidate.insert(candidate.begin(), '_');
    const SplitName split = splitName(candidate);
    const std::string base(split.base);
    std::string name = candidate;
    int64_t num = split.num.value_or(0);
    if (!split.num || used_.count(name)) {
        num = baseCount_[base];
        if (isIllegalName(name))
            name = base + "_" + std::to_string(++num);
    }
    while (used_.count(name))
        name = base + "_" + std::to_string(++num);
    used_.insert(name);
    baseCount_[base] = num;
    return name;
}

} // namespace jointscope
