// graph/Layers on real graphs without nn_module_stack (torch 1.13 joint graphs, torch 2 prints): the layer
// count comes from the model definition or from bench/gen_big_graph.py's repeats, and the node counts of one
// layer from independent counting (the difference between graphs with more and fewer layers).
#include "graph/GraphStats.h"
#include "graph/Layers.h"
#include "testutil.h"

#include <QProcess>
#include <QTemporaryDir>

#include <regex>

using namespace jointscope;
using jointscope::test::loadGraphAt;
using jointscope::test::readFile;
using jointscope::test::sharedPath;
using jointscope::test::sourcePath;

namespace {

using Generated = jointscope::test::GeneratedGraph;

Generated generate(const QTemporaryDir& dir, const QString& style, const QString& size, const QString& name) {
    return jointscope::test::generateBigGraph(dir.filePath(name), style, size);
}

std::vector<const LayerSegment*> layersOf(const LayerSplit& split, bool backward) {
    std::vector<const LayerSegment*> result;
    for (const LayerSegment& s : split.segments)
        if (s.kind == SegmentKind::Layer && s.backward == backward)
            result.push_back(&s);
    return result;
}

void checkPartition(const Graph& graph, const LayerSplit& split);

size_t placeholders(const Graph& graph) {
    size_t count = 0;
    for (const Node& n : graph.nodes())
        count += n.op == NodeOp::Placeholder;
    return count;
}

QString systemPython() {
    return QStringLiteral("/usr/bin/python3"); // Debian's, with torch 1.13
}
QString torch2Python() {
    return qEnvironmentVariable("HOME") + QStringLiteral("/.cache/jointscope/torch-2.15/bin/python");
}

// models.py's gpt_stack ("gpt") or TinyLM ("lm") with `layers` blocks, exported by jointscope_torch.
Graph capture(const QTemporaryDir& dir, const QString& python, const char* model, int layers) {
    const QString out = dir.filePath(QStringLiteral("%1%2.json").arg(model).arg(layers));
    const QString script =
        QStringLiteral("import sys, torch\n"
                       "from jointscope_torch import export_joint\n"
                       "from jointscope_torch.models import TinyLM, gpt_stack\n"
                       "out, kind, layers = sys.argv[1], sys.argv[2], int(sys.argv[3])\n"
                       "if kind == 'gpt':\n"
                       "    model, args = gpt_stack(layers=layers, seed=1)\n"
                       "else:\n"
                       "    torch.manual_seed(0)\n"
                       "    model = TinyLM(layers=layers)\n"
                       "    args = (torch.randint(0, 64, (2, 16)), torch.randint(0, 64, (2, 16)))\n"
                       "export_joint(model, args, out, name=kind + str(layers))\n");
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PYTHONPATH"), QString::fromStdString(sourcePath("python")));
    process.setProcessEnvironment(env);
    process.start(python,
                  {QStringLiteral("-c"), script, out, QString::fromLatin1(model), QString::number(layers)});
    if (!process.waitForFinished(300000) || process.exitCode() != 0)
        qFatal("capture with %s failed: %s", qPrintable(python), process.readAllStandardError().constData());
    return loadGraphAt(out.toStdString());
}

// `shallow` has `layers` blocks, `deep` one more: every forward (backward) layer has as many nodes as `deep`
// has more forward (backward) call_function nodes than `shallow`.
void checkStacks(const Graph& shallow, const Graph& deep, size_t layers, const LayerOptions& options) {
    const GraphStats s = computeStats(shallow), d = computeStats(deep);
    const size_t forwardPerLayer = d.forward - s.forward, backwardPerLayer = d.backward - s.backward;
    for (const auto& [graph, count] : {std::pair{&shallow, layers}, std::pair{&deep, layers + 1}}) {
        const LayerSplit split = findLayers(*graph, options);
        QCOMPARE(split.layers, count);
        checkPartition(*graph, split);
        const auto fwd = layersOf(split, false), bwd = layersOf(split, true);
        QCOMPARE(fwd.size(), count);
        QCOMPARE(bwd.size(), count);
        for (size_t i = 0; i < count; ++i) {
            QCOMPARE(fwd[i]->layer, int32_t(i));
            QCOMPARE(bwd[i]->layer, int32_t(count - 1 - i));
            QCOMPARE(fwd[i]->nodes.size(), forwardPerLayer);
            QCOMPARE(bwd[i]->nodes.size(), backwardPerLayer);
        }
    }
}

// Every node but placeholders and the output in exactly one segment; layers 0 … N-1 once per phase present.
void checkPartition(const Graph& graph, const LayerSplit& split) {
    std::vector<int> seen(graph.size(), 0);
    for (size_t s = 0; s < split.segments.size(); ++s)
        for (NodeId id : split.segments[s].nodes) {
            ++seen[id];
            QCOMPARE(split.segmentOf[id], int32_t(s));
        }
    for (NodeId id = 0; id < graph.size(); ++id) {
        const bool part = graph.node(id).op != NodeOp::Placeholder && graph.node(id).op != NodeOp::Output;
        QVERIFY2(seen[id] == (part ? 1 : 0), graph.node(id).name.c_str());
    }
}

} // namespace

