// The dI / dW split of a backward graph: the seed's expected graphs (written by autoparallel's
// split_di_dw_graph), the CLI, and bad counts.
#include "testutil.h"

#include "io/GraphFile.h"
#include "partition/SplitDw.h"

#include <QTemporaryDir>

#include <filesystem>

using namespace jointscope;
using namespace jointscope::test;

namespace {

Graph load(const std::string& path) {
    return loadGraphAt(path);
}

std::string render(const Graph& g, const Value& v) {
    switch (v.kind()) {
    case ValueKind::NodeRef:
        return g.node(v.asNode()).name;
    case ValueKind::Int:
        return std::to_string(v.asInt());
    case ValueKind::None:
        return "None";
    case ValueKind::List:
    case ValueKind::Tuple: {
        std::string s = v.kind() == ValueKind::List ? "[" : "(";
        for (const Value& item : v.items())
            s += render(g, item) + ", ";
        return s + (v.kind() == ValueKind::List ? "]" : ")");
    }
    default:
        return "<" + v.text() + ">";
    }
}

// One line per node: "name = op target(args)", with arguments by node name, so two graphs compare as text.
std::vector<std::string> lines(const Graph& g) {
    std::vector<std::string> out;
    for (const Node& n : g.nodes()) {
        std::string line = n.name + " = " + std::string(nodeOpName(n.op));
        if (n.op == NodeOp::CallFunction)
            line += " " + n.target.text;
        line += "(";
        for (const Value& a : n.args)
            line += render(g, a) + ", ";
        out.push_back(line + ")");
    }
    return out;
}

std::string snippet(const char* name) {
    return sharedPath(std::string("graphs/snippets/") + name);
}

} // namespace

class TestSplitDw : public QObject {
    Q_OBJECT

private slots:
    void reproducesSeedGraphs() {
        const Graph backward = load(snippet("pp_backward_seed000.txt"));
        Expected<partition::DiDwSplit> split = partition::splitDiDw(backward, 1);
        QVERIFY(split);
        const Graph di = load(snippet("pp_backward_seed000.expected_di.txt"));
        const Graph dw = load(snippet("pp_backward_seed000.expected_dw.txt"));
        QCOMPARE(lines(split->di), lines(di));
        QCOMPARE(lines(split->dw), lines(dw));
        QCOMPARE(split->carried, (std::vector<std::string>{"primals_1", "expand"}));
    }

    void allOrNoWeightGradients() {
        const Graph backward = load(snippet("pp_backward_seed000.txt"));
        // No weight gradients: dW has nothing to do and nothing is carried.
        Expected<partition::DiDwSplit> none = partition::splitDiDw(backward, 0);
        QVERIFY(none);
        QVERIFY(none->carried.empty());
        // Only weight gradients: dI computes nothing but what dW reads.
        Expected<partition::DiDwSplit> all = partition::splitDiDw(backward, 2);
        QVERIFY(all);
        QCOMPARE(all->dw.outputNode().has_value(), true);
    }

    void badCountsAreExplained() {
        const Graph backward = load(snippet("pp_backward_seed000.txt"));
        for (int64_t n : {int64_t(-1), int64_t(3)}) {
            Expected<partition::DiDwSplit> split = partition::splitDiDw(backward, n);
            QVERIFY(!split);
            QVERIFY2(split.error().message.find("returns 2 values") != std::string::npos,
                     split.error().message.c_str());
        }
    }

    void cli() {
        QTemporaryDir dir;
        const QString file = QString::fromStdString(snippet("pp_backward_seed000.txt"));
        const Run run = runCli({"split-dw", file, "--num-weight-grads", "1", "--out", dir.path(), "--json"});
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.out.find("\"expand\"") != std::string::npos, run.out.c_str());
        const Graph di = load(dir.filePath("di.txt").toStdString());
        QCOMPARE(lines(di), lines(load(snippet("pp_backward_seed000.expected_di.txt"))));
        QVERIFY(std::filesystem::exists(dir.filePath("dw.json").toStdString()));
        QCOMPARE(runCli({"split-dw", file, "--out", dir.path()}).exitCode, 64);
        QCOMPARE(runCli({"split-dw", file, "--num-weight-grads", "x", "--out", dir.path()}).exitCode, 64);
        const Run bad = runCli({"split-dw", file, "--num-weight-grads", "5", "--out", dir.path()});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.find("pp_backward_seed000.txt") != std::string::npos, bad.err.c_str());
    }
};

QTEST_MAIN(TestSplitDw)
#include "tst_splitdw.moc"
