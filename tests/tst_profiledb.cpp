// Op signatures (the profile key), the SQLite profile database and its JSON form, device listing, and the
// `profile-db` / `devices` commands.
#include "testutil.h"

#include "cost/DeviceInfo.h"
#include "cost/OpSignature.h"
#include "cost/ProfileDb.h"

#include <nlohmann/json.hpp>

#include <QElapsedTimer>
#include <QTemporaryDir>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>

using namespace jointscope;
using namespace jointscope::test;
using Json = nlohmann::json;

namespace {

TensorMeta tensor(DType dtype, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
    TensorMeta t;
    t.dtype = dtype;
    for (int64_t s : sizes)
        t.sizes.push_back(SymInt{s, ""});
    for (int64_t s : strides)
        t.strides.push_back(SymInt{s, ""});
    return t;
}

NodeId addTensorNode(Graph& g, Node node, TensorMeta meta) {
    node.outputKind = OutputKind::Tensor;
    node.outputs = {std::move(meta)};
    return g.addNode(std::move(node));
}

NodeId addPlaceholder(Graph& g, const std::string& name, TensorMeta meta) {
    return addTensorNode(g, makeNode(name, NodeOp::Placeholder, name), std::move(meta));
}

// bias f32[256], x f32[64,128], w^T f32[128,256] (strides {1,128}) and addmm(bias, x, w^T): the example of
// cost/OpSignature.h, under the node names given.
Graph addmmGraph(const std::string& prefix, DType dtype = DType::Float32, int64_t xStride = 128) {
    Graph g;
    const NodeId b = addPlaceholder(g, prefix + "b", tensor(dtype, {256}, {1}));
    const NodeId x = addPlaceholder(g, prefix + "x", tensor(dtype, {64, 128}, {xStride, 1}));
    const NodeId w = addPlaceholder(g, prefix + "w", tensor(dtype, {128, 256}, {1, 128}));
    addTensorNode(g,
                  makeNode(prefix + "mm", NodeOp::CallFunction, "torch.ops.aten.addmm.default",
                           {Value::nodeRef(b), Value::nodeRef(x), Value::nodeRef(w)}),
                  tensor(dtype, {64, 256}, {256, 1}));
    return g;
}

// A one-op graph whose call reads a f32[4] placeholder and the given literal arguments.
std::string literalSignature(std::vector<Value> literals,
                             std::vector<std::pair<std::string, Value>> kwargs = {}) {
    Graph g;
    const NodeId x = addPlaceholder(g, "x", tensor(DType::Float32, {4}, {1}));
    std::vector<Value> args{Value::nodeRef(x)};
    for (Value& v : literals)
        args.push_back(std::move(v));
    Node call = makeNode("op", NodeOp::CallFunction, "torch.ops.aten.foo.default", std::move(args));
    call.kwargs = std::move(kwargs);
    const NodeId id = addTensorNode(g, std::move(call), tensor(DType::Float32, {4}, {1}));
    return cost::opSignature(g, id);
}

// Independent of the reader and of opSignature: the call's text from joint.txt with every argument that
// names a node replaced by that node's dtype / shape / stride from joint.meta.json ("?" when it has none).
class TextKeys {
public:
    explicit TextKeys(const std::string& metaPath) {
        const Json meta = Json::parse(readFile(metaPath));
        for (const Json& n : meta.at("nodes")) {
            std::string d = "?";
            if (n.contains("dtype"))
                d = n.at("dtype").get<std::string>() + n.at("shape").dump() + n.at("stride").dump();
            describe_[n.at("name").get<std::string>()] = d;
        }
    }

    // name -> key for every "name = torch.ops...(...)" and "name = tuple[i]" line of the forward body.
    std::map<std::string, std::string> keys(const std::string& fxText) const {
        std::map<std::string, std::string> out;
        static const std::regex assignment("^        ([A-Za-z_]\\w*) = (.*)$");
        static const std::regex item("^([A-Za-z_]\\w*)\\[(\\d+)\\]$");
        // A tuple (no dtype in the sidecar) is described by the elements its "x = tuple[i]" lines read.
        std::map<std::string, std::map<int, std::string>> elements;
        for (const std::string& line : splitLines(fxText)) {
            std::smatch m, im;
            if (!std::regex_match(line, m, assignment))
                continue;
            std::string rhs = m[2];
            if (const size_t cut = rhs.find(";  "); cut != std::string::npos)
                rhs.resize(cut);
            if (std::regex_match(rhs, im, item))
                elements[im[1]][std::stoi(im[2])] = describe(m[1]);
        }
        auto describeTuple = [&](const std::string& name) {
            auto it = elements.find(name);
            if (describe(name) != "?" || it == elements.end())
                return describe(name);
            std::string d = "(";
            int next = 0;
            for (const auto& [i, e] : it->second) {
                for (; next < i; ++next)
                    d += "?, "; // an element no getitem reads
                d += e + ", ";
                next = i + 1;
            }
            return d + ")";
        };
        for (const std::string& line : splitLines(fxText)) {
            std::smatch m;
            if (!std::regex_match(line, m, assignment))
                continue;
            std::string rhs = m[2];
            if (const size_t cut = rhs.find(";  "); cut != std::string::npos)
                rhs.resize(cut);
            std::smatch im;
            if (std::regex_match(rhs, im, item)) {
                out[m[1]] = "getitem(" + describeTuple(im[1]) + ", " + std::string(im[2]) + ")";
            } else if (rhs.rfind("torch.ops.", 0) == 0) {
                const size_t open = rhs.find('(');
                out[m[1]] = rhs.substr(0, open) + replaceNames(rhs.substr(open));
            }
        }
        return out;
    }

private:
    std::string describe(const std::string& name) const {
        auto it = describe_.find(name);
        return it == describe_.end() ? "<" + name + ">" : it->second;
    }

