// GraphList: every field of every entry comes back as it was put in, across blocks, appends, slices and
// edits.
#include "io/GraphList.h"
#include "testutil.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace jointscope;

namespace {

// The entries a log's index would make: compiles of three graphs, a few kinds, some with what is kept aside.
std::vector<GraphEntry> sampleEntries(size_t count) {
    const char* kinds[] = {"dynamo_output_graph", "aot_joint_graph", "aot_forward_graph",
                           "aot_backward_graph", "artifact:after_post_grad_graph"};
    std::vector<GraphEntry> out;
    for (size_t i = 0; i < count; ++i) {
        GraphEntry e;
        e.index = uint32_t(i);
        e.rank = i % 7 == 0 ? -1 : int32_t(i % 4);
        e.line = uint32_t(10 * i + 1);
        e.payloadLine = uint32_t(10 * i + 2);
        e.payloadColumn = 1;
        e.nodes = i % 5 == 0 ? 0 : i * 3;
        e.payloadOffset = uint64_t(i) << 33; // past 4 GiB
        e.payloadBytes = 1000 + i;
        if (i % 11 != 0) {
            std::array<uint8_t, 16> digest{};
            for (size_t b = 0; b < digest.size(); ++b)
                digest[b] = uint8_t(i * 31 + b);
            e.digest = digest;
        }
        e.kind = kinds[i % 5];
        e.compileId = i % 13 == 0 ? std::string() : std::to_string(i / 3) + "/" + std::to_string(i % 2);
        if (i % 17 == 0)
            e.heading = "TRACED GRAPH " + std::to_string(i);
        if (i % 19 == 0)
            e.file = "/logs/rank_" + std::to_string(i % 4) + ".log";
        if (i % 23 == 0)
            e.payload = "class GraphModule(torch.nn.Module):\n    def forward(self, x):\n        return (x,)";
        if (i % 29 == 0)
            e.error = "log.txt:" + std::to_string(i) + ":5: error: expected ')'";
        if (i % 31 == 0)
            e.staticInputIndices = std::vector<int64_t>{0, int64_t(i), 7};
        if (i == 37) { // longer than a row's length byte
            e.compileId.assign(300, '7');
            e.compileId += "/0";
        }
        out.push_back(std::move(e));
    }
    return out;
}

void compareEntries(const GraphEntry& a, const GraphEntry& b) {
    QCOMPARE(a.index, b.index);
    QCOMPARE(a.rank, b.rank);
    QCOMPARE(a.line, b.line);
    QCOMPARE(a.payloadLine, b.payloadLine);
    QCOMPARE(a.payloadColumn, b.payloadColumn);
    QCOMPARE(a.nodes, b.nodes);
    QCOMPARE(a.payloadOffset, b.payloadOffset);
    QCOMPARE(a.payloadBytes, b.payloadBytes);
    QVERIFY(a.digest == b.digest);
    QCOMPARE(a.kind, b.kind);
    QCOMPARE(a.compileId, b.compileId);
    QCOMPARE(a.heading, b.heading);
    QCOMPARE(a.file, b.file);
    QCOMPARE(a.payload, b.payload);
    QCOMPARE(a.error, b.error);
    QVERIFY(a.staticInputIndices == b.staticInputIndices);
}

#define JS_COMPARE_ALL(list, expected)                                                                       \
    do {                                                                                                     \
        QCOMPARE((list).size(), (expected).size());                                                          \
        for (size_t k = 0; k < (expected).size(); ++k) {                                                     \
            compareEntries((list)[k], (expected)[k]);                                                        \
            if (QTest::currentTestFailed())                                                                  \
                QFAIL(qPrintable(QString("entry %1").arg(k)));                                               \
            QCOMPARE((list).kind(k), std::string_view((expected)[k].kind));                                  \
            QCOMPARE((list).compileId(k), std::string_view((expected)[k].compileId));                        \
            QCOMPARE((list).file(k), std::string_view((expected)[k].file));                                  \
            QCOMPARE((list).rank(k), (expected)[k].rank);                                                    \
            QCOMPARE((list).entryIndex(k), (expected)[k].index);                                             \
        }                                                                                                    \
    } while (false)

} // namespace

class TestGraphList : public QObject {
    Q_OBJECT

    static void residentBlocks() {
        QTest::addColumn<int>("resident");
        QTest::newRow("in memory") << 64;
        QTest::newRow("on disk") << 1;
    }

private slots:
    void everyFieldComesBackAcrossBlocks() {
        const std::vector<GraphEntry> expected = sampleEntries(10000); // three blocks of rows
        GraphList list;
        for (const GraphEntry& e : expected)
            list.push_back(e);
        JS_COMPARE_ALL(list, expected);
        QCOMPARE(list.front().line, expected.front().line);
        QCOMPARE(list.back().line, expected.back().line);
    }

