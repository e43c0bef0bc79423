// Recursive-descent reader for FX readable text. The grammar is the small Python subset that
// torch.fx's codegen and print_readable() emit; nothing is evaluated. Errors carry file:line:col.
#include "io/FxReader.h"

#include "graph/SymbolicExpr.h"
#include "io/FxAnnotation.h"
#include "io/FxLexer.h"
#include "io/GraphCheck.h"
#include "ops/OpSchema.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <unordered_map>

namespace jointscope {
namespace {

// A joint graph's outputs are the forward outputs, then the gradients; torch 2.x prints an AOT descriptor per
// output, so num_fwd_outputs is the number before the first GradAOTOutput (or None gradient).
std::optional<int64_t> forwardOutputCount(const std::vector<std::string>& descriptors) {
    for (size_t i = 0; i < descriptors.size(); ++i)
        if (descriptors[i].starts_with("GradAOTOutput") || descriptors[i] == "None")
            return static_cast<int64_t>(i);
    return std::nullopt;
}

// Without descriptors (torch <= 2.8, torch 1.13): AOTAutograd's joint returns the forward's outputs, then one
// gradient (or None) per primal, flattened, so the forward's count is the rest. (Checked against the
// descriptors of every torch 2.10 joint graph of the CI log zoo and the sidecars of the torch 1.13 graphs.)
std::optional<int64_t> forwardOutputCountOfJoint(const Graph& joint, const Value& returned) {
    if (!returned.isSequence())
        return std::nullopt;
    const auto primals = std::count_if(joint.nodes().begin(), joint.nodes().end(), [](const Node& n) {
        return n.op == NodeOp::Placeholder && n.name.starts_with("primals");
    });
    const auto outputs = static_cast<int64_t>(returned.items().size());
    return outputs >= primals ? std::optional<int64_t>(outputs - primals) : std::nullopt;
}

using fx::Token;
using fx::TokenKind;

constexpr uint32_t kMaxClassDepth = 64;

// torch symbol names: s0, u1, zuf0, ps3 (sympy symbols that stand for sizes and unbacked values).
bool isSymbolName(std::string_view name) {
    size_t i = 0;
    while (i < name.size() && name[i] >= 'a' && name[i] <= 'z')
        ++i;
    if (i == 0 || i == name.size())
        return false;
    for (; i < name.size(); ++i)
        if (name[i] < '0' || name[i] > '9')
            return false;
    return true;
}

bool isTerminator(const Token& t) {
    if (t.kind == TokenKind::Comment || t.kind == TokenKind::Newline || t.kind == TokenKind::End)
        return true;
    if (t.kind != TokenKind::Op || t.text.size() != 1)
        return false;
    return std::string_view(",)]}:;=").find(t.text[0]) != std::string_view::npos;
}

// "# PlainAOTInput(idx=0)" -> "PlainAOTInput(idx=0)".
std::string_view commentText(const Token& comment) {
    std::string_view text = comment.text.substr(1);
    if (!text.empty() && text.front() == ' ')
        text.remove_prefix(1);
    return text;
}

bool isOpenBracket(const Token& t) {
    return t.isOp("(") || t.isOp("[") || t.isOp("{");
}
bool isCloseBracket(const Token& t) {
    return t.isOp(")") || t.isOp("]") || t.isOp("}");
}

// A token after which an expression may end: a name, a literal or a closing bracket.
bool endsOperand(const Token& t) {
    return t.kind == TokenKind::Name || t.kind == TokenKind::Int || t.kind == TokenKind::Float ||
           t.kind == TokenKind::String || isCloseBracket(t);
}

bool isUnaryOperator(const Token& t) {
    return t.isOp("-") || t.isOp("+") || t.isOp("~");
}

bool isBracket(const Token& t) {
    return isOpenBracket(t) || isCloseBracket(t);
}

// text with the given comments (views into it, in order) cut out.
std::string withoutComments(std::string_view text, const std::vector<std::string_view>& comments) {
    std::string out;
    const char* pos = text.data();
    for (std::string_view c : comments) {
        out.append(pos, c.data());
        pos = c.data() + c.size();
    }
    out.append(pos, text.data() + text.size());
    return out;
}

// Collapses each run of whitespace that holds a line break into one space.
std::string joinLines(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        if (text[i] == '\n' || text[i] == '\r' ||
            ((text[i] == ' ' || text[i] == '\t') && i + 1 < text.size())) {
            size_t j = i;
            bool lineBreak = false;
            while (j < text.size() &&
                   (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r')) {
                lineBreak = lineBreak || text[j] == '\n' || text[j] == '\r';
                ++j;
            }
            if (lineBreak) {
                out += ' ';
                i = j;
                continue;
            }
        }
        out += text[i++];
    }
    return out;
}

// operator module names for the infix forms FX prints (torch.fx.graph.magic_methods).
std::string_view binaryOperatorName(const Token& t) {
    if (t.kind != TokenKind::Op)
        return {};
    static constexpr std::pair<std::string_view, std::string_view> kOps[] = {
        {"+", "operator.add"},       {"-", "operator.sub"},     {"*", "operator.mul"},
        {"//", "operator.floordiv"}, {"/", "operator.truediv"}, {"%", "operator.mod"},
        {"**", "operator.pow"},      {"<<", "operator.lshift"}, {">>", "operator.rshift"},
        {"&", "operator.and_"},      {"|", "operator.or_"},     {"^", "operator.xor"},
        {"@", "operator.matmul"},    {"==", "operator.eq"},     {"!=", "operator.ne"},
        {"<", "operator.lt"},        {">", "operator.gt"},      {"<=", "operator.le"},
        {">=", "operator.ge"},
    };
    for (const auto& [spelling, name] : kOps)
        if (t.text == spelling)
            return name;
    return {};
}

// The in-place forms FX prints as statements (torch.fx.graph.inplace_methods): "a += b" is operator.iadd.
std::string_view inPlaceOperatorName(const Token& t) {
    if (t.kind != TokenKind::Op)
        return {};
    static constexpr std::pair<std::string_view, std::string_view> kOps[] = {
        {"+", "operator.iadd"},       {"-", "operator.isub"},     {"*", "operator.imul"},
        {"//", "operator.ifloordiv"}, {"/", "operator.itruediv"}, {"%", "operator.imod"},
        {"**", "operator.ipow"},      {"<<", "operator.ilshift"}, {">>", "operator.irshift"},
        {"&", "operator.iand"},       {"|", "operator.ior"},      {"^", "operator.ixor"},
        {"@", "operator.imatmul"},
    };
    for (const auto& [spelling, name] : kOps)
        if (t.text == spelling)
            return name;
    return {};
}

std::string_view unaryOperatorName(const Token& t) {
    if (t.isOp("-"))
        return "operator.neg";
    if (t.isOp("+"))
        return "operator.pos";
    if (t.isOp("~"))
        return "operator.invert";
    return {};
}

bool isLayoutName(std::string_view name) {
    for (std::string_view l : {"strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
                               "sparse_bsc", "_mkldnn", "jagged"})
        if (name == l)
            return true;
    return false;
}

bool isMemoryFormatName(std::string_view name) {
    for (std::string_view m : {"contiguous_format", "channels_last", "channels_last_3d", "preserve_format"})
        if (name == m)
            return true;
    return false;
}

// Node names (views into the source) to ids, in one flat open-addressing array: a 100k-node graph looks up
// every argument name, and a node-based std::unordered_map costs several cache misses per lookup.
class NameTable {
public:
    void reserve(size_t count) {
        size_t capacity = 16;
        while (capacity * 7 < count * 10) // load factor at most 0.7
            capacity *= 2;
        if (capacity > slots_.size())
            rehash(capacity);
    }

    std::optional<NodeId> find(std::string_view name) const {
        if (slots_.empty())
            return std::nullopt;
        const uint64_t hash = hashOf(name);
        const size_t mask = slots_.size() - 1;
        for (size_t i = hash & mask;; i = (i + 1) & mask) {
            const Slot& slot = slots_[i];
            if (slot.id == kEmpty)
                return std::nullopt;
            if (slot.id != kErased && slot.hash == static_cast<uint32_t>(hash) && slot.key() == name)
                return slot.id;
        }
    }

    // Adds name -> id; when the name is taken, returns the id it already has instead.
    std::optional<NodeId> insert(std::string_view name, NodeId id) {
        if ((used_ + 1) * 10 > slots_.size() * 7)
            rehash(slots_.empty() ? 16 : slots_.size() * 2);
        const uint64_t hash = hashOf(name);
        const size_t mask = slots_.size() - 1;
        size_t i = hash & mask;
        for (; slots_[i].id != kEmpty; i = (i + 1) & mask)
            if (slots_[i].id != kErased && slots_[i].hash == static_cast<uint32_t>(hash) &&
                slots_[i].key() == name)
                return slots_[i].id;
        slots_[i] = Slot{name.data(), static_cast<uint32_t>(name.size()), static_cast<uint32_t>(hash), id};
        ++used_;
        return std::nullopt;
    }