    std::string replaceNames(const std::string& args) const {
        std::string out;
        for (size_t i = 0; i < args.size();) {
            const char c = args[i];
            const bool startsWord = (std::isalpha(static_cast<unsigned char>(c)) || c == '_') &&
                                    (i == 0 || !(std::isalnum(static_cast<unsigned char>(args[i - 1])) ||
                                                 args[i - 1] == '_' || args[i - 1] == '.'));
            if (!startsWord) {
                out += c;
                ++i;
                continue;
            }
            size_t end = i;
            while (end < args.size() &&
                   (std::isalnum(static_cast<unsigned char>(args[end])) || args[end] == '_'))
                ++end;
            const std::string word = args.substr(i, end - i);
            out += describe_.count(word) ? describe_.at(word) : word;
            i = end;
        }
        return out;
    }

    std::map<std::string, std::string> describe_;
};

cost::OpStats stats(double median, int reps = 10) {
    cost::OpStats s;
    s.medianUs = median;
    s.minUs = median * 0.9;
    s.maxUs = median * 1.5;
    s.meanUs = median * 1.1;
    s.reps = reps;
    s.measuredAt = "2026-11-23T03:10:00Z";
    return s;
}

std::unique_ptr<cost::ProfileDb> openDb(const std::string& path) {
    Expected<std::unique_ptr<cost::ProfileDb>> db = cost::ProfileDb::open(path);
    if (!db)
        qFatal("%s", db.error().format().c_str());
    return db.take();
}

bool writeText(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    return bool(out);
}

// 1-based line and column of the first occurrence of needle in text.
std::pair<int, int> lineColOf(const std::string& text, const std::string& needle) {
    const size_t at = text.find(needle);
    if (at == std::string::npos)
        qFatal("'%s' not in text", needle.c_str());
    const size_t lineStart = text.rfind('\n', at);
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
    const int col = static_cast<int>(at - (lineStart == std::string::npos ? 0 : lineStart + 1)) + 1;
    return {line, col};
}

// A profile document with tricky keys and values: quotes, backslashes, non-ASCII, doubles needing 17 digits.
std::vector<cost::ProfileRecord> sampleRecords() {
    std::vector<cost::ProfileRecord> rows;
    auto add = [&](std::string device, std::string torch, std::string sig, cost::OpStats s) {
        rows.push_back({{std::move(device), std::move(torch), std::move(sig)}, std::move(s)});
    };
    add("NVIDIA H100 80GB HBM3", "2.11.0+cu130", "aten.addmm.default(f32[256]{1}, f32[64,128]{128,1})",
        stats(12.5));
    add("NVIDIA H100 80GB HBM3", "2.11.0+cu130", "aten.mul.Tensor(f32[4]{1}, 0.1)", stats(0.1 + 0.2, 1000));
    add("NVIDIA H100 80GB HBM3", "1.13.1", "aten.foo.default('it''s \"q\" \\ back')", stats(1e-300, 3));
    add("Intel(R) Xeon(R) Platinum 8480+ — café", "2.11.0", "aten.gelu.default(bf16[2,16,256]{4096,256,1})",
        stats(123456789.123456789, 7));
    return rows;
}

const std::string kProfileHead =
    "{\n \"format\": \"jointscope-profile\",\n \"version\": 1,\n \"records\": [\n";

} // namespace

class TestProfileDb : public QObject {
    Q_OBJECT

private slots:
    // --- op signatures -------------------------------------------------------------------------------------

    void signatureFormat() {
        const Graph g = addmmGraph("");
        QCOMPARE(cost::opSignature(g, 3),
                 std::string("aten.addmm.default(f32[256]{1}, f32[64,128]{128,1}, f32[128,256]{1,128})"));
        // Nodes other than calls: op name and target.
        QCOMPARE(cost::opSignature(g, 0), std::string("placeholder b"));
    }

    void signatureIgnoresNames() {
        QCOMPARE(cost::opSignature(addmmGraph("layer0_"), 3), cost::opSignature(addmmGraph("layers_47_"), 3));
    }

    void signatureSeesDTypeStrideAndShape() {
        const std::string base = cost::opSignature(addmmGraph(""), 3);
        QVERIFY(cost::opSignature(addmmGraph("", DType::BFloat16), 3) != base);
        QVERIFY(cost::opSignature(addmmGraph("", DType::Float32, 256), 3) != base); // a strided view of x
        Graph g = addmmGraph("");
        g.node(1).outputs[0].sizes[0].value = 65;
        QVERIFY(cost::opSignature(g, 3) != base);
        // Strides absent (the source did not print them) is not the same as any recorded strides.
        Graph bare = addmmGraph("");
        for (NodeId id = 0; id < 3; ++id)
            bare.node(id).outputs[0].strides.clear();
        QCOMPARE(cost::opSignature(bare, 3),
                 std::string("aten.addmm.default(f32[256], f32[64,128], f32[128,256])"));
    }