    void iteratesAsEntries() {
        const std::vector<GraphEntry> expected = sampleEntries(5000);
        GraphList list;
        for (const GraphEntry& e : expected)
            list.push_back(e);
        QCOMPARE(size_t(std::distance(list.begin(), list.end())), expected.size());
        const auto joints = std::count_if(list.begin(), list.end(),
                                          [](const GraphEntry& e) { return e.kind == "aot_joint_graph"; });
        QCOMPARE(size_t(joints), expected.size() / 5);
        const auto failed =
            std::find_if(list.begin(), list.end(), [](const GraphEntry& e) { return e.failed(); });
        QVERIFY(failed != list.end());
        QCOMPARE((*failed).index, 0u); // 0 % 29 == 0
        const auto later =
            std::find_if(list.begin() + 1, list.end(), [](const GraphEntry& e) { return e.failed(); });
        QCOMPARE(later - list.begin(), ptrdiff_t(29));
        size_t seen = 0;
        for (const GraphEntry& e : list)
            seen += e.index == seen;
        QCOMPARE(seen, expected.size());
    }

    // The tests that edit a list run with its rows in memory and with all but the last block on the disk.
    void partsJoinAsOneList_data() { residentBlocks(); }
    void ranksJoinAFolder_data() { residentBlocks(); }
    void setReplacesOneEntry_data() { residentBlocks(); }

    // A log read in parts: each part's list joins the whole, moved or copied, lines and indices shifted.
    void partsJoinAsOneList() {
        QFETCH(int, resident);
        std::vector<GraphEntry> expected = sampleEntries(9001);
        const size_t split = 4100, lineBase = 40000;
        GraphList first(resident), second(resident);
        for (size_t i = 0; i < expected.size(); ++i) {
            GraphEntry local = expected[i];
            if (i >= split) { // as the second part saw it: its own lines and indices
                local.line -= uint32_t(lineBase);
                local.payloadLine -= uint32_t(lineBase);
                local.index = uint32_t(i - split);
            }
            (i < split ? first : second).push_back(local);
        }
        GraphList copied = first;
        copied.append(second);
        copied.shiftRows(split, uint32_t(lineBase), uint32_t(split));
        JS_COMPARE_ALL(copied, expected);

        first.append(std::move(second));
        QVERIFY(second.empty());
        first.shiftRows(split, uint32_t(lineBase), uint32_t(split));
        JS_COMPARE_ALL(first, expected);
        QCOMPARE(first.spilledRows() > 0, resident == 1);

        const GraphList middle = first.slice(4000, 8200);
        const std::vector<GraphEntry> expectedMiddle(expected.begin() + 4000, expected.begin() + 8200);
        JS_COMPARE_ALL(middle, expectedMiddle);
        QVERIFY(first.slice(8200, 4000).empty());
        QCOMPARE(first.slice(8990, 100000).size(), size_t(11));
    }

    // A folder of per-rank logs: each rank's list joins the folder's, its entries tagged with their log.
    void ranksJoinAFolder() {
        QFETCH(int, resident);
        const std::vector<GraphEntry> rank0 = sampleEntries(9000), rank1 = sampleEntries(300);
        GraphList folder(resident), a(resident), b(resident);
        for (const GraphEntry& e : rank0)
            a.push_back(e);
        for (const GraphEntry& e : rank1)
            b.push_back(e);
        folder.append(std::move(a));
        folder.setOrigin(0, 0, "/logs/rank_0.log");
        folder.append(std::move(b));
        folder.shiftRows(9000, 0, 9000);
        folder.setOrigin(9000, 1, "/logs/rank_1.log");
        std::vector<GraphEntry> expected = rank0;
        expected.insert(expected.end(), rank1.begin(), rank1.end());
        for (size_t i = 0; i < expected.size(); ++i) {
            expected[i].rank = i < 9000 ? 0 : 1;
            expected[i].file = i < 9000 ? "/logs/rank_0.log" : "/logs/rank_1.log";
            expected[i].index = uint32_t(i);
        }
        JS_COMPARE_ALL(folder, expected);
    }

    void setReplacesOneEntry() {
        QFETCH(int, resident);
        std::vector<GraphEntry> expected = sampleEntries(9000); // the entries set lie in the first block
        GraphList list(resident);
        for (const GraphEntry& e : expected)
            list.push_back(e);
        QCOMPARE(list.spilledRows() > 0, resident == 1);
        expected[1].error = "log.txt:12:3: error: unknown op"; // nothing kept aside before
        expected[1].nodes = 0;
        expected[23].payload.clear(); // kept aside before
        expected[23].kind = "a kind never seen";
        expected[23].staticInputIndices = std::vector<int64_t>{};
        expected[40].nodes = 5000000000ull; // more than a row holds
        for (size_t i : {1, 23, 40})
            list.set(i, expected[i]);
        expected[40].nodes = UINT32_MAX;
        JS_COMPARE_ALL(list, expected);
    }

    void initializerListAndEmpty() {
        GraphEntry a;
        a.kind = "fx";
        GraphEntry b;
        b.kind = "json";
        b.index = 1;
        const GraphList list{a, b};
        QCOMPARE(list.size(), size_t(2));
        QCOMPARE(list[1].kind, std::string("json"));
        QCOMPARE(list[0].compileId, std::string());
        QCOMPARE(list[0].rank, -1);
        GraphList none;
        QVERIFY(none.empty());
        QVERIFY(none.begin() == none.end());
    }
};

QTEST_GUILESS_MAIN(TestGraphList)
#include "tst_graphlist.moc"