    void erase(std::string_view name) {
        if (slots_.empty())
            return;
        const uint64_t hash = hashOf(name);
        const size_t mask = slots_.size() - 1;
        for (size_t i = hash & mask; slots_[i].id != kEmpty; i = (i + 1) & mask)
            if (slots_[i].id != kErased && slots_[i].hash == static_cast<uint32_t>(hash) &&
                slots_[i].key() == name) {
                slots_[i].id = kErased; // stays counted in used_ until the next rehash
                return;
            }
    }

private:
    static constexpr NodeId kEmpty = UINT32_MAX;
    static constexpr NodeId kErased = UINT32_MAX - 1;

    struct Slot { // 24 bytes
        const char* data = nullptr;
        uint32_t size = 0;
        uint32_t hash = 0;
        NodeId id = kEmpty;

        std::string_view key() const { return {data, size}; }
    };

    static uint64_t hashOf(std::string_view s) {
        uint64_t h = 14695981039346656037ull; // FNV-1a
        for (char c : s)
            h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
        return h ^ (h >> 29);
    }

    void rehash(size_t capacity) {
        std::vector<Slot> old = std::move(slots_);
        slots_.assign(capacity, Slot{});
        used_ = 0;
        for (const Slot& slot : old)
            if (slot.id != kEmpty && slot.id != kErased)
                insert(slot.key(), slot.id);
    }

    std::vector<Slot> slots_;
    size_t used_ = 0;
};

// One logical line and the column its first token starts at.
struct Line {
    std::vector<Token> tokens;
    uint32_t indent = 0;

    const Token& first() const { return tokens.front(); }
    bool isEnd() const { return first().kind == TokenKind::End; }
    bool isBlank() const { return first().kind == TokenKind::Newline; }
    bool isCommentOnly() const { return first().kind == TokenKind::Comment; }
};

// A forward() parameter or a body declaration ("primals_1: "f32[4]"  # PlainAOTInput(idx=0)").
struct Param {
    Token nameTok;
    std::string_view annotation; // into the source text (or ownedNames_ when it had escapes)
    Token annotationTok;
    bool hasAnnotation = false;
    std::string descriptor;
    bool hasDefault = false;
    Value defaultValue;
};

// State of the forward() being parsed. Placeholders wait in `pending` until the first other node, so
// dynamo's "l_x_ = L_x_" can still rename them; every later node goes straight into the graph.
struct Scope {
    explicit Scope(Graph& g) : graph(g) {}

    Graph& graph;
    std::vector<Node> pending;
    bool flushed = false;
    size_t reserveHint = 0; // lines of the source: about one node each
    NameTable byName;
    std::vector<Param> params;
    std::vector<Param> declarations;
    std::vector<std::pair<std::string_view, Token>> symbolUses; // checked once the body is complete
    std::vector<std::string> trace;                             // current "# File:" group
    bool inTraceGroup = false;
    // The checkpoint facts of torch's node summary comments ("# ac_graph_id: 3 - PREFER_RECOMPUTE File: ...",
    // torch >= 2.5): they hold for every node until the next summary.
    std::string recompute;
    int64_t acGraphId = -1;
    std::string
        annotation; // node.meta["custom"] of the summary ("{'call_id': 3}"), for the nodes until the next
    bool placeholdersCreated = false;
    bool returned = false;

    size_t size() const { return flushed ? graph.size() : pending.size(); }
    Node& node(NodeId id) { return flushed ? graph.node(id) : pending[id]; }
    void flush() {
        if (flushed)
            return;
        // The line count undercounts nodes when placeholders are unpacked many to a line (torch 1.13's
        // "primals_1, primals_2, ... = fx_pytree.tree_flatten_spec(...)"): growing past it would move every
        // node once more.
        if (reserveHint)
            graph.reserve(reserveHint + pending.size());
        for (Node& n : pending)
            graph.addNode(std::move(n));
        pending = {};
        flushed = true;
    }
};

enum class AtomResult { Ok, NotAtom, Error };
enum class RhsResult { Node, Rename, Error };

class FxParser {
public:
    FxParser(std::string_view text, const FxReadOptions& options)
        : text_(text), options_(options), lexer_(text) {}

    Expected<Graph> parse();

private:
    // --- Diagnostics ---
    bool fail(uint32_t line, uint32_t col, std::string message) {
        if (!error_)
            error_ = makeError(
                SourceLocation{options_.fileName, options_.firstLine + line - 1, col + options_.columnOffset},
                std::move(message));
        return false;
    }
    bool fail(const Token& at, std::string message) { return fail(at.line, at.col, std::move(message)); }
    RhsResult rhsFail(const Token& at, std::string message) {
        fail(at, std::move(message));
        return RhsResult::Error;
    }
    RhsResult rhsExpected(const Token& at, std::string_view what) {
        expected(at, what);
        return RhsResult::Error;
    }
    AtomResult atomFail(const Token& at, std::string message) {
        fail(at, std::move(message));
        return AtomResult::Error;
    }
    bool expected(const Token& at, std::string_view what) {
        return fail(at, "expected " + std::string(what) + ", found " + fx::describeToken(at));
    }
    uint32_t fileLine(const Token& t) const { return options_.firstLine + t.line - 1; }

    // --- Scratch buffers (one per nesting level of argument lists and sequences) ---
    std::vector<Value>& takeScratch() {
        if (scratchDepth_ == scratchItems_.size())
            scratchItems_.emplace_back();
        std::vector<Value>& buffer = scratchItems_[scratchDepth_++];
        buffer.clear();
        return buffer;
    }
    // Gives back the innermost buffer; when `ok`, its values are moved to the end of `into` first.
    bool releaseScratch(std::vector<Value>& into, bool ok) {
        std::vector<Value>& buffer = scratchItems_[--scratchDepth_];
        if (ok) {
            into.reserve(into.size() + buffer.size());
            for (Value& v : buffer)
                into.push_back(std::move(v));
        }
        buffer.clear();
        return ok;
    }

