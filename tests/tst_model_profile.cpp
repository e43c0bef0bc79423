// ProfileModel fed with real `jointscope-cli profile --json` output on torch 1.13 graphs; expected values are
// counted from the FX text (call_function and view lines) and from the JSON itself, never from the model.
#include "testutil.h"

#include "io/GraphFile.h"
#include "models/ProfileModel.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QSortFilterProxyModel>
#include <QTemporaryDir>

#include <optional>
#include <regex>
#include <set>

using namespace jointscope;
using namespace jointscope::views;
using namespace jointscope::test;

namespace {

const std::string kGpt = "graphs/torch-1.13/gpt_block2/joint.txt";

QJsonObject profileJson(const std::string& file, const QString& db) {
    const Run run = runCli({"profile", QString::fromStdString(sharedPath(file)), "--json", "--reps", "1",
                            "--warmup", "0", "--db", db});
    if (run.exitCode != 0)
        qFatal("profile failed: %s", run.err.c_str());
    return QJsonDocument::fromJson(QByteArray::fromStdString(run.out)).object();
}

// Names of call_function nodes (`x = torch.ops...(` and `x = y[i]`) and of aten.view calls, from the file's
// text.
struct FxNames {
    std::set<std::string> calls;
    std::set<std::string> views;
};

FxNames fxNames(const std::string& file) {
    FxNames names;
    static const std::regex call(R"(^\s+(\w+) = (torch\.ops\.|\w+\[\d+\]))");
    static const std::regex view(R"(^\s+(\w+) = torch\.ops\.aten\.view\.default\()");
    for (const std::string& line : splitLines(readFile(sharedPath(file)))) {
        std::smatch m;
        if (std::regex_search(line, m, call))
            names.calls.insert(m[1]);
        if (std::regex_search(line, m, view))
            names.views.insert(m[1]);
    }
    return names;
}

} // namespace

class TestProfileModel : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        Expected<GraphFile> file = GraphFile::open(sharedPath(kGpt));
        QVERIFY(file);
        Expected<Graph> graph = file->load(0);
        QVERIFY(graph);
        graph_ = graph.take();
        db_ = dir_.filePath(QStringLiteral("profiles.sqlite"));
        first_ = profileJson(kGpt, db_);
        second_ = profileJson(kGpt, db_); // same DB: every signature comes from the cache now
    }

    void everyCallFunctionHasATimeOrAReason() {
        const FxNames fx = fxNames(kGpt);
        QCOMPARE(fx.calls.size(), size_t(284)); // gpt_block2: 254 aten calls + 30 getitem
        ProfileModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(model.setResult(first_, &graph_));
        QCOMPARE(model.rowCount(), int(graph_.size()));
        QCOMPARE(model.columnCount(), int(ProfileModel::ColumnCount));
        size_t calls = 0;
        for (int r = 0; r < model.rowCount(); ++r) {
            const ProfileModel::Row& row = model.rows()[size_t(r)];
            // Names map back onto the graph's nodes.
            QVERIFY(row.node < graph_.size());
            QCOMPARE(QString::fromStdString(graph_.node(row.node).name), row.name);
            const QString status = model.data(model.index(r, ProfileModel::StatusColumn)).toString();
            if (fx.views.count(row.name.toStdString()))
                QVERIFY2(status.startsWith("skipped: "), qPrintable(row.name + ": " + status));
            if (!fx.calls.count(row.name.toStdString()))
                continue;
            ++calls;
            QVERIFY2(row.timeUs.has_value() != !row.skipped.isEmpty() || !row.error.isEmpty(),
                     qPrintable(row.name));
            QVERIFY2(status == "measured" || status.startsWith("skipped: "),
                     qPrintable(row.name + ": " + status));
        }
        QCOMPARE(calls, fx.calls.size());
    }

    void totalsAgreeWithTheJson() {
        ProfileModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(model.setResult(first_, &graph_));
        double sum = 0;
        int timed = 0, skipped = 0;
        for (const QJsonValue& v : first_.value("nodes").toArray()) {
            const QJsonObject n = v.toObject();
            if (n.value("time_us").isDouble()) {
                sum += n.value("time_us").toDouble();
                ++timed;
            }
            skipped += n.contains("skipped");
        }
        QVERIFY(timed > 0);
        QCOMPARE(model.totals().timed, timed);
        QCOMPARE(model.totals().skipped, skipped);
        QCOMPARE(model.totals().measured, timed); // a fresh DB: nothing cached
        QCOMPARE(model.totals().cached, 0);
        QVERIFY(qAbs(model.totals().sumUs - sum) < 1e-6 * sum);
        QVERIFY(qAbs(model.totals().sumUs - first_.value("sum_us").toDouble()) < 1e-6 * sum);
        QCOMPARE(first_.value("cached").toInt(), 0);

        // The second run took every signature from the DB.
        ProfileModel again;
        QAbstractItemModelTester againTester(&again, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(again.setResult(second_, &graph_));
        QCOMPARE(again.totals().timed, timed);
        QCOMPARE(again.totals().cached, timed);
        QCOMPARE(again.totals().measured, 0);
        QVERIFY(again.summary().contains(QStringLiteral("%1 cached").arg(timed)));
    }

    void sortsByTimeWithUnmeasuredLast() {
        ProfileModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(model.setResult(first_, &graph_));
        double slowest = 0;
        QString slowestName;
        for (const QJsonValue& v : first_.value("nodes").toArray())
            if (v.toObject().value("time_us").toDouble() > slowest) {
                slowest = v.toObject().value("time_us").toDouble();
                slowestName = v.toObject().value("name").toString();
            }
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(ProfileModel::SortRole);
        proxy.sort(ProfileModel::TimeColumn, Qt::DescendingOrder);
        QCOMPARE(proxy.index(0, ProfileModel::NameColumn).data().toString(), slowestName);
        QCOMPARE(proxy.index(proxy.rowCount() - 1, ProfileModel::TimeColumn).data().toString(), QString());
        // Shares of the timed rows add up to 100 %.
        double share = 0;
        for (int r = 0; r < model.rowCount(); ++r)
            share += std::max(
                0.0, model.index(r, ProfileModel::ShareColumn).data(ProfileModel::SortRole).toDouble());
        QVERIFY(qAbs(share - 1.0) < 1e-9);
    }

    void nodeTimesForTheHeatMap() {
        ProfileModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(model.setResult(first_, &graph_));
        const std::vector<double> times = model.nodeTimes(graph_.size());
        QCOMPARE(times.size(), graph_.size());
        const std::optional<NodeId> placeholder = graph_.find("primals_1");
        QVERIFY(placeholder);
        QVERIFY(times[*placeholder] < 0);
        int positive = 0;
        for (double t : times)
            positive += t > 0;
        QCOMPARE(positive, model.totals().timed);
    }

    void badInputLeavesItEmpty() {
        ProfileModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(!model.setResult(QJsonObject{{"device", "cpu"}}, &graph_));
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(model.setResult(first_, nullptr)); // no graph: rows without node ids
        QCOMPARE(model.rows().front().node, kNoNode);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

private:
    QTemporaryDir dir_;
    QString db_;
    Graph graph_;
    QJsonObject first_;
    QJsonObject second_;
};

QTEST_GUILESS_MAIN(TestProfileModel)
#include "tst_model_profile.moc"
