#include "cost/OpSignature.h"

#include "io/FxWriter.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace jointscope::cost {
namespace {

void appendInt(std::string& out, int64_t v) {
    char buf[24];
    const auto result = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, result.ptr);
}

void appendSymInt(std::string& out, const SymInt& v) {
    if (v.isSymbolic())
        out += v.expr;
    else
        appendInt(out, v.value);
}

void appendDims(std::string& out, const std::vector<SymInt>& dims, char open, char close) {
    out += open;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i)
            out += ',';
        appendSymInt(out, dims[i]);
    }
    out += close;
}

// dtype[sizes]{strides}: "?" stands for whatever the graph does not record.
void appendTensor(std::string& out, const TensorMeta& t) {
    if (!t.known()) {
        out += '?';
        return;
    }
    out += abbreviation(t.dtype);
    appendDims(out, t.sizes, '[', ']');
    if (!t.strides.empty())
        appendDims(out, t.strides, '{', '}');
}

uint64_t fnv1a(uint64_t hash, std::string_view bytes) {
    for (char c : bytes) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 1099511628211ull;
    }
    return hash;
}

class SignatureWriter {
public:
    SignatureWriter(const Graph& graph, std::string& out) : graph_(graph), out_(out) {}

    void writeCall(const Node& node) {
        writeTarget(node.target);
        out_ += '(';
        bool first = true;
        for (const Value& v : node.args) {
            if (!first)
                out_ += ", ";
            first = false;
            writeValue(v);
        }
        // Keyword order is whatever the tracer printed: sort so that it does not matter.
        std::vector<const std::pair<std::string, Value>*> kwargs;
        kwargs.reserve(node.kwargs.size());
        for (const auto& kv : node.kwargs)
            kwargs.push_back(&kv);
        std::sort(kwargs.begin(), kwargs.end(), [](auto* a, auto* b) { return a->first < b->first; });
        for (const auto* kv : kwargs) {
            if (!first)
                out_ += ", ";
            first = false;
            out_ += kv->first;
            out_ += '=';
            writeValue(kv->second);
        }
        out_ += ')';
    }

private:
    void writeTarget(const Target& target) {
        constexpr std::string_view kOps = "torch.ops.";
        std::string_view text = target.text;
        if (text.substr(0, kOps.size()) == kOps)
            text.remove_prefix(kOps.size());
        out_ += text;
    }

    // What a node passes to its reader: its tensor, the symbolic value of a SymInt, the tensors of a tuple,
    // the content of a HOP body. Never its name.
    void writeNodeRef(NodeId id) {
        if (id >= graph_.size()) {
            out_ += '?';
            return;
        }
        const Node& node = graph_.node(id);
        if (node.op == NodeOp::GetAttr && node.subgraph >= 0 &&
            static_cast<size_t>(node.subgraph) < graph_.subgraphs().size()) {
            writeBodyDigest(*graph_.subgraph(node.subgraph));
            return;
        }
        switch (node.outputKind) {
        case OutputKind::Tensor:
            if (node.outputs.empty())
                out_ += '?';
            else
                appendTensor(out_, node.outputs[0]);
            return;
        case OutputKind::Tuple:
            if (node.outputs.empty()) {
                out_ += '?';
                return;
            }
            out_ += '(';
            for (size_t i = 0; i < node.outputs.size(); ++i) {
                if (i)
                    out_ += ", ";
                appendTensor(out_, node.outputs[i]);
            }
            out_ += node.outputs.size() == 1 ? ",)" : ")";
            return;
        case OutputKind::SymInt:
        case OutputKind::SymFloat:
        case OutputKind::SymBool:
            out_ += node.symValue.empty() ? std::string_view("?") : std::string_view(node.symValue);
            return;
        case OutputKind::None:
            out_ += "None";
            return;
        case OutputKind::Unknown:
            out_ += '?';
            return;
        }
    }

    // A HOP body by content: the signatures of its nodes and how they are wired, by position. Equal bodies
    // (48 calls of one invoke_subgraph body, or the same body in two graphs) get equal digests whatever their
    // attribute names.
    void writeBodyDigest(const Graph& body) {
        uint64_t hash = 14695981039346656037ull;
        std::string line;
        for (NodeId id = 0; id < body.size(); ++id) {
            const Node& n = body.node(id);
            line.clear();
            // Placeholder and output names are not content: only call_function lines carry a signature.
            if (n.op == NodeOp::CallFunction)
                line += opSignature(body, id);
            else
                line += nodeOpName(n.op);
            line += " <-";
            n.forEachInput([&](NodeId input) {
                line += ' ';
                appendInt(line, input);
            });
            line += '\n';
            hash = fnv1a(hash, line);
        }
        char buf[32];
        std::snprintf(buf, sizeof buf, "graph#%016llx", static_cast<unsigned long long>(hash));
        out_ += buf;
    }

    void writeValue(const Value& v) { appendPythonValue(out_, v, style_); }

    const Graph& graph_;
    std::string& out_;
    const PythonValueStyle style_{[this](NodeId id) { writeNodeRef(id); }, /*shortDevice=*/true};
};

} // namespace

std::string opSignature(const Graph& graph, NodeId id) {
    std::string out;
    if (id >= graph.size())
        return out;
    const Node& node = graph.node(id);
    if (node.op != NodeOp::CallFunction) {
        out += nodeOpName(node.op);
        out += ' ';
        out += node.target.text;
        return out;
    }
    out.reserve(128);
    SignatureWriter(graph, out).writeCall(node);
    return out;
}

} // namespace jointscope::cost