    // --- Lines ---
    bool loadLine();
    void consumeLine() { lineLoaded_ = false; }
    // The ':' ending a class or def header (`colonWhere` names what it follows), then the end of its line.
    bool endHeader(std::string_view colonWhere, std::string_view lineEnd) {
        if (!expectOp(":", colonWhere))
            return false;
        skipComments();
        if (tok().kind != TokenKind::Newline && tok().kind != TokenKind::End)
            return expected(tok(), lineEnd);
        consumeLine();
        return true;
    }
    // A block's first line sets its indentation (`indent`, 0 until then); every later line keeps it.
    bool keepsIndent(uint32_t& indent) {
        if (indent == 0)
            indent = line_.indent;
        else if (line_.indent != indent)
            return fail(line_.first(), line_.indent > indent ? "unexpected indentation"
                                                             : "unindent does not match any outer level");
        return true;
    }
    bool skipBlankAndCommentLines();
    bool isImportLine() const { return line_.first().isName("import") || line_.first().isName("from"); }
    bool isWrapRegistration() const {
        const std::vector<Token>& t = line_.tokens;
        return t.size() > 8 && t[0].isName("torch") && t[2].isName("fx") && t[4].isName("_symbolic_trace") &&
               t[6].isName("wrap") && t[7].isOp("(");
    }
    // Upper bound on the node count of the top-level graph, to size its tables once.
    size_t lineCountHint() const {
        size_t lines = 1;
        for (const char *p = text_.data(), *end = p + text_.size();
             (p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)))); ++p)
            ++lines;
        return lines;
    }

    // --- Tokens of the current line ---
    const Token& tok(size_t ahead = 0) const {
        const size_t i = pos_ + ahead;
        return i < line_.tokens.size() ? line_.tokens[i] : line_.tokens.back();
    }
    const Token& take() {
        const Token& t = tok();
        if (pos_ + 1 < line_.tokens.size())
            ++pos_;
        return t;
    }
    bool acceptOp(std::string_view op) {
        if (!tok().isOp(op))
            return false;
        take();
        return true;
    }
    bool expectOp(std::string_view op, std::string_view context = {}) {
        if (acceptOp(op))
            return true;
        std::string what = "'" + std::string(op) + "'";
        if (!context.empty())
            what += " " + std::string(context);
        return expected(tok(), what);
    }
    bool expectName(const Token** out, std::string_view what) {
        if (tok().kind != TokenKind::Name)
            return expected(tok(), what);
        *out = &take();
        return true;
    }
    bool atStatementEnd() const {
        const Token& t = tok();
        return t.kind == TokenKind::Newline || t.kind == TokenKind::End || t.kind == TokenKind::Comment ||
               t.isOp(";");
    }
    void skipComments() {
        while (tok().kind == TokenKind::Comment)
            take();
    }
    std::string_view sourceSpan(const Token& first, const Token& last) const {
        return text_.substr(first.offset, last.endOffset() - first.offset);
    }

    // --- Structure ---
    bool parseClass(Graph& graph, uint32_t depth);
    bool parseForward(Graph& graph, size_t reserveHint);
    bool parseParameters(Scope& scope);
    bool parseAnnotationText(std::string_view& text, Token& at);
    bool parseBody(uint32_t defIndent);
    void handleCommentLine(const Token& comment);
    void resolveSubgraphs(Graph& graph);

    // --- Statements ---
    bool parseStatement();
    bool parseAnnotatedStatement();
    bool parseFlatten();
    bool parseAssignment(const Token& nameTok, const std::string_view* annotation,
                         const Token* annotationTok);
    bool parseInPlaceStatement();
    bool finishNode(Node&& node, const Token& nameTok, const Token& rhsStart,
                    const std::string_view* annotation, const Token* annotationTok);
    bool parseReturn();
    bool parseStatementEnd();
    bool ensurePlaceholders(const std::vector<const Token*>* flattenNames, const Token& at);
    bool applyAnnotation(Node& node, std::string_view annotation, const Token& at);
    bool defineNode(Node&& node, const Token& at);
    RhsResult parseRhs(Node& node);
    bool parseSelfPath(std::string& path);
    bool isSelfPathStart() const;
    bool parseCallArgs(std::vector<Value>& args, std::vector<std::pair<std::string, Value>>& kwargs);
    // The parsed target of a call_function text; also sets callSchema_ to its op schema (or nullptr).
    const Target& functionTarget(std::string_view text);

    // --- Values ---
    bool parseValue(Value& out);
    AtomResult parseAtom(Value& out);
    bool parseSequence(std::string_view close, std::vector<Value>& items, bool* sawComma);
    bool parseDict(Value& out);
    AtomResult parseNamedAtom(Value& out);
    AtomResult parseDevice(Value& out);
    bool parseSpan(Value& out);
    bool parseNumber(const Token& t, bool negative, Value& out);
    std::optional<NodeId> findNode(std::string_view name) const { return scope_->byName.find(name); }
    bool isNodeName(const Token& t) const {
        return t.kind == TokenKind::Name && findNode(t.text).has_value();
    }

    std::string_view text_;
    FxReadOptions options_;
    fx::FxLexer lexer_;
    Line line_;
    bool lineLoaded_ = false;
    size_t pos_ = 0;
    std::optional<Diagnostic> error_;
    Scope* scope_ = nullptr;
    struct CachedTarget {
        Target target;
        std::optional<OpSchema> schema;
    };
    std::unordered_map<std::string_view, CachedTarget> targetCache_;
    const OpSchema* callSchema_ = nullptr; // of the target parseRhs looked up last
    struct CachedAnnotation {
        OutputKind kind;
        std::vector<TensorMeta> outputs;
        std::string symValue;
    };
    static constexpr size_t kMaxCachedAnnotations = 4096;
    std::unordered_map<std::string_view, CachedAnnotation> annotationCache_;
    // Per-nesting-level buffers for argument lists, so the IR's vectors get their exact size in one go.
    std::deque<std::vector<Value>> scratchItems_;
    bool collectItemComments_ = false;
    std::vector<std::string> itemComments_;
    size_t scratchDepth_ = 0;
    std::deque<std::string> ownedNames_; // names not in the source text ("output_1")
    std::string scratch_;
};

// ---------------------------------------------------------------------------------------------------------
// Lines and structure

bool FxParser::loadLine() {
    if (lineLoaded_)
        return true;
    pos_ = 0;
    if (!lexer_.nextLine(line_.tokens)) {
        const fx::LexError& e = lexer_.error();
        return fail(e.line, e.col, e.message);
    }
    line_.indent = line_.first().col - 1;
    lineLoaded_ = true;
    return true;
}

bool FxParser::skipBlankAndCommentLines() {
    while (true) {
        if (!loadLine())
            return false;
        if (!line_.isBlank() && !line_.isCommentOnly())
            return true;
        consumeLine();
    }
}

Expected<Graph> FxParser::parse() {
    if (text_.size() >= UINT32_MAX)
        return makeError(SourceLocation{options_.fileName, options_.firstLine, 1}, "input larger than 4 GiB");
    Graph graph;
    bool ok = skipBlankAndCommentLines();
    // gm.code may start with imports and torch.fx._symbolic_trace.wrap("fn") registrations.
    while (ok && line_.indent == 0 && (isImportLine() || isWrapRegistration())) {
        consumeLine();
        ok = skipBlankAndCommentLines();
    }
    // str(ExportedProgram): "ExportedProgram:" then the indented module, then signature lines.
    bool exported = false;
    if (ok && line_.first().isName("ExportedProgram") && tok(1).isOp(":") &&
        tok(2).kind == TokenKind::Newline) {
        exported = true;
        consumeLine();
        ok = skipBlankAndCommentLines();
    }
    if (ok) {
        const Token& first = line_.first();
        if (first.isName("class")) {
            ok = parseClass(graph, 0);
        } else if (first.isName("def")) {
            graph.name = "forward";
            ok = parseForward(graph, lineCountHint());
            if (ok) {
                graph.computeUsers();
                inferTupleOutputs(graph);
            }
        } else if (first.kind == TokenKind::End) {
            ok = fail(first, text_.find_first_not_of(" \t\r\n") == std::string_view::npos
                                 ? "empty input: expected 'class' or 'def forward'"
                                 : "expected 'class' or 'def forward', found end of input");
        } else {
            ok = expected(first, "'class' or 'def forward'");
        }
    }
    if (ok)
        ok = skipBlankAndCommentLines();
    if (ok && !line_.isEnd()) {
        const bool trailer = exported && ((line_.first().isName("Graph") && tok(1).isName("signature")) ||
                                          (line_.first().isName("Range") && tok(1).isName("constraints")));
        if (!trailer)
            ok = expected(line_.first(), "end of input after the graph module");
    }
    if (!ok)
        return *error_;
    return graph;
}

bool FxParser::parseClass(Graph& graph, uint32_t depth) {
    const Token classTok = line_.first();
    if (depth > kMaxClassDepth)
        return fail(classTok, "classes nested deeper than " + std::to_string(kMaxClassDepth) + " levels");
    const uint32_t classIndent = line_.indent;
    pos_ = 1;
    // The name may be "<lambda>", so take the source text up to '('.
    const Token& nameStart = tok();
    const Token* nameEnd = nullptr;
    while (!tok().isOp("(") && !tok().isOp(":") && !atStatementEnd())
        nameEnd = &take();
    if (!nameEnd)
        return expected(tok(), "class name");
    graph.name = std::string(sourceSpan(nameStart, *nameEnd));
    if (acceptOp("(")) {
        for (int depthInLine = 0; !(depthInLine == 0 && tok().isOp(")"));) {
            const Token& t = take();
            if (isOpenBracket(t))
                ++depthInLine;
            else if (isCloseBracket(t))
                --depthInLine;
            else if (t.kind == TokenKind::Newline || t.kind == TokenKind::End)
                return expected(t, "')' closing the base class list");
        }
        take();
    }
    if (!endHeader("after the class header", "end of line after the class header"))
        return false;

    bool hasForward = false;
    uint32_t bodyIndent = 0;
    while (true) {
        if (!skipBlankAndCommentLines())
            return false;
        if (line_.isEnd() || line_.indent <= classIndent)
            break;
        if (!keepsIndent(bodyIndent))
            return false;
        const Token& first = line_.first();
        if (first.isName("def")) {
            if (hasForward)
                return fail(first,
                            "class '" + graph.name + "' defines a second method; expected one forward()");
            if (!parseForward(graph, depth == 0 ? lineCountHint() : 0))
                return false;
            hasForward = true;
        } else if (first.isName("class")) {
            auto sub = std::make_unique<Graph>();
            if (!parseClass(*sub, depth + 1))
                return false;
            graph.addSubgraph(std::move(sub));
        } else {
            return expected(first, "'def forward' or a nested 'class' in the class body");
        }
    }
    if (!hasForward)
        return fail(classTok, "class '" + graph.name + "' has no 'def forward'");
    resolveSubgraphs(graph);
    graph.computeUsers();
    inferTupleOutputs(graph);
    return true;
}

void FxParser::resolveSubgraphs(Graph& graph) {
    if (graph.subgraphs().empty())
        return;
    for (NodeId id = 0; id < graph.size(); ++id) {
        Node& node = graph.node(id);
        if (node.op == NodeOp::GetAttr)
            node.subgraph = graph.findSubgraph(node.target.text);
    }
}

