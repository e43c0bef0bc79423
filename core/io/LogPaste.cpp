// TORCH_LOGS terminal output ("aot_graphs", "aot_joint_graph", "graph_code", "post_grad_graphs", ...).
// torch prints a graph with lazy_format_graph_code(): the message
//   "TRACED GRAPH\n ===== Forward graph 0 =====\n /path/to/file.py class GraphModule(torch.nn.Module):\n def
//   ..."
// and TorchLogsFormatter puts its prefix before every line of the message:
//   "[rank0]:V1122 10:00:00.000000 1234 torch/_functorch/_aot_autograd/graph_compile.py:123] [0/0]
//   [__aot_graphs] "
// print_readable(colored=True) adds ANSI colours when stdout is a terminal. Older torch (2.0/2.1) used Python
// logging's "[2023-10-10 10:00:00,000] [0/0] torch._dynamo.output_graph.__graph_code: [DEBUG] " on the first
// line only. Pastes may also hold bare print_readable() text. Lines of different ranks may interleave: each
// rank is followed separately.
#include "io/TraceLog.h"

#include "io/LogSupport.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

namespace jointscope {

namespace {

using log_support::findGraphModuleClass;
using log_support::indentOf;
using log_support::LineCursor;
using log_support::ProblemSink;
using log_support::trimRight;

struct PasteLine {
    uint32_t number = 0;
    std::string clean;        // the line without ANSI escapes
    std::string_view rank;    // "[rank0]:" or ""
    std::string compileId;    // from "[0/0]" after the prefix
    std::string artifact;     // "aot_graphs" from "[__aot_graphs]" or a logger name ending in ".__aot_graphs"
    std::string_view message; // the logged text (view into clean)
    size_t messageColumn = 0; // 0-based column of the message in the cleaned line
};

std::string_view trimLeft(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    return s;
}

// "[0/0]", "[0/0_1]", "[!0/1/0]": tlparse-style compile ids (torch's trace id); "[!0]": the compiled-autograd
// graph's own id (torch._guards.CompileId.__str__ without a frame).
bool looksLikeCompileId(std::string_view s) {
    if (s.empty())
        return false;
    if (s.size() >= 2 && s.front() == '!' && std::all_of(s.begin() + 1, s.end(), log_support::isDigit))
        return true;
    bool slash = false;
    for (char c : s) {
        if (c == '/')
            slash = true;
        else if (!log_support::isDigit(c) && c != '_' && c != '!' && c != '-')
            return false;
    }
    return slash;
}

// Consumes "[X]" at the start of `rest` (after optional blanks) when accept(X); returns X.
template <typename Accept>
std::optional<std::string_view> takeBracket(std::string_view& rest, Accept accept) {
    std::string_view s = trimLeft(rest);
    if (s.empty() || s.front() != '[')
        return std::nullopt;
    const size_t close = s.find(']');
    if (close == std::string_view::npos)
        return std::nullopt;
    std::string_view inside = s.substr(1, close - 1);
    if (!accept(inside))
        return std::nullopt;
    rest = s.substr(close + 1);
    return inside;
}

// Python logging format of torch 2.0/2.1: "[2023-10-10 10:00:00,000] [0/0] logger.name: [LEVEL] message".
bool parsePythonLoggingPrefix(PasteLine& line, std::string_view text) {
    if (text.size() < 26 || text[0] != '[' || text[5] != '-' || text[8] != '-' || text[11] != ' ' ||
        !log_support::isDigit(text[1]))
        return false;
    const size_t close = text.find("] ");
    if (close == std::string_view::npos || close > 32)
        return false;
    std::string_view rest = text.substr(close + 1);
    if (auto id = takeBracket(rest, looksLikeCompileId))
        line.compileId = std::string(*id);
    rest = trimLeft(rest);
    const size_t colon = rest.find(": [");
    if (colon == std::string_view::npos || rest.substr(0, colon).find(' ') != std::string_view::npos)
        return false;
    const std::string_view logger = rest.substr(0, colon);
    if (const size_t artifact = logger.rfind(".__"); artifact != std::string_view::npos)
        line.artifact = std::string(logger.substr(artifact + 3));
    rest = rest.substr(colon + 2);
    const size_t levelEnd = rest.find(']');
    if (levelEnd == std::string_view::npos)
        return false;
    rest = rest.substr(levelEnd + 1);
    if (!rest.empty() && rest.front() == ' ')
        rest.remove_prefix(1);
    line.message = rest;
    return true;
}

void splitPrefix(PasteLine& line) {
    const std::string_view text = line.clean;
    line.message = text;
    if (const auto prefix = log_support::parseGlogPrefix(text)) {
        line.rank = prefix->rank;
        std::string_view rest = text.substr(prefix->end);
        if (auto id = takeBracket(rest, looksLikeCompileId))
            line.compileId = std::string(*id);
        if (auto artifact = takeBracket(rest, [](std::string_view s) { return s.substr(0, 2) == "__"; }))
            line.artifact = std::string(artifact->substr(2));
        // f"{prefix} {line}": exactly one separating blank.
        if (!rest.empty() && rest.front() == ' ')
            rest.remove_prefix(1);
        line.message = rest;
    } else {
        parsePythonLoggingPrefix(line, text);
    }
    line.messageColumn = static_cast<size_t>(line.message.data() - text.data());
}

// "Forward graph 0" -> "forward"; "__compiled_fn_1" -> "graph_code"; others -> lower-case words joined by
// '_'.
std::string kindOfHeader(std::string_view name) {
    struct Known {
        std::string_view prefix, kind;
    };
    static constexpr Known kKnown[] = {{"Joint graph", "joint"},
                                       {"Forward graph", "forward"},
                                       {"Backward graph", "backward"},
                                       {"Inference graph", "inference"},
                                       {"Compiled autograd graph", "compiled_autograd"},
                                       {"__compiled_fn", "graph_code"}};
    for (const Known& known : kKnown)
        if (name.substr(0, known.prefix.size()) == known.prefix)
            return std::string(known.kind);
    std::string kind;
    for (char c : name) {
        if (std::isalnum(static_cast<unsigned char>(c)))
            kind += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        else if (!kind.empty() && kind.back() != '_')
            kind += '_';
    }
    while (!kind.empty() && kind.back() == '_')
        kind.pop_back();
    return kind.empty() ? "fx" : kind;
}

std::string kindOfArtifact(std::string_view artifact) {
    if (artifact == "graph_code")
        return "graph_code";
    if (artifact == "aot_joint_graph")
        return "joint";
    return "fx";
}

// Finds "===== NAME =====" in `text`; returns NAME and leaves `rest` after the closing marker.
std::optional<std::string> findHeader(std::string_view text, std::string_view& rest) {
    const size_t open = text.find("===== ");
    if (open == std::string_view::npos)
        return std::nullopt;
    const size_t close = text.find(" =====", open + 6);
    if (close == std::string_view::npos)
        return std::nullopt;
    std::string_view name = text.substr(open + 6, close - open - 6);
    while (!name.empty() && name.front() == '=')
        name.remove_prefix(1);
    rest = text.substr(close + 6);
    while (!rest.empty() && rest.front() == '=')
        rest.remove_prefix(1);
    return std::string(trimRight(trimLeft(name)));
}

class PasteIndexer {
public:
    PasteIndexer(std::string_view text, const std::string& fileName)
        : cursor_(text), problems_(index_, fileName) {}