    void signatureLiterals() {
        QCOMPARE(literalSignature({Value::integer(1)}), std::string("aten.foo.default(f32[4]{1}, 1)"));
        // 1 and 1.0 are different arguments (int vs float overloads); so are 0.25 and 0.5.
        QVERIFY(literalSignature({Value::integer(1)}) != literalSignature({Value::real(1.0)}));
        QVERIFY(literalSignature({Value::real(0.25)}) != literalSignature({Value::real(0.5)}));
        QVERIFY(literalSignature({Value::boolean(true)}) != literalSignature({Value::integer(1)}));
        QVERIFY(literalSignature({Value::string("1")}) != literalSignature({Value::integer(1)}));
        QVERIFY(literalSignature({Value::list({Value::integer(1), Value::integer(2)})}) !=
                literalSignature({Value::tuple({Value::integer(1), Value::integer(2)})}));
        QVERIFY(literalSignature({Value::dtype(DType::Float16)}) !=
                literalSignature({Value::dtype(DType::BFloat16)}));
        QVERIFY(literalSignature({Value::none()}) != literalSignature({}));
        // Floats round-trip: the printed literal reads back as the same double.
        for (double v : {0.1 + 0.2, 1e-05, 1.0 / 3.0, 6.02214076e23, -2.5e-310}) {
            const std::string sig = literalSignature({Value::real(v)});
            const size_t comma = sig.rfind(", ");
            const std::string literal = sig.substr(comma + 2, sig.size() - comma - 3);
            QCOMPARE(std::strtod(literal.c_str(), nullptr), v);
        }
        // Keyword arguments in any order give one signature.
        const std::vector<std::pair<std::string, Value>> ab{{"alpha", Value::integer(2)},
                                                            {"beta", Value::real(0.5)}};
        const std::vector<std::pair<std::string, Value>> ba{{"beta", Value::real(0.5)},
                                                            {"alpha", Value::integer(2)}};
        QCOMPARE(literalSignature({}, ab), literalSignature({}, ba));
        QCOMPARE(literalSignature({}, ab), std::string("aten.foo.default(f32[4]{1}, alpha=2, beta=0.5)"));
        QVERIFY(literalSignature({}, ab) !=
                literalSignature({}, {{"alpha", Value::integer(3)}, {"beta", Value::real(0.5)}}));
    }

    void signatureTensorListsAndNonTensors() {
        Graph g;
        const NodeId a = addPlaceholder(g, "a", tensor(DType::Float32, {2, 3}, {3, 1}));
        const NodeId b = addPlaceholder(g, "b", tensor(DType::Float16, {2, 5}, {5, 1}));
        const NodeId cat =
            addTensorNode(g,
                          makeNode("cat", NodeOp::CallFunction, "torch.ops.aten.cat.default",
                                   {Value::list({Value::nodeRef(a), Value::nodeRef(b)}), Value::integer(1)}),
                          tensor(DType::Float32, {2, 8}, {8, 1}));
        QCOMPARE(cost::opSignature(g, cat),
                 std::string("aten.cat.default([f32[2,3]{3,1}, f16[2,5]{5,1}], 1)"));

        // A SymInt node stands for its symbolic value, so view(x, [s0, 4]) reads as such.
        Node size = makeNode("sym_size", NodeOp::CallFunction, "torch.ops.aten.sym_size.int",
                             {Value::nodeRef(a), Value::integer(0)});
        size.outputKind = OutputKind::SymInt;
        size.symValue = "s0";
        const NodeId sym = g.addNode(std::move(size));
        const NodeId view = addTensorNode(
            g,
            makeNode("view", NodeOp::CallFunction, "torch.ops.aten.view.default",
                     {Value::nodeRef(a), Value::list({Value::nodeRef(sym), Value::integer(3)})}),
            tensor(DType::Float32, {2, 3}, {3, 1}));
        QCOMPARE(cost::opSignature(g, view), std::string("aten.view.default(f32[2,3]{3,1}, [s0, 3])"));

        // A tuple-producing node read by getitem: its element tensors; unknown metadata: "?".
        Node ln = makeNode("ln", NodeOp::CallFunction, "torch.ops.aten.native_layer_norm.default",
                           {Value::nodeRef(a)});
        ln.outputKind = OutputKind::Tuple;
        ln.outputs = {tensor(DType::Float32, {2, 3}, {3, 1}), TensorMeta{}};
        const NodeId lnId = g.addNode(std::move(ln));
        const NodeId item = g.addNode(makeNode("item", NodeOp::CallFunction, "operator.getitem",
                                               {Value::nodeRef(lnId), Value::integer(0)}));
        QCOMPARE(cost::opSignature(g, item), std::string("operator.getitem((f32[2,3]{3,1}, ?), 0)"));
        const NodeId unknown = g.addNode(
            makeNode("u", NodeOp::CallFunction, "torch.ops.aten.relu.default", {Value::nodeRef(item)}));
        QCOMPARE(cost::opSignature(g, unknown), std::string("aten.relu.default(?)"));
    }