bool FxParser::parseForward(Graph& graph, size_t reserveHint) {
    Scope scope(graph);
    scope_ = &scope;
    scope.reserveHint = reserveHint;
    if (reserveHint) {
        graph.reserve(reserveHint);
        scope.byName.reserve(reserveHint);
    }
    const uint32_t defIndent = line_.indent;
    pos_ = 1;
    const Token* name = nullptr;
    if (!expectName(&name, "method name after 'def'") || !expectOp("(", "after the method name") ||
        !parseParameters(scope))
        return false;
    if (acceptOp("->")) {
        while (!tok().isOp(":") && !atStatementEnd())
            take();
    }
    if (!endHeader("after the parameter list", "end of line after the def header"))
        return false;

    if (!parseBody(defIndent))
        return false;

    for (const auto& [symbol, at] : scope.symbolUses)
        if (auto id = findNode(symbol))
            return fail(at, "use of undefined node '" + std::string(symbol) +
                                "' (it is defined later, at line " +
                                std::to_string(scope.node(*id).meta.sourceLine) + ")");
    scope.flush();
    scope_ = nullptr;
    return true;
}

bool FxParser::parseParameters(Scope& scope) {
    auto attachDescriptors = [&] {
        while (tok().kind == TokenKind::Comment) {
            const Token& c = take();
            if (!scope.params.empty() && scope.params.back().descriptor.empty()) {
                std::string_view text = c.text.substr(1);
                if (!text.empty() && text.front() == ' ')
                    text.remove_prefix(1);
                scope.params.back().descriptor = std::string(text);
            }
        }
    };
    skipComments();
    const Token* self = nullptr;
    if (!expectName(&self, "'self' as the first parameter"))
        return false;
    if (self->text != "self")
        return fail(*self, "expected 'self' as the first parameter, found " + fx::describeToken(*self));
    while (true) {
        attachDescriptors();
        if (acceptOp(")"))
            return true;
        if (!expectOp(",", "or ')' in the parameter list"))
            return false;
        attachDescriptors();
        if (acceptOp(")"))
            return true;
        Param param;
        if (tok().kind != TokenKind::Name)
            return expected(tok(), "a parameter name");
        param.nameTok = take();
        if (acceptOp(":")) {
            param.hasAnnotation = true;
            if (!parseAnnotationText(param.annotation, param.annotationTok))
                return false;
        }
        if (acceptOp("=")) {
            param.hasDefault = true;
            if (!parseValue(param.defaultValue))
                return false;
        }
        scope.params.push_back(std::move(param));
    }
}

// An annotation is a string ("f32[8][1]cuda:0", 2.2+) or bare tokens (f32[8], torch 2.0 / 2.1) up to
// '=', ',', ')', ';' or the end of the statement.
bool FxParser::parseAnnotationText(std::string_view& text, Token& at) {
    at = tok();
    if (tok().kind == TokenKind::String) {
        const std::string_view literal = take().text;
        at.col += 1; // column of the annotation text itself, inside the quotes
        if (literal.find('\\') == std::string_view::npos) {
            text = literal.substr(1, literal.size() - 2);
            return true;
        }
        std::string& decoded = ownedNames_.emplace_back();
        if (!fx::decodeStringLiteral(literal, decoded))
            return fail(at, "malformed string literal in annotation");
        text = decoded;
        return true;
    }
    const Token* last = nullptr;
    int depth = 0;
    while (true) {
        const Token& t = tok();
        if (depth == 0 && (isTerminator(t) || isCloseBracket(t)))
            break;
        if (t.kind == TokenKind::Newline || t.kind == TokenKind::End)
            break;
        if (isOpenBracket(t))
            ++depth;
        else if (isCloseBracket(t))
            --depth;
        last = &take();
    }
    if (!last)
        return expected(tok(), "a type annotation after ':'");
    text = sourceSpan(at, *last);
    return true;
}

// The leading " Annotation: {...}", "ac_graph_id: N - POLICY", "recompute: POLICY" or "ac_graph_id: N" of a
// node summary comment (torch.fx's append_stacktrace_summary); returns false when the comment has none.
bool readCheckpointSummary(std::string_view& text, std::string& recompute, int64_t& acGraphId,
                           std::string& annotation) {
    bool found = false;
    if (text.starts_with("Annotation: {")) {
        const size_t close = text.find("} ");
        const size_t end = close == std::string_view::npos ? text.size() : close + 1;
        annotation = std::string(text.substr(12, end - 12));
        text.remove_prefix(std::min(end + 1, text.size()));
        found = true;
    }
    auto word = [&]() {
        const size_t end = std::min(text.find(' '), text.size());
        std::string_view w = text.substr(0, end);
        text.remove_prefix(std::min(end + 1, text.size()));
        return w;
    };
    if (text.starts_with("ac_graph_id: ")) {
        text.remove_prefix(13);
        const std::string_view id = word();
        int64_t value = -1;
        std::from_chars(id.data(), id.data() + id.size(), value);
        acGraphId = value;
        if (text.starts_with("- ")) {
            text.remove_prefix(2);
            recompute = std::string(word());
        }
        return true;
    }
    if (text.starts_with("recompute: ")) {
        text.remove_prefix(11);
        recompute = std::string(word());
        return true;
    }
    return found;
}

void FxParser::handleCommentLine(const Token& comment) {
    std::string_view text = comment.text.substr(1);
    if (!text.empty() && text.front() == ' ')
        text.remove_prefix(1);
    // torch <= 2.10 printed its node summaries behind a second "# " ("# # ac_graph_id: 3 - MUST_SAVE ...").
    while (text.starts_with("# "))
        text.remove_prefix(2);
    Scope& s = *scope_;
    std::string recompute, annotation;
    int64_t acGraphId = -1;
    const bool summary = readCheckpointSummary(text, recompute, acGraphId, annotation);
    // torch 2.x prints the forward node's trace for a node autograd made ("autograd_backward").
    const bool backwardOf = text.starts_with("Backward of forward node: ");
    if (summary || backwardOf ||
        (!s.inTraceGroup && (text.starts_with("File:") || text.starts_with("No stacktrace")))) {
        // A new node summary (torch prints one whenever it changes): its checkpoint facts replace the
        // previous ones, none when it shows none.
        s.recompute = std::move(recompute);
        s.acGraphId = acGraphId;
        s.annotation = std::move(annotation);
        s.inTraceGroup = false;
    }
    if (s.inTraceGroup) {
        s.trace.emplace_back(text);
    } else if (text.substr(0, 5) == "File:" || backwardOf) {
        s.trace.assign(1, std::string(text));
        s.inTraceGroup = true;
    } else {
        // "# No stacktrace found for following nodes" and free comments end the current group.
        s.trace.clear();
    }
}

bool FxParser::parseBody(uint32_t defIndent) {
    Scope& s = *scope_;
    uint32_t bodyIndent = 0;
    while (true) {
        if (!loadLine())
            return false;
        if (line_.isEnd())
            break;
        if (line_.isBlank()) {
            s.trace.clear();
            s.inTraceGroup = false;
            consumeLine();
            continue;
        }
        if (line_.isCommentOnly()) {
            handleCommentLine(line_.first());
            consumeLine();
            continue;
        }
        s.inTraceGroup = false;
        if (line_.indent <= defIndent)
            break;
        if (!keepsIndent(bodyIndent))
            return false;
        if (s.returned)
            return fail(line_.first(), "unexpected statement after 'return'");
        if (!parseStatement())
            return false;
        consumeLine();
    }
    if (!s.returned) {
        if (line_.isEnd())
            return fail(line_.first(),
                        "unexpected end of input: expected a 'return' statement ending forward() "
                        "(truncated file?)");
        return expected(line_.first(), "a 'return' statement ending forward()");
    }
    return true;
}

// ---------------------------------------------------------------------------------------------------------
// Statements

bool FxParser::parseStatement() {
    const Token& first = tok();
    if (first.isName("return"))
        return parseReturn();
    if (first.kind == TokenKind::Name) {
        if (tok(1).isOp(","))
            return parseFlatten();
        if (tok(1).isOp(":"))
            return parseAnnotatedStatement();
        if (tok(1).isOp("=")) {
            const Token& nameTok = take();
            take();
            return parseAssignment(nameTok, nullptr, nullptr);
        }
        if (tok(1).isOp("[") ||
            (!inPlaceOperatorName(tok(1)).empty() && tok(2).isOp("=") && tok(2).offset == tok(1).endOffset()))
            return parseInPlaceStatement();
    }
    return expected(first, "a statement ('name = ...', 'name: \"annotation\" = ...' or 'return')");
}

