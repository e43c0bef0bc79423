// SpillVector: values come back as they were put in, whether their block stayed in memory or went to the
// temporary file, through edits, copies, moves, reads on several threads, and without a writable $TMPDIR.
#include "support/SpillBlocks.h"
#include "testutil.h"

#include <cstdlib>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

using namespace jointscope;

namespace {

struct Record {
    uint64_t offset = 0;
    uint32_t line = 0;
    int32_t rank = -1;
    std::array<uint8_t, 5> tag{};
};

Record recordAt(size_t i) {
    Record r;
    r.offset = uint64_t(i) * 1000003u + (uint64_t(i) << 34);
    r.line = uint32_t(i * 7 + 1);
    r.rank = int32_t(i % 9) - 1;
    for (size_t b = 0; b < r.tag.size(); ++b)
        r.tag[b] = uint8_t(i + b * 13);
    return r;
}

bool same(const Record& a, const Record& b) {
    return a.offset == b.offset && a.line == b.line && a.rank == b.rank && a.tag == b.tag;
}

// The first position where `values` is not recordAt(i) edited by `edit`, or size when none.
template <class Edit> size_t firstDifference(const SpillVector<Record>& values, size_t count, Edit edit) {
    if (values.size() != count)
        return 0;
    for (size_t i = 0; i < count; ++i) {
        Record expected = recordAt(i);
        edit(i, expected);
        if (!same(values[i], expected))
            return i;
    }
    return count;
}

size_t firstDifference(const SpillVector<Record>& values, size_t count) {
    return firstDifference(values, count, [](size_t, Record&) {});
}

constexpr size_t kBlock = SpillVector<Record>::kBlockValues;

} // namespace

class TestSpillVector : public QObject {
    Q_OBJECT
private slots:
    void valuesComeBackFromTheFile() {
        const size_t count = 5 * kBlock + 17;
        SpillVector<Record> values(1);
        for (size_t i = 0; i < count; ++i)
            values.push_back(recordAt(i));
        QCOMPARE(values.spilledValues(), 5 * kBlock); // all but the block being filled
        QCOMPARE(firstDifference(values, count), count);
        // Read out of order: back and forth between blocks on the disk.
        for (size_t i : {size_t(3), 4 * kBlock + 1, size_t(0), 2 * kBlock + 9, count - 1, kBlock})
            QVERIFY(same(values[i], recordAt(i)));
        size_t seen = 0;
        for (const Record r : values)
            seen += same(r, recordAt(seen));
        QCOMPARE(seen, count);
        QVERIFY(values.heldBytes() < 4 * kBlock * sizeof(Record)); // a block in memory, two read back
    }

    void setAndUpdateReachTheFile() {
        const size_t count = 4 * kBlock;
        SpillVector<Record> values(2);
        for (size_t i = 0; i < count; ++i)
            values.push_back(recordAt(i));
        QCOMPARE(values.spilledValues(), 2 * kBlock);
        // A block read back before it is written: the copy read back must follow the write.
        QVERIFY(same(values[5], recordAt(5)));
        Record changed = recordAt(5);
        changed.line = 99;
        values.set(5, changed);
        values.set(3 * kBlock + 2, changed); // in memory
        // A range from the middle of the first block on the disk to the middle of the last one in memory.
        const size_t from = kBlock / 2, to = 3 * kBlock + kBlock / 2;
        values.update(from, to, [](Record& r) { r.rank += 100; });
        QCOMPARE(firstDifference(values, count,
                                 [&](size_t i, Record& r) {
                                     if (i == 5 || i == 3 * kBlock + 2)
                                         r = changed;
                                     if (i >= from && i < to)
                                         r.rank += 100;
                                 }),
                 count);
    }

    void copiesAndMovesKeepTheirValues() {
        const size_t count = 3 * kBlock + 5;
        SpillVector<Record> values(1);
        for (size_t i = 0; i < count; ++i)
            values.push_back(recordAt(i));
        SpillVector<Record> copy = values;
        Record changed = recordAt(0);
        changed.rank = 1234;
        values.set(0, changed); // the copy has a file of its own
        QCOMPARE(firstDifference(copy, count), count);
        QCOMPARE(copy.spilledValues(), 3 * kBlock);
        SpillVector<Record> moved = std::move(copy);
        QCOMPARE(firstDifference(moved, count), count);
        QVERIFY(copy.empty()); // NOLINT(bugprone-use-after-move): a moved-from vector is empty and usable
        copy.push_back(recordAt(0));
        QCOMPARE(firstDifference(copy, 1), size_t(1));
        moved.clear();
        QVERIFY(moved.empty());
        moved.push_back(recordAt(0));
        QCOMPARE(firstDifference(moved, 1), size_t(1));
        QCOMPARE(values[0].rank, 1234);
    }

    void readsOnSeveralThreads() {
        const size_t count = 8 * kBlock;
        SpillVector<Record> values(1);
        for (size_t i = 0; i < count; ++i)
            values.push_back(recordAt(i));
        std::vector<size_t> wrong(4, 0);
        std::vector<std::thread> readers;
        for (size_t t = 0; t < wrong.size(); ++t)
            readers.emplace_back([&, t] {
                // Each thread walks the blocks in another order, so that the two read back keep changing.
                for (size_t k = 0; k < count; ++k) {
                    const size_t i = (k * (2 * t + 1) + t * kBlock) % count;
                    wrong[t] += !same(values[i], recordAt(i));
                }
            });
        for (std::thread& reader : readers)
            reader.join();
        QCOMPARE(std::accumulate(wrong.begin(), wrong.end(), size_t(0)), size_t(0));
    }

    void withoutATemporaryFileAllStaysInMemory() {
        const char* previous = std::getenv("TMPDIR");
        const std::string kept = previous ? previous : "";
        qputenv("TMPDIR", "/nonexistent/jointscope-test");
        const size_t count = 3 * kBlock + 1;
        SpillVector<Record> values(1);
        for (size_t i = 0; i < count; ++i)
            values.push_back(recordAt(i));
        if (previous)
            qputenv("TMPDIR", kept.c_str());
        else
            qunsetenv("TMPDIR");
        QCOMPARE(values.spilledValues(), size_t(0));
        QCOMPARE(firstDifference(values, count), count);
    }
};

QTEST_GUILESS_MAIN(TestSpillVector)
#include "tst_spillvector.moc"