    void signatureOfHopBodiesIsTheirContent() {
        // invoke_subgraph(body, x): equal bodies under different attribute names share a signature; a
        // different body does not.
        auto makeGraph = [](const std::string& attr, const char* op) {
            Graph g;
            auto body = std::make_unique<Graph>();
            body->name = attr;
            const NodeId p = addPlaceholder(*body, "arg0_1", tensor(DType::Float32, {8}, {1}));
            addTensorNode(*body, makeNode("r", NodeOp::CallFunction, op, {Value::nodeRef(p)}),
                          tensor(DType::Float32, {8}, {1}));
            const int32_t index = g.addSubgraph(std::move(body));
            Node get = makeNode(attr, NodeOp::GetAttr, attr);
            get.subgraph = index;
            const NodeId getId = g.addNode(std::move(get));
            const NodeId x = addPlaceholder(g, "x", tensor(DType::Float32, {8}, {1}));
            return std::pair(
                g.addNode(makeNode("call", NodeOp::CallFunction, "torch.ops.higher_order.invoke_subgraph",
                                   {Value::nodeRef(getId), Value::string("sub"), Value::nodeRef(x)})),
                std::move(g));
        };
        auto [id1, g1] = makeGraph("repeated_subgraph0", "torch.ops.aten.relu.default");
        auto [id2, g2] = makeGraph("repeated_subgraph7", "torch.ops.aten.relu.default");
        auto [id3, g3] = makeGraph("repeated_subgraph0", "torch.ops.aten.sigmoid.default");
        QCOMPARE(cost::opSignature(g1, id1), cost::opSignature(g2, id2));
        QVERIFY(cost::opSignature(g1, id1) != cost::opSignature(g3, id3));
        QVERIFY(cost::opSignature(g1, id1).find("repeated_subgraph") == std::string::npos);
    }

    void signaturesOfTwoTransformerLayers() {
        const std::string txt = sharedPath("graphs/torch-1.13/gpt_block2/joint.txt");
        const Graph g = loadGraphAt(txt);
        std::vector<NodeId> calls;
        for (NodeId id = 0; id < g.size(); ++id)
            if (g.node(id).op == NodeOp::CallFunction)
                calls.push_back(id);

        // Layer 1's forward runs from native_layer_norm to layer 2's first op, native_layer_norm_2; layer 2
        // has the same ops in the same order. Corresponding ops share signatures.
        const auto pos = [&](const char* name) {
            const NodeId id = *g.find(name);
            return size_t(std::find(calls.begin(), calls.end(), id) - calls.begin());
        };
        const size_t l1 = pos("native_layer_norm"), l2 = pos("native_layer_norm_2");
        QVERIFY(l1 < l2 && l2 + (l2 - l1) <= calls.size());
        for (size_t i = 0; i < l2 - l1; ++i) {
            const Node& a = g.node(calls[l1 + i]);
            const Node& b = g.node(calls[l2 + i]);
            QCOMPARE(a.target.text, b.target.text);
            QVERIFY2(cost::opSignature(g, calls[l1 + i]) == cost::opSignature(g, calls[l2 + i]),
                     (a.name + " vs " + b.name + ": " + cost::opSignature(g, calls[l1 + i]) + " / " +
                      cost::opSignature(g, calls[l2 + i]))
                         .c_str());
        }
        QCOMPARE(cost::opSignature(g, *g.find("addmm")), cost::opSignature(g, *g.find("addmm_4")));
        QVERIFY(cost::opSignature(g, *g.find("addmm")) != cost::opSignature(g, *g.find("addmm_1")));

        // Over the whole graph, two nodes share a signature exactly when their text keys (built from
        // joint.txt and joint.meta.json without the reader) are equal.
        const std::map<std::string, std::string> keys =
            TextKeys(sharedPath("graphs/torch-1.13/gpt_block2/joint.meta.json")).keys(readFile(txt));
        QCOMPARE(keys.size(), calls.size());
        std::map<std::string, std::string> keyToSig, sigToKey;
        for (NodeId id : calls) {
            const std::string sig = cost::opSignature(g, id);
            const std::string& key = keys.at(g.node(id).name);
            QCOMPARE(keyToSig.emplace(key, sig).first->second, sig);
            QCOMPARE(sigToKey.emplace(sig, key).first->second, key);
        }
        std::set<std::string> distinctKeys;
        for (const auto& kv : keys)
            distinctKeys.insert(kv.second);
        QCOMPARE(sigToKey.size(), distinctKeys.size());
        // Two layers: well under one signature per node.
        QVERIFY(sigToKey.size() * 3 < calls.size() * 2);
    }

    void signatureSpeed() {
        Graph g;
        constexpr size_t kNodes = 100000;
        g.reserve(kNodes + 2);
        const NodeId w = addPlaceholder(g, "w", tensor(DType::Float32, {512, 512}, {1, 512}));
        NodeId prev = addPlaceholder(g, "x", tensor(DType::Float32, {64, 512}, {512, 1}));
        for (size_t i = 0; i < kNodes; ++i) {
            Node n = makeNode("mm_" + std::to_string(i), NodeOp::CallFunction, "torch.ops.aten.addmm.default",
                              {Value::nodeRef(prev), Value::nodeRef(prev), Value::nodeRef(w)});
            n.kwargs = {{"beta", Value::real(0.5)}, {"alpha", Value::integer(2)}};
            prev = addTensorNode(g, std::move(n), tensor(DType::Float32, {64, 512}, {512, 1}));
        }
        QElapsedTimer timer;
        timer.start();
        std::set<std::string> distinct;
        for (NodeId id = 2; id < g.size(); ++id)
            distinct.insert(cost::opSignature(g, id));
        const qint64 ms = timer.elapsed();
        QCOMPARE(distinct.size(), size_t(1));
        QVERIFY2(ms < 1000, (std::to_string(ms) + " ms for 100k signatures").c_str());
    }

    // --- profile database ----------------------------------------------------------------------------------