bool FxParser::parseAnnotatedStatement() {
    Scope& s = *scope_;
    size_t firstDeclaration = s.declarations.size();
    while (true) {
        const Token& nameTok = take();
        take(); // ':'
        std::string_view annotation;
        Token annotationTok;
        if (!parseAnnotationText(annotation, annotationTok))
            return false;
        if (acceptOp("="))
            return parseAssignment(nameTok, &annotation, &annotationTok);
        // A declaration without value: the placeholder list of a 2.x joint graph.
        if (s.placeholdersCreated)
            return fail(nameTok, "declaration of '" + std::string(nameTok.text) +
                                     "' after the graph's placeholders were bound; expected '='");
        Param decl;
        decl.nameTok = nameTok;
        decl.annotation = annotation;
        decl.annotationTok = annotationTok;
        decl.hasAnnotation = true;
        s.declarations.push_back(std::move(decl));
        if (acceptOp(";") && tok().kind == TokenKind::Name && tok(1).isOp(":"))
            continue;
        break;
    }
    if (tok().kind == TokenKind::Comment) {
        std::string_view text = take().text.substr(1);
        if (!text.empty() && text.front() == ' ')
            text.remove_prefix(1);
        for (size_t i = firstDeclaration; i < s.declarations.size(); ++i)
            s.declarations[i].descriptor = std::string(text);
    }
    if (tok().kind != TokenKind::Newline && tok().kind != TokenKind::End)
        return expected(tok(), "'=' or end of line after the annotation");
    return true;
}

bool FxParser::parseFlatten() {
    std::vector<const Token*> names;
    while (tok().kind == TokenKind::Name) {
        names.push_back(&take());
        if (!acceptOp(","))
            break;
    }
    const Token& eq = tok();
    if (!expectOp("=", "after the unpacked names"))
        return false;
    const Token* a = nullptr;
    const Token* b = nullptr;
    if (!expectName(&a, "fx_pytree.tree_flatten_spec(...)") || a->text != "fx_pytree" || !acceptOp(".") ||
        !expectName(&b, "tree_flatten_spec") || b->text != "tree_flatten_spec" || !tok().isOp("("))
        return fail(eq,
                    "expected 'fx_pytree.tree_flatten_spec(...)' after a tuple of names (only placeholder "
                    "unpacking is supported)");
    for (int depth = 0;;) {
        const Token& t = take();
        if (isOpenBracket(t))
            ++depth;
        else if (isCloseBracket(t) && --depth == 0)
            break;
    }
    if (scope_->placeholdersCreated)
        return fail(*names.front(), "tree_flatten_spec must come before the graph's first node");
    return ensurePlaceholders(&names, *names.front()) && parseStatementEnd();
}

bool FxParser::ensurePlaceholders(const std::vector<const Token*>* flattenNames, const Token& at) {
    Scope& s = *scope_;
    if (s.placeholdersCreated)
        return true;
    s.placeholdersCreated = true;
    // With tree_flatten_spec the def parameters are pytree containers; the unpacked names are the inputs.
    std::vector<Param> inputs;
    if (flattenNames) {
        inputs.reserve(flattenNames->size());
        for (const Token* name : *flattenNames) {
            Param p;
            p.nameTok = *name;
            inputs.push_back(std::move(p));
        }
    } else {
        inputs = std::move(s.params);
    }
    std::unordered_map<std::string_view, size_t> declared;
    for (size_t i = 0; i < s.declarations.size(); ++i)
        declared.emplace(s.declarations[i].nameTok.text, i);
    std::vector<bool> used(s.declarations.size(), false);
    s.pending.reserve(inputs.size());
    for (Param& p : inputs) {
        if (auto it = declared.find(p.nameTok.text); it != declared.end()) {
            Param& decl = s.declarations[it->second];
            used[it->second] = true;
            p.annotation = decl.annotation;
            p.annotationTok = decl.annotationTok;
            p.hasAnnotation = true;
            if (!decl.descriptor.empty())
                p.descriptor = decl.descriptor;
        }
        Node node;
        node.name = std::string(p.nameTok.text);
        node.op = NodeOp::Placeholder;
        node.target = Target::name(p.nameTok.text);
        node.meta.descriptor = std::move(p.descriptor);
        node.meta.sourceLine = fileLine(p.nameTok);
        if (p.hasDefault)
            node.args.push_back(std::move(p.defaultValue));
        if (p.hasAnnotation && !applyAnnotation(node, p.annotation, p.annotationTok))
            return false;
        if (!defineNode(std::move(node), p.nameTok))
            return false;
    }
    for (size_t i = 0; i < used.size(); ++i)
        if (!used[i])
            return fail(s.declarations[i].nameTok, "declared input '" +
                                                       std::string(s.declarations[i].nameTok.text) +
                                                       "' is not among the graph's placeholders (at " +
                                                       std::to_string(fileLine(at)) + ")");
    return true;
}

bool FxParser::applyAnnotation(Node& node, std::string_view annotation, const Token& at) {
    // Large graphs repeat a few hundred distinct annotations; copying a parsed one is cheaper.
    if (auto it = annotationCache_.find(annotation); it != annotationCache_.end()) {
        node.outputKind = it->second.kind;
        node.outputs = it->second.outputs;
        node.symValue = it->second.symValue;
        return true;
    }
    fx::AnnotationError error;
    if (!fx::parseAnnotation(annotation, node, error))
        return fail(at.line, at.col + error.column, error.message);
    if (annotationCache_.size() < kMaxCachedAnnotations)
        annotationCache_.emplace(annotation, CachedAnnotation{node.outputKind, node.outputs, node.symValue});
    return true;
}

bool FxParser::defineNode(Node&& node, const Token& at) {
    Scope& s = *scope_;
    const std::string_view key =
        at.text == node.name ? at.text : std::string_view(ownedNames_.emplace_back(node.name));
    if (auto existing = s.byName.insert(key, static_cast<NodeId>(s.size())))
        return fail(at, "duplicate node name '" + node.name + "' (first defined at line " +
                            std::to_string(s.node(*existing).meta.sourceLine) + ")");
    if (node.op == NodeOp::Placeholder && !s.flushed) {
        s.pending.push_back(std::move(node));
        return true;
    }
    s.flush();
    s.graph.addNode(std::move(node));
    return true;
}

bool FxParser::parseAssignment(const Token& nameTok, const std::string_view* annotation,
                               const Token* annotationTok) {
    Scope& s = *scope_;
    if (!ensurePlaceholders(nullptr, nameTok))
        return false;
    Node node;
    node.name = std::string(nameTok.text);
    node.meta.sourceLine = fileLine(nameTok);
    const Token& rhsStart = tok();
    switch (parseRhs(node)) {
    case RhsResult::Error:
        return false;
    case RhsResult::Rename: {
        // Dynamo's "l_x_ = L_x_": the placeholder named L_x_ in the signature is the node l_x_.
        const NodeId id = *findNode(rhsStart.text);
        Node& placeholder = s.node(id);
        if (s.flushed || placeholder.op != NodeOp::Placeholder || placeholder.name != placeholder.target.text)
            return fail(rhsStart, "expected an expression; '" + std::string(rhsStart.text) +
                                      "' is not a placeholder that can be renamed");
        if (findNode(nameTok.text))
            return fail(nameTok, "duplicate node name '" + node.name + "'");
        s.byName.erase(rhsStart.text);
        s.byName.insert(nameTok.text, id);
        placeholder.name = node.name;
        return parseStatementEnd();
    }
    case RhsResult::Node:
        break;
    }
    return finishNode(std::move(node), nameTok, rhsStart, annotation, annotationTok);
}

// FX prints an in-place operator node as a statement on its first argument, then binds the node's name:
// "a += b;  name = a" (operator.iadd(a, b)) and "a[i] = b;  name = a" (operator.setitem(a, i, b)).
bool FxParser::parseInPlaceStatement() {
    const Token& targetTok = tok();
    if (!ensurePlaceholders(nullptr, targetTok))
        return false;
    const std::optional<NodeId> target = findNode(targetTok.text);
    if (!target)
        return fail(targetTok, "use of undefined node '" + std::string(targetTok.text) + "'");
    take();
    Node node;
    node.op = NodeOp::CallFunction;
    node.args.push_back(Value::nodeRef(*target));
    const Token& rhsStart = tok();
    if (acceptOp("[")) {
        std::vector<Value> index;
        bool sawComma = false;
        if (!parseSequence("]", index, &sawComma))
            return false;
        if (index.empty())
            return expected(tok(), "an index inside '[]'");
        node.target = functionTarget("operator.setitem");
        node.args.push_back(index.size() == 1 && !sawComma ? std::move(index[0])
                                                           : Value::tuple(std::move(index)));
    } else {
        node.target = functionTarget(inPlaceOperatorName(take()));
    }
    if (!expectOp("=", "in the in-place statement"))
        return false;
    node.args.emplace_back();
    if (!parseValue(node.args.back()) ||
        !expectOp(";", "after the in-place statement, before the node's name"))
        return false;
    const Token* nameTok = nullptr;
    if (!expectName(&nameTok, "the node's name after the in-place statement"))
        return false;
    node.name = std::string(nameTok->text);
    node.meta.sourceLine = fileLine(*nameTok);
    std::string_view annotation;
    Token annotationTok;
    const bool annotated = acceptOp(":");
    if (annotated && !parseAnnotationText(annotation, annotationTok))
        return false;
    const Token* bound = nullptr;
    if (!expectOp("=", "after the in-place node's name") ||
        !expectName(&bound, "the in-place statement's target"))
        return false;
    if (bound->text != targetTok.text)
        return fail(*bound, "expected '" + std::string(targetTok.text) +
                                "', the node the in-place statement "
                                "changed, found '" +
                                std::string(bound->text) + "'");
    return finishNode(std::move(node), *nameTok, rhsStart, annotated ? &annotation : nullptr,
                      annotated ? &annotationTok : nullptr);
}

