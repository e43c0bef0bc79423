// The Alt+arrow edge walk (views/models/Navigation) on a real torch 1.13 joint graph, against producers and
// consumers read independently from the file's text; and the meta text the search reads.
#include "models/Navigation.h"
#include "testutil.h"

#include <map>
#include <regex>
#include <set>

using namespace jointscope;
using namespace jointscope::views;
using namespace jointscope::test;

namespace {

struct TextEdges {
    std::vector<std::string> order;                            // node names in file order
    std::map<std::string, std::vector<std::string>> producers; // distinct, in argument order
    std::map<std::string, std::vector<std::string>> consumers; // distinct, in file order
};

// Names a statement's right-hand side reads: identifiers that are defined nodes, not attributes or kwargs.
std::vector<std::string> readsOf(const std::string& rhs, const std::set<std::string>& defined) {
    std::vector<std::string> names;
    const std::regex ident("[A-Za-z_]\\w*");
    for (auto it = std::sregex_iterator(rhs.begin(), rhs.end(), ident); it != std::sregex_iterator(); ++it) {
        const size_t at = size_t(it->position());
        const std::string word = it->str();
        if (at > 0 && rhs[at - 1] == '.')
            continue;
        const size_t after = rhs.find_first_not_of(' ', at + word.size());
        if (after != std::string::npos && rhs[after] == '=' && rhs.compare(after, 2, "==") != 0)
            continue;
        if (defined.count(word) && std::find(names.begin(), names.end(), word) == names.end())
            names.push_back(word);
    }
    return names;
}

TextEdges parsePrintReadable(const std::string& path) {
    TextEdges edges;
    std::set<std::string> defined;
    const std::regex flatten("^\\s+([\\w, ]+?),?\\s*= fx_pytree\\.tree_flatten_spec");
    const std::regex stmt("^\\s+(\\w+) = (.*)$");
    const std::regex ret("^\\s+return (.*)$");
    std::smatch m;
    auto add = [&](const std::string& name, const std::vector<std::string>& reads) {
        edges.order.push_back(name);
        defined.insert(name);
        edges.producers[name] = reads;
        for (const std::string& r : reads)
            edges.consumers[r].push_back(name);
    };
    for (std::string line : splitLines(readFile(path))) {
        if (const size_t cut = line.find(";  "); cut != std::string::npos)
            line.resize(cut); // "x = None" deletions are not reads
        if (std::regex_search(line, m, flatten)) {
            const std::string list = m[1];
            const std::regex ident("\\w+");
            for (auto it = std::sregex_iterator(list.begin(), list.end(), ident);
                 it != std::sregex_iterator(); ++it)
                add(it->str(), {});
        } else if (std::regex_search(line, m, ret)) {
            add("output", readsOf(m[1], defined));
        } else if (std::regex_search(line, m, stmt)) {
            add(m[1], readsOf(m[2], defined));
        }
    }
    return edges;
}

} // namespace

class TestGuiNavigation : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        path_ = sharedPath("graphs/torch-1.13/gpt_block2/joint.txt");
        graph_ = loadGraphAt(path_);
        text_ = parsePrintReadable(path_);
        QCOMPARE(text_.order.size(), graph_.size());
    }

    void neighbours() {
        for (const std::string& name : text_.order) {
            const NodeId id = *graph_.find(name);
            std::vector<std::string> producers, consumers;
            for (NodeId p : producersOf(graph_, id))
                producers.push_back(graph_.node(p).name);
            for (NodeId c : consumersOf(graph_, id))
                consumers.push_back(graph_.node(c).name);
            QVERIFY2(producers == text_.producers[name], name.c_str());
            QVERIFY2(consumers == text_.consumers[name], name.c_str());
        }
    }

    // Alt+Up / Alt+Down go to the first producer / consumer, and nowhere at a source / sink.
    void upAndDown() {
        for (const std::string& name : text_.order) {
            const NodeId id = *graph_.find(name);
            EdgeWalker walker;
            const NodeId up = walker.step(graph_, id, WalkStep::Producer);
            const auto& producers = text_.producers[name];
            QCOMPARE(up == kNoNode ? std::string() : graph_.node(up).name,
                     producers.empty() ? std::string() : producers.front());
            EdgeWalker walker2;
            const NodeId down = walker2.step(graph_, id, WalkStep::Consumer);
            const auto& consumers = text_.consumers[name];
            QCOMPARE(down == kNoNode ? std::string() : graph_.node(down).name,
                     consumers.empty() ? std::string() : consumers.front());
        }
    }

    // After Alt+Down from P, Alt+Right visits every consumer of P in order and wraps; after Alt+Up from C,
    // Alt+Left visits C's producers backwards.
    void siblings() {
        size_t checked = 0;
        for (const std::string& name : text_.order) {
            const NodeId id = *graph_.find(name);
            const auto& consumers = text_.consumers[name];
            if (consumers.size() >= 2) {
                EdgeWalker walker;
                NodeId at = walker.step(graph_, id, WalkStep::Consumer);
                for (size_t i = 1; i <= consumers.size(); ++i) {
                    at = walker.step(graph_, at, WalkStep::Next);
                    QCOMPARE(graph_.node(at).name, consumers[i % consumers.size()]);
                }
                ++checked;
            }
            const auto& producers = text_.producers[name];
            if (producers.size() >= 2) {
                EdgeWalker walker;
                NodeId at = walker.step(graph_, id, WalkStep::Producer);
                for (size_t i = 1; i <= producers.size(); ++i) {
                    at = walker.step(graph_, at, WalkStep::Previous);
                    QCOMPARE(graph_.node(at).name,
                             producers[(producers.size() - i % producers.size()) % producers.size()]);
                }
                // Back down the same edge returns to a consumer of the producer we stand on.
                const NodeId down = walker.step(graph_, at, WalkStep::Consumer);
                QCOMPARE(graph_.node(down).name, text_.consumers[graph_.node(at).name].front());
                ++checked;
            }
        }
        QVERIFY(checked > 50);
    }

    // Without a walked edge, siblings are the other consumers of the first producer.
    void siblingsWithoutWalk() {
        for (const std::string& name : text_.order) {
            const auto& producers = text_.producers[name];
            if (producers.empty())
                continue;
            const auto& peers = text_.consumers[producers.front()];
            EdgeWalker walker;
            const NodeId next = walker.step(graph_, *graph_.find(name), WalkStep::Next);
            if (peers.size() < 2) {
                QCOMPARE(next, kNoNode);
                continue;
            }
            const size_t at = size_t(std::find(peers.begin(), peers.end(), name) - peers.begin());
            QCOMPARE(graph_.node(next).name, peers[(at + 1) % peers.size()]);
        }
    }

    // Search reads meta: the `# File:` line of a torch 2 graph is in the node's search text.
    void metaText() {
        const std::string path =
            sharedPath("graphs/torch-trace/inductor_provenance_jit_debug_handle_log.txt");
        const Graph graph = loadGraphAt(path);
        size_t withTrace = 0;
        for (const Node& node : graph.nodes())
            if (metaSearchText(node).find("test_provenance_tracing.py") != std::string::npos)
                ++withTrace;
        // Counted in the text: statements of the first graph printed under a "# File:" comment.
        QVERIFY(withTrace >= 6);
        QVERIFY(metaSearchText(graph.node(0)).find("test_provenance_tracing.py") == std::string::npos);
    }

private:
    std::string path_;
    Graph graph_;
    TextEdges text_;
};

QTEST_GUILESS_MAIN(TestGuiNavigation)
#include "tst_gui_navigation.moc"