    void storeAndLookup() {
        auto db = openDb(":memory:");
        const cost::ProfileKey key{"NVIDIA H100 80GB HBM3", "2.11.0", "aten.mm.default(f32[2,2]{2,1})"};
        QVERIFY(!db->lookup(key));
        QVERIFY(db->store(key, stats(3.5)));
        QCOMPARE(*db->lookup(key), stats(3.5));
        // The key has three parts: another device or torch version is another row.
        QVERIFY(!db->lookup({"cpu", key.torchVersion, key.signature}));
        QVERIFY(!db->lookup({key.device, "1.13.1", key.signature}));
        // Storing again replaces.
        QVERIFY(db->store(key, stats(4.25, 99)));
        QCOMPARE(*db->lookup(key), stats(4.25, 99));
        QCOMPARE(db->size(), size_t(1));
    }

    void reopenFindsRows() {
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/sub/dir/profiles.sqlite"; // directory created
        {
            auto db = openDb(path);
            for (const cost::ProfileRecord& r : sampleRecords())
                QVERIFY(db->store(r.key, r.stats));
        }
        auto db = openDb(path);
        QCOMPARE(db->size(), sampleRecords().size());
        for (const cost::ProfileRecord& r : sampleRecords())
            QCOMPARE(*db->lookup(r.key), r.stats);
    }

    // Four writer processes (each storing its records one by one, as `profile` does, while holding a batch
    // only briefly) and four reader processes (`profile-db list` / `cost --db`: records(), size(), lookup())
    // on one database file, all at once: nobody fails with "database is locked", no record is lost.
    void concurrentWritersAndReaders() {
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/shared.sqlite";
        constexpr int kWriters = 4, kReaders = 4, kRecords = 150;
        { // created up front, as the first profile run would
            auto db = openDb(path);
        }
        std::vector<pid_t> children;
        for (int w = 0; w < kWriters; ++w) {
            const pid_t pid = fork();
            QVERIFY(pid >= 0);
            if (pid == 0) {
                int failures = 0;
                Expected<std::unique_ptr<cost::ProfileDb>> db = cost::ProfileDb::open(path);
                if (!db)
                    _exit(100);
                for (int i = 0; i < kRecords; ++i) {
                    const cost::ProfileKey key{"cpu", "2.15.0",
                                               "aten.mm.default(w" + std::to_string(w) + "_" +
                                                   std::to_string(i) + ")"};
                    if (i % 50 == 0) { // an import-sized batch now and then
                        (*db)->beginBatch();
                        failures += !(*db)->store(key, stats(1.0 + i));
                        failures += !(*db)->commitBatch();
                    } else {
                        failures += !(*db)->store(key, stats(1.0 + i));
                    }
                }
                _exit(failures > 99 ? 99 : failures);
            }
            children.push_back(pid);
        }
        for (int r = 0; r < kReaders; ++r) {
            const pid_t pid = fork();
            QVERIFY(pid >= 0);
            if (pid == 0) {
                for (int i = 0; i < 60; ++i) {
                    Expected<std::unique_ptr<cost::ProfileDb>> db = cost::ProfileDb::open(path);
                    if (!db)
                        _exit(100 + r);
                    (void)(*db)->records();
                    (void)(*db)->size();
                    (void)(*db)->lookup({"cpu", "2.15.0", "aten.mm.default(w0_0)"});
                }
                _exit(0);
            }
            children.push_back(pid);
        }
        for (pid_t pid : children) {
            int status = 0;
            QCOMPARE(waitpid(pid, &status, 0), pid);
            QVERIFY(WIFEXITED(status));
            QCOMPARE(WEXITSTATUS(status), 0);
        }
        auto db = openDb(path);
        QCOMPARE(db->size(), size_t(kWriters * kRecords));
        for (int w = 0; w < kWriters; ++w)
            QCOMPARE(
                db->lookup({"cpu", "2.15.0", "aten.mm.default(w" + std::to_string(w) + "_149)"})->medianUs,
                150.0);
    }