bool FxParser::finishNode(Node&& node, const Token& nameTok, const Token& rhsStart,
                          const std::string_view* annotation, const Token* annotationTok) {
    Scope& s = *scope_;
    // A call that cannot bind to its op (mm with one argument) fails here, at the call, not in an engine. The
    // other checks of validateGraph hold by construction: names are defined before use, one output argument.
    if (node.op == NodeOp::CallFunction && callSchema_)
        if (std::optional<std::string> problem = checkCall(node, *callSchema_))
            return fail(rhsStart, std::move(*problem));
    if (annotation && !applyAnnotation(node, *annotation, *annotationTok))
        return false;
    node.meta.stackTrace = s.trace;
    if (node.op == NodeOp::CallFunction && node.meta.recompute.empty() && node.meta.acGraphId == -1) {
        node.meta.recompute = s.recompute;
        node.meta.acGraphId = s.acGraphId;
    }
    if (node.op == NodeOp::CallFunction && !s.annotation.empty())
        node.meta.extra.emplace_back(fx::kCustomAnnotationKey, s.annotation);
    return defineNode(std::move(node), nameTok) && parseStatementEnd();
}

// After a statement: optional ";  a = b = None" (FX frees dead values), optional comment, end of line.
bool FxParser::parseStatementEnd() {
    if (acceptOp(";")) {
        while (tok().kind == TokenKind::Name) {
            const Token& name = take();
            if (acceptOp("="))
                continue;
            if (name.text != "None")
                return fail(name, "expected 'None' ending the ';  name = None' clause, found " +
                                      fx::describeToken(name));
            break;
        }
    }
    skipComments();
    if (tok().kind != TokenKind::Newline && tok().kind != TokenKind::End)
        return expected(tok(), "end of statement");
    return true;
}

bool FxParser::parseReturn() {
    Scope& s = *scope_;
    const Token& returnTok = take();
    if (!ensurePlaceholders(nullptr, returnTok))
        return false;
    Node output;
    output.name = "output";
    for (int suffix = 1; findNode(output.name); ++suffix)
        output.name = "output_" + std::to_string(suffix);
    output.op = NodeOp::Output;
    output.target = Target::name("output");
    output.meta.sourceLine = fileLine(returnTok);
    Value result;
    itemComments_.clear();
    // FX prints "return pytree.tree_unflatten(...)" or "return <value>", never a bare "return": anything else
    // starting so is a file cut short (a bare "pytree.tree_" would otherwise read as a verbatim expression).
    if (atStatementEnd())
        return fail(tok().kind == TokenKind::End ? tok() : returnTok,
                    "expected the returned value after 'return'" +
                        std::string(tok().kind == TokenKind::End ? " (truncated file?)" : ""));
    if (tok().isName("pytree") && !(tok(1).isOp(".") && tok(2).isName("tree_unflatten") && tok(3).isOp("(")))
        return fail(tok(), "expected 'pytree.tree_unflatten(...)' after 'return' (truncated file?)");
    if (tok().isName("pytree") && tok(1).isOp(".") && tok(2).isName("tree_unflatten") && tok(3).isOp("(")) {
        pos_ += 4;
        skipComments();
        collectItemComments_ = tok().isOp("[") || tok().isOp("(");
        if (!parseValue(result))
            return false;
        skipComments();
        const Token* self = nullptr;
        const Token* spec = nullptr;
        if (!expectOp(",", "after the returned list") || !expectName(&self, "'self._out_spec'") ||
            !expectOp(".") || !expectName(&spec, "'_out_spec'") || !expectOp(")", "closing tree_unflatten"))
            return false;
    } else {
        collectItemComments_ = tok().isOp("[") || tok().isOp("(");
        if (!parseValue(result))
            return false;
        if (tok().isOp(",")) { // return a, b
            std::vector<Value> items{std::move(result)};
            while (acceptOp(",") && !atStatementEnd()) {
                items.emplace_back();
                if (!parseValue(items.back()))
                    return false;
            }
            result = Value::tuple(std::move(items));
        }
    }
    collectItemComments_ = false;
    if (std::any_of(itemComments_.begin(), itemComments_.end(),
                    [](const std::string& c) { return !c.empty(); }) &&
        result.isSequence() && itemComments_.size() == result.items().size())
        output.meta.extra.emplace_back(fx::kOutputDescriptorsKey, fx::toJsonStringArray(itemComments_));
    if (!s.graph.numFwdOutputs && std::any_of(s.graph.nodes().begin(), s.graph.nodes().end(), isTangent)) {
        s.graph.numFwdOutputs = forwardOutputCount(itemComments_);
        if (!s.graph.numFwdOutputs)
            s.graph.numFwdOutputs = forwardOutputCountOfJoint(s.graph, result);
    }
    output.args.push_back(std::move(result));
    std::string_view key = output.name == "output" ? std::string_view("output")
                                                   : std::string_view(ownedNames_.emplace_back(output.name));
    s.byName.insert(key, static_cast<NodeId>(s.size()));
    s.flush();
    s.graph.addNode(std::move(output));
    s.returned = true;
    return parseStatementEnd();
}

bool FxParser::isSelfPathStart() const {
    size_t k = 0;
    while (tok(k).isName("getattr") && tok(k + 1).isOp("("))
        k += 2;
    return tok(k).isName("self");
}

// self.a.b, getattr(self, "0").weight, getattr(getattr(self, "0"), "1"): FX's _format_target.
bool FxParser::parseSelfPath(std::string& path) {
    if (tok().isName("getattr")) {
        take();
        take(); // '('
        if (!parseSelfPath(path) || !expectOp(",", "in getattr(self, \"name\")"))
            return false;
        if (tok().kind != TokenKind::String)
            return expected(tok(), "an attribute name string in getattr()");
        const Token& str = take();
        if (!fx::decodeStringLiteral(str.text, scratch_))
            return fail(str, "malformed string literal");
        path += path.empty() ? scratch_ : "." + scratch_;
        if (!expectOp(")", "closing getattr("))
            return false;
    } else {
        take(); // self
    }
    while (tok().isOp(".") && tok(1).kind == TokenKind::Name) {
        take();
        const std::string_view name = take().text;
        if (!path.empty())
            path += '.';
        path += name;
    }
    return true;
}

const Target& FxParser::functionTarget(std::string_view text) {
    auto it = targetCache_.find(text);
    if (it == targetCache_.end()) {
        Target target = Target::parseFunction(text);
        std::optional<OpSchema> schema = findOpSchema(target);
        it = targetCache_.emplace(text, CachedTarget{std::move(target), std::move(schema)}).first;
    }
    callSchema_ = it->second.schema ? &*it->second.schema : nullptr;
    return it->second.target;
}