    GraphIndex run() && {
        while (!cursor_.atEnd()) {
            PasteLine line;
            line.number = cursor_.lineNumber();
            line.clean = log_support::stripAnsi(cursor_.next());
            splitPrefix(line);
            Stream& stream = streams_[std::string(line.rank)];
            feed(stream, line);
        }
        for (auto& [rank, stream] : streams_)
            finishStream(stream);
        if (index_.graphs.empty())
            problems_.add(Severity::Error, 1, 1,
                          "expected a graph: 'TRACED GRAPH' / '===== Forward graph 0 =====' followed by "
                          "'class GraphModule(torch.nn.Module):'");
        log_support::finishIndex(index_, problems_);
        return std::move(index_);
    }

private:
    enum class Phase { Idle, AfterTraced, AfterHeader, InBody };

    struct Stream {
        Phase phase = Phase::Idle;
        std::string header; // "Forward graph 0"
        std::string compileId;
        std::string artifact;
        uint32_t headerLine = 0;  // line of TRACED GRAPH or the header
        GraphEntry entry;         // the graph being read
        bool announced = false;   // the graph came after TRACED GRAPH or a header, not as bare Python text
        uint32_t classColumn = 0; // 1-based column of "class" on the graph's first line
        size_t base = 0;          // indentation of the class line; body lines are deeper
        std::string
            blankLines; // blank lines seen in the body, each with its newline; added once more body follows
    };

    void feed(Stream& stream, const PasteLine& line) {
        std::string_view message = line.message;
        if (stream.phase == Phase::InBody) {
            if (trimRight(message).empty()) {
                // Kept as printed (print_readable's blank lines carry the body's indentation), unless
                // trailing.
                stream.blankLines += '\n';
                stream.blankLines.append(message.substr(std::min(stream.base, message.size())));
                return;
            }
            if (indentOf(message) > stream.base) {
                stream.entry.payload += stream.blankLines;
                stream.blankLines.clear();
                stream.entry.payload += '\n';
                stream.entry.payload.append(message.substr(stream.base));
                return;
            }
            finishGraph(stream);
        }
        bool continued =
            false; // part of the line was consumed: a class found later starts at column 0 logically
        if (std::string_view t = trimLeft(message); t.substr(0, 12) == "TRACED GRAPH") {
            reportUnfinished(stream, line.number);
            stream.phase = Phase::AfterTraced;
            stream.header.clear();
            stream.compileId = line.compileId;
            stream.artifact = line.artifact;
            stream.headerLine = line.number;
            message = t.substr(12);
            continued = true;
        }
        std::string_view rest;
        if (auto header = findHeader(message, rest)) {
            if (stream.phase != Phase::AfterTraced) {
                reportUnfinished(stream, line.number);
                stream.compileId = line.compileId;
                stream.artifact = line.artifact;
                stream.headerLine = line.number;
            }
            stream.phase = Phase::AfterHeader;
            stream.header = *header;
            message = rest;
            continued = true;
        }
        const size_t classPos = findGraphModuleClass(message);
        if (classPos != std::string_view::npos) {
            startGraph(stream, line, message, classPos, continued || classPos != indentOf(message));
            return;
        }
        if (trimRight(message).empty() || stream.phase == Phase::Idle)
            return;
        // A header or TRACED GRAPH followed by something other than graph code (e.g. TORCH_LOGS=graph's
        // table).
        problems_.add(Severity::Error, line.number, static_cast<uint32_t>(line.messageColumn + 1),
                      "expected 'class GraphModule(torch.nn.Module):' after " +
                          (stream.header.empty() ? std::string("TRACED GRAPH")
                                                 : "'===== " + stream.header + " ====='") +
                          " (graph not listed)");
        stream.phase = Phase::Idle;
    }