    void recordsOrderedAndFiltered() {
        auto db = openDb(":memory:");
        std::vector<cost::ProfileRecord> rows = sampleRecords();
        for (const cost::ProfileRecord& r : rows)
            db->store(r.key, r.stats);
        std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
            return std::tie(a.key.device, a.key.torchVersion, a.key.signature) <
                   std::tie(b.key.device, b.key.torchVersion, b.key.signature);
        });
        const std::vector<cost::ProfileRecord> all = db->records();
        QCOMPARE(all.size(), rows.size());
        for (size_t i = 0; i < rows.size(); ++i) {
            QCOMPARE(all[i].key, rows[i].key);
            QCOMPARE(all[i].stats, rows[i].stats);
        }
        const auto h100 = db->records(std::string_view("NVIDIA H100 80GB HBM3"));
        QCOMPARE(h100.size(), size_t(3));
        for (const cost::ProfileRecord& r : h100)
            QCOMPARE(r.key.device, std::string("NVIDIA H100 80GB HBM3"));
        QVERIFY(db->records(std::string_view("no such device")).empty());
    }

    void batchOfTenThousand() {
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/batch.sqlite";
        QElapsedTimer timer;
        timer.start();
        {
            auto db = openDb(path);
            db->beginBatch();
            for (int i = 0; i < 10000; ++i)
                QVERIFY(db->store({"dev", "2.11.0", "op" + std::to_string(i)}, stats(i * 0.5, i)));
            QVERIFY(db->commitBatch());
        }
        auto db = openDb(path);
        QCOMPARE(db->size(), size_t(10000));
        QCOMPARE(*db->lookup({"dev", "2.11.0", "op7777"}), stats(7777 * 0.5, 7777));
        QVERIFY2(timer.elapsed() < 10000, (std::to_string(timer.elapsed()) + " ms").c_str());
    }

    void exportImportRoundTrip() {
        auto db = openDb(":memory:");
        for (const cost::ProfileRecord& r : sampleRecords())
            db->store(r.key, r.stats);
        const std::string json = db->exportJson();
        const Json parsed = Json::parse(json);
        QCOMPARE(parsed.at("format").get<std::string>(), std::string("jointscope-profile"));
        QCOMPARE(parsed.at("version").get<int>(), 1);
        QCOMPARE(parsed.at("records").size(), sampleRecords().size());

        auto fresh = openDb(":memory:");
        Expected<size_t> n = fresh->importJson(json, "export.json");
        JS_VERIFY_EXPECTED(n);
        QCOMPARE(*n, sampleRecords().size());
        const auto a = db->records(), b = fresh->records();
        QCOMPARE(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i) {
            QCOMPARE(a[i].key, b[i].key);
            QCOMPARE(a[i].stats, b[i].stats);
        }
        // Exporting one device keeps only its rows.
        const Json one = Json::parse(db->exportJson(std::string_view("NVIDIA H100 80GB HBM3")));
        QCOMPARE(one.at("records").size(), size_t(3));
    }

    void devicePeaksRoundTrip() {
        auto db = openDb(":memory:");
        const cost::DevicePeaks cpu{"AMD EPYC", 61.5, 30.25, 18.0, "2026-11-23T08:00:00Z"};
        const cost::DevicePeaks gpu{"NVIDIA H100 80GB HBM3", 51000, 25500, 3000, "2026-11-23T08:01:00Z"};
        QVERIFY(!db->peaks(cpu.device));
        QVERIFY(db->storePeaks(gpu));
        QVERIFY(db->storePeaks(cpu));
        QCOMPARE(*db->peaks(cpu.device), cpu);
        QCOMPARE(db->allPeaks().size(), size_t(2));
        QCOMPARE(db->allPeaks().front(), cpu); // ordered by device
        db->store({cpu.device, "1.13.1", "aten.mm.default(f32[2,2]{2,1})"}, stats(3));

        const Json all = Json::parse(db->exportJson());
        QCOMPARE(all.at("devices").size(), size_t(2));
        QCOMPARE(all.at("devices").at(0).at("gb_per_s").get<double>(), 18.0);
        const Json one = Json::parse(db->exportJson(std::string_view("AMD EPYC")));
        QCOMPARE(one.at("devices").size(), size_t(1));

        auto fresh = openDb(":memory:");
        Expected<size_t> n = fresh->importJson(db->exportJson(), "peaks.json");
        JS_VERIFY_EXPECTED(n);
        QCOMPARE(*n, size_t(1));
        QCOMPARE(fresh->allPeaks(), db->allPeaks());
        // Without peaks the export has no "devices" key (files from before peaks existed look the same).
        auto empty = openDb(":memory:");
        QVERIFY(!Json::parse(empty->exportJson()).contains("devices"));
    }

    void importBadDevicePeaksChangesNothing() {
        auto db = openDb(":memory:");
        const std::string text =
            kProfileHead +
            "  {\"device\": \"d\", \"torch\": \"t\", \"signature\": \"s\", \"median_us\": 2}\n"
            " ],\n \"devices\": [\n"
            "  {\"device\": \"cpu\", \"fp32_gflops\": 10, \"fp64_gflops\": 5, \"gb_per_s\": 20},\n"
            "  {\"device\": \"gpu\", \"fp32_gflops\": 10, \"fp64_gflops\": 5, \"gb_per_s\": -1}\n"
            " ]\n}\n";
        Expected<size_t> n = db->importJson(text, "peaks.json");
        QVERIFY(!n);
        QVERIFY2(n.error().message.find("devices[1].gb_per_s") != std::string::npos,
                 n.error().message.c_str());
        const auto [line, col] = lineColOf(text, "\"gb_per_s\": -1");
        QCOMPARE(n.error().loc.line, uint32_t(line));
        QCOMPARE(n.error().loc.col, uint32_t(col));
        QCOMPARE(db->size(), size_t(0));
        QVERIFY(db->allPeaks().empty());
    }

    void importMinimalRecord() {
        // Only device, torch, signature and median_us are required.
        auto db = openDb(":memory:");
        const std::string text =
            kProfileHead + "  {\"device\": \"d\", \"torch\": \"t\", \"signature\": \"s\", \"median_us\": 2}\n"
                           " ]\n}\n";
        Expected<size_t> n = db->importJson(text, "m.json");
        JS_VERIFY_EXPECTED(n);
        QCOMPARE(db->lookup({"d", "t", "s"})->medianUs, 2.0);
    }

    void importMalformedJsonIsLocated() {
        auto db = openDb(":memory:");
        // A missing comma between two fields of the second record.
        const std::string text =
            kProfileHead +
            "  {\"device\": \"d\", \"torch\": \"t\", \"signature\": \"a\", \"median_us\": 1},\n"
            "  {\"device\": \"d\", \"torch\": \"t\" \"signature\": \"b\", \"median_us\": 1}\n"
            " ]\n}\n";
        Expected<size_t> n = db->importJson(text, "bad.json");
        QVERIFY(!n);
        const auto [line, col] = lineColOf(text, "\"signature\": \"b\"");
        QCOMPARE(n.error().format().substr(0, n.error().format().find(": error")),
                 "bad.json:" + std::to_string(line) + ":" + std::to_string(col));
        QCOMPARE(db->size(), size_t(0));
    }

    void importWrongFieldNamesRecord() {
        auto db = openDb(":memory:");
        const std::string text =
            kProfileHead +
            "  {\"device\": \"d\", \"torch\": \"t\", \"signature\": \"a\", \"median_us\": 1},\n"
            "  {\"device\": \"d\", \"torch\": \"t\", \"signature\": \"b\",\n"
            "   \"median_us\": \"fast\"}\n"
            " ]\n}\n";
        Expected<size_t> n = db->importJson(text, "wrong.json");
        QVERIFY(!n);
        const std::string message = n.error().format();
        const auto [line, col] = lineColOf(text, "\"median_us\": \"fast\"");
        QVERIFY2(message.rfind("wrong.json:" + std::to_string(line) + ":" + std::to_string(col) + ": error: ",
                               0) == 0,
                 message.c_str());
        QVERIFY2(message.find("records[1].median_us") != std::string::npos, message.c_str());
        QVERIFY2(message.find("number") != std::string::npos, message.c_str());
        // Refused whole: the valid first record was not stored either.
        QCOMPARE(db->size(), size_t(0));

        // A missing field, an unknown field, a negative reps, a wrong format: each named.
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"{\"device\": \"d\", \"torch\": \"t\", \"median_us\": 1}",
             "records[0]: missing field 'signature'"},
            {"{\"device\": \"d\", \"torch\": \"t\", \"signature\": \"s\", \"median\": 1}",
             "records[0].median"},
            {"{\"device\": \"d\", \"torch\": \"t\", \"signature\": \"s\", \"median_us\": 1, \"reps\": -3}",
             "records[0].reps"},
            {"{\"device\": 7, \"torch\": \"t\", \"signature\": \"s\", \"median_us\": 1}",
             "records[0].device"},
            {"[1]", "records[0]: must be an object"},
        };
        for (const auto& [record, expected] : cases) {
            Expected<size_t> r = db->importJson(kProfileHead + "  " + record + "\n ]\n}\n", "c.json");
            QVERIFY2(!r, record.c_str());
            QVERIFY2(r.error().format().find(expected) != std::string::npos, r.error().format().c_str());
            QVERIFY2(r.error().loc.line >= 4, r.error().format().c_str());
        }
        Expected<size_t> wrongFormat =
            db->importJson("{\"format\": \"jointscope-graph\", \"version\": 1, \"records\": []}", "f.json");
        QVERIFY(!wrongFormat);
        QVERIFY(wrongFormat.error().format().find("f.json:1:2: error:") == 0);
    }

    void openRefusesNonDatabase() {
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/not.sqlite";
        QVERIFY(writeText(path, std::string(4096, 'x')));
        Expected<std::unique_ptr<cost::ProfileDb>> db = cost::ProfileDb::open(path);
        QVERIFY(!db);
        QVERIFY2(db.error().format().rfind(path + ": error: ", 0) == 0, db.error().format().c_str());
    }

    void defaultPath() {
        const QByteArray saved = qgetenv("JOINTSCOPE_PROFILE_DB");
        const QByteArray savedXdg = qgetenv("XDG_CACHE_HOME");
        qputenv("JOINTSCOPE_PROFILE_DB", "/tmp/x/p.sqlite");
        QCOMPARE(cost::defaultProfileDbPath(), std::string("/tmp/x/p.sqlite"));
        qunsetenv("JOINTSCOPE_PROFILE_DB");
        qputenv("XDG_CACHE_HOME", "/var/cache/u");
        QCOMPARE(cost::defaultProfileDbPath(), std::string("/var/cache/u/jointscope/profiles.sqlite"));
        qunsetenv("XDG_CACHE_HOME");
        if (!qgetenv("HOME").isEmpty())
            QCOMPARE(cost::defaultProfileDbPath(),
                     qgetenv("HOME").toStdString() + "/.cache/jointscope/profiles.sqlite");
        if (!saved.isNull())
            qputenv("JOINTSCOPE_PROFILE_DB", saved);
        if (!savedXdg.isNull())
            qputenv("XDG_CACHE_HOME", savedXdg);
    }

    // --- devices -------------------------------------------------------------------------------------------

    void fakeCudaDriver() {
        std::string note = "stale";
        const std::vector<cost::DeviceInfo> gpus =
            cost::listCudaDevices(test::testPath("JOINTSCOPE_FAKE_LIBCUDA"), &note);
        QVERIFY2(note.empty(), note.c_str());
        QCOMPARE(gpus.size(), size_t(1));
        const cost::DeviceInfo& h100 = gpus[0];
        QCOMPARE(h100.kind, std::string("cuda"));
        QCOMPARE(h100.str(), std::string("cuda:0"));
        QCOMPARE(h100.name, std::string("NVIDIA H100 80GB HBM3"));
        QCOMPARE(h100.sms, 132);
        QCOMPARE(h100.clockMHz, 1980);
        QCOMPARE(h100.memoryClockMHz, 2619);
        QCOMPARE(h100.busWidthBits, 5120);
        QCOMPARE(h100.computeCapability(), std::string("9.0"));
        QCOMPARE(h100.l2Bytes, uint64_t(50) << 20);
        QCOMPARE(h100.memoryBytes, uint64_t(85032206336ull));
        // NVIDIA's H100 SXM5 data sheet: 3.35 TB/s.
        QVERIFY2(std::abs(h100.bandwidthGBs - 3350) < 5, std::to_string(h100.bandwidthGBs).c_str());

        qputenv("FAKE_CUDA_INIT_ERROR", "100");
        const auto none = cost::listCudaDevices(test::testPath("JOINTSCOPE_FAKE_LIBCUDA"), &note);
        qunsetenv("FAKE_CUDA_INIT_ERROR");
        QVERIFY(none.empty());
        QCOMPARE(note, std::string("cuInit failed: 100 (CUDA_ERROR_NO_DEVICE)"));

        QVERIFY(cost::listCudaDevices("libjointscope-no-such-driver.so.1", &note).empty());
        QCOMPARE(note, std::string("libjointscope-no-such-driver.so.1 not found"));
    }

    void listDevicesHasCpu() {
        std::string note;
        const std::vector<cost::DeviceInfo> devices = cost::listDevices(&note);
        QVERIFY(!devices.empty());
        QCOMPARE(devices[0].kind, std::string("cpu"));
        QCOMPARE(devices[0].cores, int(processorCount()));
        const bool anyGpu = devices.size() > 1;
        QVERIFY2(anyGpu || !note.empty(), "no GPU listed and no note saying why");
    }

    // --- CLI -----------------------------------------------------------------------------------------------

    void cliDevicesJson() {
        const Run run = runCli({"devices", "--json"});
        QCOMPARE(run.exitCode, 0);
        const Json out = Json::parse(run.out);
        const Json& cpu = out.at("devices").at(0);
        QCOMPARE(cpu.at("kind").get<std::string>(), std::string("cpu"));
        QCOMPARE(cpu.at("name").get<std::string>(), cpuModelName());
        QCOMPARE(cpu.at("cores").get<size_t>(), processorCount());
        for (const Json& d : out.at("devices"))
            if (d.at("kind") == "cuda")
                QVERIFY(d.at("sms").get<int>() > 0);
        const Run text = runCli({"devices"});
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.out.find(cpuModelName()) != std::string::npos);
    }

    void cliProfileDbRoundTrip() {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        const std::string db = d + "/p.sqlite", in = d + "/in.json", out = d + "/out.json";
        // The input, written here by hand (not by exportJson).
        Json doc = {{"format", "jointscope-profile"}, {"version", 1}, {"records", Json::array()}};
        for (const cost::ProfileRecord& r : sampleRecords())
            doc["records"].push_back({{"device", r.key.device},
                                      {"torch", r.key.torchVersion},
                                      {"signature", r.key.signature},
                                      {"median_us", r.stats.medianUs},
                                      {"min_us", r.stats.minUs},
                                      {"max_us", r.stats.maxUs},
                                      {"mean_us", r.stats.meanUs},
                                      {"reps", r.stats.reps},
                                      {"measured_at", r.stats.measuredAt}});
        QVERIFY(writeText(in, doc.dump(2)));

        // list on a database that does not exist yet: no records, and no file created.
        const Run empty = runCli({"profile-db", "list", "--db", q(db)});
        QCOMPARE(empty.exitCode, 0);
        QVERIFY(!std::ifstream(db).good());

        const Run imported = runCli({"profile-db", "import", q(in), "--db", q(db)});
        QCOMPARE(imported.exitCode, 0);
        QVERIFY2(imported.out.find("imported 4 records") != std::string::npos, imported.out.c_str());

        const Run exported = runCli({"profile-db", "export", "--db", q(db), "--out", q(out)});
        QCOMPARE(exported.exitCode, 0);
        const auto sortRecords = [](Json records) {
            std::sort(records.begin(), records.end(), [](const Json& a, const Json& b) {
                return std::tie(a["device"], a["torch"], a["signature"]) <
                       std::tie(b["device"], b["torch"], b["signature"]);
            });
            return records;
        };
        QCOMPARE(sortRecords(Json::parse(readFile(out)).at("records")), sortRecords(doc["records"]));

        const Run listed =
            runCli({"profile-db", "list", "--db", q(db), "--json", "--device", "NVIDIA H100 80GB HBM3"});
        QCOMPARE(listed.exitCode, 0);
        QCOMPARE(Json::parse(listed.out).at("records").size(), size_t(3));
        const Run table = runCli({"profile-db", "list", "--db", q(db)});
        QCOMPARE(table.exitCode, 0);
        for (const cost::ProfileRecord& r : sampleRecords())
            QVERIFY2(table.out.find(r.key.signature) != std::string::npos, table.out.c_str());

        // A malformed file: located error, exit 2, nothing added.
        const std::string badText =
            "{\"format\": \"jointscope-profile\",\n \"version\": 1,\n \"records\": [}\n";
        QVERIFY(writeText(d + "/bad.json", badText));
        const Run bad = runCli({"profile-db", "import", q(d + "/bad.json"), "--db", q(db)});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.rfind(d + "/bad.json:3:14: error:", 0) == 0, bad.err.c_str());

        const Run usage = runCli({"profile-db", "frobnicate"});
        QCOMPARE(usage.exitCode, 64);
        const Run noOut = runCli({"profile-db", "export", "--db", q(db)});
        QCOMPARE(noOut.exitCode, 64);
    }

private:
    static std::string cpuModelName() {
        for (const std::string& line : splitLines(readFile("/proc/cpuinfo"))) {
            if (line.rfind("model name", 0) != 0)
                continue;
            std::string value = line.substr(line.find(':') + 1);
            value.erase(0, value.find_first_not_of(" \t"));
            value.erase(value.find_last_not_of(" \t") + 1);
            return value;
        }
        return "";
    }

    static size_t processorCount() {
        size_t n = 0;
        for (const std::string& line : splitLines(readFile("/proc/cpuinfo")))
            n += line.rfind("processor", 0) == 0;
        return n;
    }
};

QTEST_GUILESS_MAIN(TestProfileDb)
#include "tst_profiledb.moc"