RhsResult FxParser::parseRhs(Node& node) {
    auto result = [](bool ok) { return ok ? RhsResult::Node : RhsResult::Error; };
    node.op = NodeOp::CallFunction;
    callSchema_ = nullptr;
    const Token& first = tok();

    if (isSelfPathStart()) {
        std::string path;
        if (!parseSelfPath(path))
            return RhsResult::Error;
        if (path.empty())
            return rhsExpected(tok(), "'.attribute' after 'self'");
        node.target = Target::name(path);
        if (tok().isOp("(")) {
            node.op = NodeOp::CallModule;
            return result(parseCallArgs(node.args, node.kwargs));
        }
        node.op = NodeOp::GetAttr;
        return RhsResult::Node;
    }

    // Prefix operators: -a, +a, ~a (a literal such as -1 is an operand instead).
    if (std::string_view unary = unaryOperatorName(first); !unary.empty()) {
        const Token& next = tok(1);
        const bool literal = next.kind == TokenKind::Int || next.kind == TokenKind::Float ||
                             next.isName("inf") || next.isName("nan");
        if (!literal) {
            take();
            node.target = functionTarget(unary);
            node.args.emplace_back();
            switch (parseAtom(node.args.back())) {
            case AtomResult::Error:
                return RhsResult::Error;
            case AtomResult::NotAtom:
                return rhsExpected(tok(), "an operand after '" + std::string(first.text) + "'");
            case AtomResult::Ok:
                break;
            }
            return RhsResult::Node;
        }
    }

    if (first.kind == TokenKind::Name) {
        const bool isNode = isNodeName(first);
        if (isNode && tok(1).isOp(".") && tok(2).kind == TokenKind::Name) {
            const NodeId self = *findNode(first.text);
            pos_ += 2;
            const Token& attr = take();
            if (tok().isOp("(")) { // x.view(4, 8)
                node.op = NodeOp::CallMethod;
                node.target = Target::name(attr.text);
                node.args.push_back(Value::nodeRef(self));
                return result(parseCallArgs(node.args, node.kwargs));
            }
            // getattr_1 = w.mT: builtins.getattr(w, 'mT').
            node.target = functionTarget("getattr");
            node.args = {Value::nodeRef(self), Value::string(std::string(attr.text))};
            return RhsResult::Node;
        }
        const Token& next = tok(1);
        if (isNode && (next.kind == TokenKind::Newline || next.kind == TokenKind::End ||
                       next.kind == TokenKind::Comment || next.isOp(";"))) {
            take();
            return RhsResult::Rename;
        }
        const bool constant = first.isName("inf") || first.isName("nan") || first.isName("None") ||
                              first.isName("True") || first.isName("False");
        if (!isNode && !constant) {
            // torch.ops.aten.mm.default(...), torch.sin(...), operator.getitem(...), mangled globals.
            const Token* last = &take();
            while (tok().isOp(".") && tok(1).kind == TokenKind::Name) {
                take();
                last = &take();
            }
            if (!tok().isOp("(")) {
                if (last == &first)
                    return rhsFail(first, "use of undefined node '" + std::string(first.text) + "'");
                return rhsExpected(tok(), "'(' calling '" + std::string(sourceSpan(first, *last)) + "'");
            }
            node.target = functionTarget(sourceSpan(first, *last));
            return result(parseCallArgs(node.args, node.kwargs));
        }
    }

    // Binary operators and subscripts on atoms: a + b, a @ b, 1 - a, a[0], a[(slice(None, None, None), 0)].
    Value lhs;
    switch (parseAtom(lhs)) {
    case AtomResult::Error:
        return RhsResult::Error;
    case AtomResult::NotAtom:
        return rhsExpected(first, "a call, attribute or operator expression");
    case AtomResult::Ok:
        break;
    }
    if (acceptOp("[")) {
        std::vector<Value> index;
        bool sawComma = false;
        if (!parseSequence("]", index, &sawComma))
            return RhsResult::Error;
        if (index.empty())
            return rhsExpected(tok(), "an index inside '[]'");
        node.target = functionTarget("operator.getitem");
        node.args.push_back(std::move(lhs));
        node.args.push_back(index.size() == 1 && !sawComma ? std::move(index[0])
                                                           : Value::tuple(std::move(index)));
        return RhsResult::Node;
    }
    const std::string_view binary = binaryOperatorName(tok());
    if (binary.empty())
        return rhsExpected(tok(), "an operator after the first operand");
    take();
    node.target = functionTarget(binary);
    node.args.push_back(std::move(lhs));
    node.args.emplace_back();
    switch (parseAtom(node.args.back())) {
    case AtomResult::Error:
        return RhsResult::Error;
    case AtomResult::NotAtom:
        return rhsExpected(tok(), "an operand");
    case AtomResult::Ok:
        break;
    }
    return RhsResult::Node;
}

bool FxParser::parseCallArgs(std::vector<Value>& args, std::vector<std::pair<std::string, Value>>& kwargs) {
    if (!expectOp("("))
        return false;
    std::vector<Value>& positional = takeScratch();
    bool ok = true;
    while (ok) {
        skipComments();
        if (acceptOp(")"))
            break;
        if (tok().kind == TokenKind::Name && tok(1).isOp("=")) {
            std::string key(take().text);
            take();
            kwargs.emplace_back(std::move(key), Value());
            ok = parseValue(kwargs.back().second);
        } else if (!kwargs.empty()) {
            ok = expected(tok(), "a keyword argument (positional arguments must come first)");
        } else {
            positional.emplace_back();
            ok = parseValue(positional.back());
        }
        if (!ok)
            break;
        skipComments();
        if (acceptOp(")"))
            break;
        ok = expectOp(",", "or ')' in the argument list");
    }
    return releaseScratch(args, ok);
}

// ---------------------------------------------------------------------------------------------------------
// Values

bool FxParser::parseValue(Value& out) {
    const size_t start = pos_;
    switch (parseAtom(out)) {
    case AtomResult::Error:
        return false;
    case AtomResult::Ok:
        if (isTerminator(tok()) || isCloseBracket(tok()))
            return true;
        break;
    case AtomResult::NotAtom:
        break;
    }
    // Something richer than a literal (s0 + 1, torch.Size([2]), -x): keep it verbatim.
    pos_ = start;
    return parseSpan(out);
}

bool FxParser::parseNumber(const Token& t, bool negative, Value& out) {
    std::string_view digits = t.text;
    scratch_.clear();
    if (negative)
        scratch_ += '-';
    scratch_ += digits;
    const char* begin = scratch_.data();
    const char* end = begin + scratch_.size();
    if (t.kind == TokenKind::Int) {
        int64_t value = 0;
        auto [ptr, ec] = std::from_chars(begin, end, value);
        if (ec != std::errc() || ptr != end)
            out = Value::opaque(scratch_); // beyond int64: keep Python's big int verbatim
        else
            out = Value::integer(value);
        return true;
    }
    double value = 0;
    auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec == std::errc::result_out_of_range || ptr != end)
        out = Value::opaque(scratch_);
    else if (ec != std::errc())
        return fail(t, "malformed number " + fx::describeToken(t));
    else
        out = Value::real(value);
    return true;
}

AtomResult FxParser::parseAtom(Value& out) {
    const Token& t = tok();
    switch (t.kind) {
    case TokenKind::Int:
    case TokenKind::Float:
        take();
        return parseNumber(t, false, out) ? AtomResult::Ok : AtomResult::Error;
    case TokenKind::String: {
        take();
        std::string decoded;
        if (!fx::decodeStringLiteral(t.text, decoded))
            return atomFail(t, "malformed escape in string literal");
        out = Value::string(std::move(decoded));
        return AtomResult::Ok;
    }
    case TokenKind::Name:
        return parseNamedAtom(out);
    case TokenKind::Op:
        break;
    default:
        return AtomResult::NotAtom;
    }
    if (t.isOp("-") || t.isOp("+")) {
        const Token& next = tok(1);
        const bool negative = t.isOp("-");
        if (next.kind == TokenKind::Int || next.kind == TokenKind::Float) {
            pos_ += 2;
            return parseNumber(next, negative, out) ? AtomResult::Ok : AtomResult::Error;
        }
        if (next.isName("inf") || next.isName("nan")) {
            pos_ += 2;
            const double inf = std::numeric_limits<double>::infinity();
            out = Value::real(next.text == "nan" ? std::numeric_limits<double>::quiet_NaN()
                              : negative         ? -inf
                                                 : inf);
            return AtomResult::Ok;
        }
        return AtomResult::NotAtom;
    }
    if (t.isOp("...")) {
        take();
        out = Value::ellipsis();
        return AtomResult::Ok;
    }
    if (t.isOp("(") || t.isOp("[")) {
        const bool tuple = t.isOp("(");
        take();
        std::vector<Value> items;
        bool sawComma = false;
        if (!parseSequence(tuple ? ")" : "]", items, &sawComma))
            return AtomResult::Error;
        if (tuple && items.size() == 1 && !sawComma)
            out = std::move(items[0]); // parenthesized expression
        else
            out = tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
        return AtomResult::Ok;
    }
    if (t.isOp("{")) {
        take();
        return parseDict(out) ? AtomResult::Ok : AtomResult::Error;
    }
    return AtomResult::NotAtom;
}