class TestLayers : public QObject {
    Q_OBJECT

private slots:
    // Two GPTBlocks (models.py: pre-norm, x + attn(ln1(x)), then x + mlp(ln2(x))), printed by torch 1.13.
    void gptBlock2HasTwoLayers() {
        const Graph graph = loadGraphAt(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt"));
        const LayerSplit split = findLayers(graph);
        QCOMPARE(split.source, LayerSource::Repeats);
        QCOMPARE(split.layers, size_t(2));
        checkPartition(graph, split);
        const auto fwd = layersOf(split, false), bwd = layersOf(split, true);
        QCOMPARE(fwd.size(), size_t(2));
        QCOMPARE(bwd.size(), size_t(2));
        QCOMPARE(fwd[0]->label, std::string("layer 0"));
        QCOMPARE(fwd[1]->label, std::string("layer 1"));
        QCOMPARE(fwd[0]->nodes.size(), fwd[1]->nodes.size());
        QCOMPARE(bwd[0]->nodes.size(), bwd[1]->nodes.size());
        // The backward runs the last layer first.
        QCOMPARE(bwd[0]->layer, 1);
        QCOMPARE(bwd[1]->layer, 0);
        // Each block starts with its first layer norm.
        for (const LayerSegment* layer : fwd)
            QCOMPARE(QString::fromStdString(graph.node(layer->nodes.front()).target.op),
                     QStringLiteral("native_layer_norm"));
    }

    // GPT stacks of 3 and 4 blocks captured live by torch 1.13 (no nn_module_stack in its joint graphs):
    // exactly 3 and 4 layers, each layer as many forward and backward nodes as the deeper graph has more.
    void torch113GptStacks() {
        QTemporaryDir dir;
        const Graph a = capture(dir, systemPython(), "gpt", 3), b = capture(dir, systemPython(), "gpt", 4);
        checkStacks(a, b, 3, {});
    }

    // TinyLM (embeddings, dropout, GPT blocks, head, cross-entropy) captured live by torch 2.x through
    // torch.compile, once by its nn_module_stack and once by structure alone, as a printed log gives it.
    void torch2LanguageModels() {
        QTemporaryDir dir;
        const QString python = torch2Python();
        const Graph a = capture(dir, python, "lm", 3), b = capture(dir, python, "lm", 4);
        checkStacks(a, b, 3, {});
        LayerOptions structureOnly;
        structureOnly.useModuleStack = false;
        checkStacks(a, b, 3, structureOnly);
        QCOMPARE(findLayers(a).source, LayerSource::ModuleStack);
        QCOMPARE(findLayers(a, structureOnly).source, LayerSource::Repeats);
        // The model's non-repeated parts, forward then backward.
        QStringList labels;
        for (const LayerSegment& s : findLayers(a, structureOnly).segments)
            labels << QString::fromStdString(s.label) + (s.backward ? "'" : "");
        QCOMPARE(labels.join(' '), QStringLiteral("embedding layer 0 layer 1 layer 2 head loss "
                                                  "loss' head' layer 2' layer 1' layer 0' embedding'"));
    }

    // The 7,395-node 48-layer GPT of the benchmarks (bench/gen_big_graph.py, two torch 1.13 blocks per
    // repeat): 48 layers of equal size that hold every op of the graph (it has no embedding or head).
    void generated113Gpt48() {
        QTemporaryDir dir;
        const Generated g =
            generate(dir, QStringLiteral("113"), QStringLiteral("--layers=48"), QStringLiteral("gpt48.txt"));
        const Graph graph = loadGraphAt(g.path);
        QCOMPARE(graph.size(), g.nodes);
        const LayerSplit split = findLayers(graph);
        QCOMPARE(split.layers, size_t(48));
        checkPartition(graph, split);
        const auto fwd = layersOf(split, false), bwd = layersOf(split, true);
        QCOMPARE(fwd.size(), size_t(48));
        QCOMPARE(bwd.size(), size_t(48));
        for (size_t i = 0; i < 48; ++i) {
            QCOMPARE(fwd[i]->nodes.size(), fwd[0]->nodes.size());
            QCOMPARE(bwd[i]->nodes.size(), bwd[0]->nodes.size());
        }
        QCOMPARE(48 * (fwd[0]->nodes.size() + bwd[0]->nodes.size()), g.nodes - placeholders(graph) - 1);
    }

    // The torch 2.x print (annotations, `# File:` lines, descriptors) repeated: one layer per repeat.
    void generated2xOneLayerPerRepeat() {
        QTemporaryDir dir;
        const Generated g =
            generate(dir, QStringLiteral("2x"), QStringLiteral("--nodes=1500"), QStringLiteral("g2x.txt"));
        const Graph graph = loadGraphAt(g.path);
        const LayerSplit split = findLayers(graph);
        QCOMPARE(split.layers, g.repeats);
        checkPartition(graph, split);
        QCOMPARE(layersOf(split, false).size(), g.repeats);
        QCOMPARE(layersOf(split, true).size(), g.repeats);
    }

    // A graph with no repeated layer (the MLP: two linears of different shapes) gets none.
    void mlpHasNoLayers() {
        const Graph graph = loadGraphAt(sharedPath("graphs/torch-1.13/mlp/joint.txt"));
        const LayerSplit split = findLayers(graph);
        QVERIFY(!split.found());
        QVERIFY(split.segments.empty());
    }
};

QTEST_GUILESS_MAIN(TestLayers)
#include "tst_layers.moc"