    void startGraph(Stream& stream, const PasteLine& line, std::string_view message, size_t classPos,
                    bool continued) {
        GraphEntry& entry = stream.entry;
        entry = GraphEntry{};
        const bool announced = stream.phase == Phase::AfterHeader || stream.phase == Phase::AfterTraced;
        stream.announced = announced;
        stream.classColumn = static_cast<uint32_t>(line.messageColumn + classPos + 1);
        entry.compileId = announced && !stream.compileId.empty() ? stream.compileId : line.compileId;
        const std::string artifact = announced ? stream.artifact : line.artifact;
        entry.kind =
            !stream.header.empty() && announced ? kindOfHeader(stream.header) : kindOfArtifact(artifact);
        const std::string label = !stream.header.empty() && announced ? stream.header : entry.kind;
        if (label != entry.kind)
            entry.heading = label;
        entry.line = announced ? stream.headerLine : line.number;
        entry.payloadLine = line.number;
        stream.base = continued ? 0 : classPos;
        entry.payloadColumn = static_cast<uint32_t>(line.messageColumn + stream.base);
        entry.payload = std::string(trimRight(message.substr(classPos)));
        stream.phase = Phase::InBody;
        stream.blankLines.clear();
        stream.header.clear();
    }

    void finishGraph(Stream& stream) {
        // Bare Python classes are graphs only when they are shaped like print_readable() output: a paste
        // often holds the user's own script (its nn.Module classes) too. Announced graphs always stay listed
        // (failed if they do not read).
        const std::optional<std::string> notGraph =
            stream.announced ? std::nullopt : log_support::notPrintedGraphReason(stream.entry.payload);
        if (notGraph) {
            const std::string_view first =
                std::string_view(stream.entry.payload).substr(0, stream.entry.payload.find('\n'));
            problems_.add(Severity::Note, stream.entry.payloadLine, stream.classColumn,
                          "'" + std::string(first) + "' is Python source, not a printed graph (" + *notGraph +
                              "); not listed");
        } else {
            stream.entry.index = static_cast<uint32_t>(index_.graphs.size());
            index_.graphs.push_back(std::move(stream.entry));
        }
        stream.entry = GraphEntry{};
        stream.phase = Phase::Idle;
        stream.blankLines.clear();
    }

    void reportUnfinished(Stream& stream, uint32_t lineNo) {
        if (stream.phase == Phase::AfterTraced || stream.phase == Phase::AfterHeader)
            problems_.add(Severity::Error, stream.headerLine, 1,
                          "graph announced here has no 'class ...(torch.nn.Module):' before line " +
                              std::to_string(lineNo) + " (graph not listed)");
        stream.phase = Phase::Idle;
    }

    void finishStream(Stream& stream) {
        if (stream.phase == Phase::InBody)
            finishGraph(stream);
        else if (stream.phase != Phase::Idle)
            problems_.add(Severity::Error, stream.headerLine, 1,
                          "the file ends before the announced graph's 'class ...(torch.nn.Module):'");
    }

    LineCursor cursor_;
    GraphIndex index_;
    ProblemSink problems_;
    std::map<std::string, Stream> streams_; // by rank prefix
};

} // namespace

bool looksLikeLogPaste(std::string_view head) {
    LineCursor cursor(head);
    bool colored = false;
    bool graphClass = false;
    while (!cursor.atEnd()) {
        std::string_view raw = cursor.next();
        colored = colored || raw.find("\x1b[") != std::string_view::npos;
        PasteLine line;
        line.clean = log_support::stripAnsi(raw);
        if (line.clean.find("TRACED GRAPH") != std::string::npos)
            return true;
        splitPrefix(line);
        if (!line.artifact.empty() || !line.compileId.empty())
            return true;
        graphClass = graphClass || findGraphModuleClass(line.message) != std::string_view::npos;
    }
    // Bare print_readable(colored=True) output: plain FX text readers do not expect escapes.
    return colored && graphClass;
}

GraphIndex indexLogPaste(std::string_view text, const std::string& fileName) {
    return PasteIndexer(text, fileName).run();
}

} // namespace jointscope