// Items up to `close` (already past the opening bracket); comments (descriptors) are skipped.
bool FxParser::parseSequence(std::string_view close, std::vector<Value>& items, bool* sawComma) {
    std::vector<Value>& buffer = takeScratch();
    // Only the returned sequence itself keeps its comments (the AOT output descriptors).
    std::vector<std::string>* comments = collectItemComments_ ? &itemComments_ : nullptr;
    collectItemComments_ = false;
    auto takeComments = [&] {
        while (tok().kind == TokenKind::Comment) {
            const Token& c = take();
            if (comments && !buffer.empty() && comments->size() == buffer.size())
                comments->back() = std::string(commentText(c));
        }
    };
    bool ok = true;
    while (ok) {
        takeComments();
        if (acceptOp(close))
            break;
        buffer.emplace_back();
        if (comments)
            comments->emplace_back();
        ok = parseValue(buffer.back());
        if (!ok)
            break;
        takeComments();
        if (acceptOp(close))
            break;
        ok = expectOp(",", "or '" + std::string(close) + "'");
        *sawComma = true;
    }
    return releaseScratch(items, ok);
}

bool FxParser::parseDict(Value& out) {
    std::vector<std::pair<Value, Value>> entries;
    while (true) {
        skipComments();
        if (acceptOp("}"))
            break;
        Value key;
        Value value;
        if (!parseValue(key) || !expectOp(":", "after a dict key") || !parseValue(value))
            return false;
        entries.emplace_back(std::move(key), std::move(value));
        skipComments();
        if (acceptOp("}"))
            break;
        if (!expectOp(",", "or '}'"))
            return false;
    }
    out = Value::dict(std::move(entries));
    return true;
}

AtomResult FxParser::parseNamedAtom(Value& out) {
    const Token& t = tok();
    const std::string_view name = t.text;
    if (tok(1).isOp("(")) {
        if (name == "device")
            return parseDevice(out);
        if (name == "slice") {
            const size_t start = pos_;
            pos_ += 2;
            std::vector<Value> parts;
            bool sawComma = false;
            if (!parseSequence(")", parts, &sawComma))
                return AtomResult::Error;
            if (parts.size() != 3) {
                pos_ = start;
                return AtomResult::NotAtom;
            }
            out = Value::slice(std::move(parts[0]), std::move(parts[1]), std::move(parts[2]));
            return AtomResult::Ok;
        }
        return AtomResult::NotAtom; // some other call: kept verbatim by parseSpan
    }
    if (tok(1).isOp(".")) {
        if (findNode(name))
            return AtomResult::NotAtom;
        const Token* last = &t;
        size_t k = 1;
        while (tok(k).isOp(".") && tok(k + 1).kind == TokenKind::Name) {
            last = &tok(k + 1);
            k += 2;
        }
        if (tok(k).isOp("("))
            return AtomResult::NotAtom;
        pos_ += k;
        const std::string_view dotted = sourceSpan(t, *last);
        if (dotted.substr(0, 6) == "torch.") {
            const std::string_view member = dotted.substr(6);
            if (auto dtype = parseDType(dotted)) {
                out = Value::dtype(*dtype);
                return AtomResult::Ok;
            }
            if (isLayoutName(member)) {
                out = Value::layout(std::string(member));
                return AtomResult::Ok;
            }
            if (isMemoryFormatName(member)) {
                out = Value::memoryFormat(std::string(member));
                return AtomResult::Ok;
            }
        }
        out = Value::opaque(std::string(dotted));
        return AtomResult::Ok;
    }
    take();
    if (name == "None") {
        out = Value::none();
    } else if (name == "True" || name == "False") {
        out = Value::boolean(name == "True");
    } else if (name == "inf") {
        out = Value::real(std::numeric_limits<double>::infinity());
    } else if (name == "nan") {
        out = Value::real(std::numeric_limits<double>::quiet_NaN());
    } else if (name == "Ellipsis" && !findNode(name)) { // repr(...) in indexing: x[(Ellipsis, slice(...))]
        out = Value::ellipsis();
    } else if (auto id = findNode(name)) {
        out = Value::nodeRef(*id);
    } else if (isSymbolName(name)) {
        scope_->symbolUses.emplace_back(name, t);
        out = Value::symExpr(std::string(name));
    } else {
        return atomFail(t, "use of undefined node '" + std::string(name) + "'");
    }
    return AtomResult::Ok;
}

// device(type='cuda', index=0), device(type='cpu'), device('cuda:0').
AtomResult FxParser::parseDevice(Value& out) {
    const size_t start = pos_;
    pos_ += 2;
    std::string type;
    int64_t index = -1;
    bool ok = true;
    while (ok && !tok().isOp(")")) {
        std::string_view key;
        if (tok().kind == TokenKind::Name && tok(1).isOp("=")) {
            key = take().text;
            take();
        }
        const Token& v = take();
        if (v.kind == TokenKind::String && (key.empty() || key == "type")) {
            ok = fx::decodeStringLiteral(v.text, type);
            if (const size_t colon = type.find(':'); ok && colon != std::string::npos) {
                auto [p, ec] = std::from_chars(type.data() + colon + 1, type.data() + type.size(), index);
                ok = ec == std::errc() && p == type.data() + type.size();
                type.resize(colon);
            }
        } else if (v.kind == TokenKind::Int && (key.empty() || key == "index")) {
            auto [p, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), index);
            ok = ec == std::errc();
        } else if (v.isName("None") && key == "index") {
            index = -1;
        } else {
            ok = false;
        }
        if (ok && !acceptOp(",") && !tok().isOp(")"))
            ok = false;
    }
    if (!ok || type.empty()) {
        pos_ = start;
        return AtomResult::NotAtom;
    }
    take();
    out = Value::device(std::move(type), index);
    return AtomResult::Ok;
}

// A balanced run of tokens up to ',' or a closing bracket, kept as text: SymExpr when it is arithmetic on
// symbols, Opaque otherwise (with the nodes it names as items, so users stay right).
bool FxParser::parseSpan(Value& out) {
    const Token& first = tok();
    const Token* last = nullptr;
    std::vector<Value> refs;
    std::vector<std::string_view> comments; // dropped from the kept text: it becomes one line
    bool symbolic = true;
    int depth = 0;
    while (true) {
        const Token& t = tok();
        if (t.kind == TokenKind::Newline || t.kind == TokenKind::End)
            break;
        if (depth == 0 && (isTerminator(t) || isCloseBracket(t)))
            break;
        if (t.kind == TokenKind::Comment) {
            comments.push_back(take().text);
            continue;
        }
        if (t.isOp(".") && (!last || !endsOperand(*last) || tok(1).kind != TokenKind::Name))
            return expected(t, "a name after '.'");
        if (t.kind == TokenKind::Op && !isBracket(t) && !t.isOp(".") && (!last || !endsOperand(*last)) &&
            !isUnaryOperator(t) && !t.isOp("*") && !t.isOp("**") && !t.isOp("...") && !t.isOp(":") &&
            !t.isOp(","))
            return expected(t, "an operand before '" + std::string(t.text) + "'");
        if (isOpenBracket(t))
            ++depth;
        else if (isCloseBracket(t))
            --depth;
        if (t.kind == TokenKind::Name) {
            const bool attribute = last && last->isOp(".");
            const bool keyword = tok(1).isOp("=");
            const bool called = tok(1).isOp("(");
            if (!attribute && !keyword && !called) {
                if (auto id = findNode(t.text)) {
                    refs.push_back(Value::nodeRef(*id));
                    symbolic = false;
                } else if (isSymbolName(t.text)) {
                    scope_->symbolUses.emplace_back(t.text, t);
                } else if (t.isName("None") || t.isName("True") || t.isName("False") || t.isName("inf") ||
                           t.isName("nan")) {
                    symbolic = false;
                } else if (!tok(1).isOp(".")) {
                    return fail(t, "use of undefined node '" + std::string(t.text) + "'");
                } else {
                    symbolic = false;
                }
            } else {
                symbolic = false;
            }
        } else if (t.kind == TokenKind::Op) {
            if (std::string_view("+-*/%()").find(t.text[0]) == std::string_view::npos && t.text != "**" &&
                t.text != "//")
                symbolic = false;
        } else if (t.kind != TokenKind::Int) {
            symbolic = false;
        }
        last = &take();
    }
    if (!last)
        return expected(first, "a value");
    if (last->kind == TokenKind::Op && !isCloseBracket(*last))
        return expected(tok(), "an operand after '" + std::string(last->text) + "'");
    // Inside brackets Python joins lines: the kept text is one line, so that a writer can print it back.
    std::string text = joinLines(withoutComments(sourceSpan(first, *last), comments));
    if (symbolic) {
        // As sizes: overflowing constants or a division by zero in a symbolic argument are refused here.
        if (SymbolicCheck check = checkSymbolic(text); check.issue)
            return fail(first.line, first.col + check.issue->offset, check.issue->message);
        out = Value::symExpr(std::move(text));
    } else {
        out = Value::opaque(std::move(text));
        out.items() = std::move(refs);
    }
    return true;
}

} // namespace

Expected<Graph> readFxText(std::string_view text, const FxReadOptions& options) {
    FxParser parser(text, options);
    return parser.parse();
}

} // namespace jointscope
