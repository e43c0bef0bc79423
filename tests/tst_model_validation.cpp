// ValidationModel fed with real `jointscope-cli validate --json` output on every torch 1.13 graph; the rows
// are checked against the joint graph's own `return [...]` line (order and producer names), counted from the
// text.
#include "testutil.h"

#include "io/GraphFile.h"
#include "models/ValidationModel.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSortFilterProxyModel>

#include <regex>

using namespace jointscope;
using namespace jointscope::views;
using namespace jointscope::test;

namespace {

QStringList torch113Graphs() {
    QStringList files;
    const QDir dir(QString::fromStdString(sharedPath("graphs/torch-1.13")));
    for (const QString& name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
        if (QFileInfo::exists(dir.filePath(name + "/joint.txt")))
            files << dir.filePath(name + "/joint.txt");
    return files;
}

// The names in `return pytree.tree_unflatten([a, b, None, ...], self._out_spec)`.
QStringList returnedNames(const QString& file) {
    static const std::regex ret(R"(return pytree\.tree_unflatten\(\[(.*)\], self\._out_spec\))");
    for (const std::string& line : splitLines(readFile(file.toStdString()))) {
        std::smatch m;
        if (std::regex_search(line, m, ret)) {
            QStringList names;
            for (const QString& name : QString::fromStdString(m[1]).split(QLatin1Char(',')))
                names << name.trimmed();
            return names;
        }
    }
    return {};
}

QJsonObject validateJson(const QString& file) {
    const Run run = runCli({"validate", file, "--json"});
    if (run.exitCode != 0 && run.exitCode != 1)
        qFatal("validate %s exited %d: %s", qPrintable(file), run.exitCode, run.err.c_str());
    return QJsonDocument::fromJson(QByteArray::fromStdString(run.out)).object();
}

} // namespace

class TestValidationModel : public QObject {
    Q_OBJECT
private slots:
    void everyTorch113Graph_data() {
        QTest::addColumn<QString>("file");
        const QStringList files = torch113Graphs();
        QVERIFY(files.size() >= 3);
        for (const QString& file : files)
            QTest::newRow(qPrintable(QFileInfo(file).dir().dirName())) << file;
    }

    void everyTorch113Graph() {
        QFETCH(QString, file);
        const QStringList returned = returnedNames(file);
        QVERIFY(!returned.isEmpty());
        const Graph graph = loadGraphAt(file.toStdString());

        ValidationModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(model.setResult(validateJson(file), &graph));
        QCOMPARE(model.rowCount(), int(returned.size()));
        QVERIFY2(model.ok(), qPrintable(model.summary()));
        QVERIFY(model.firstMismatch().isEmpty());
        QVERIFY(model.mismatchedNodes().empty());
        QVERIFY(model.decisionSource().contains(QStringLiteral("torch_min_cut")));
        QVERIFY(model.summary().startsWith(QStringLiteral("OK: ")));
        int agreeing = 0;
        for (int r = 0; r < model.rowCount(); ++r) {
            const ValidationModel::Row& row = model.rows()[size_t(r)];
            if (returned[r] == QStringLiteral("None")) {
                QCOMPARE(row.status, QStringLiteral("none"));
                continue;
            }
            // Row r is the r-th returned value, named after its producer, which the model locates in the
            // graph.
            QCOMPARE(row.nodeName, returned[r]);
            QVERIFY(row.node < graph.size());
            QCOMPARE(QString::fromStdString(graph.node(row.node).name), returned[r]);
            QVERIFY2(row.status == "bitwise" || row.status == "close",
                     qPrintable(row.label + ": " + row.status));
            QCOMPARE(model.data(model.index(r, ValidationModel::StatusColumn), ValidationModel::MismatchRole)
                         .toBool(),
                     false);
            ++agreeing;
        }
        QCOMPARE(model.count("bitwise") + model.count("close"), agreeing);
        QCOMPARE(model.count("none"), int(returned.count(QStringLiteral("None"))));
    }

    // A gradient that differs, as the CLI reports it (status, errors, first_mismatch), marks its producer.
    void aDifferingGradientIsMarked() {
        const QString file = QString::fromStdString(sharedPath("graphs/torch-1.13/mlp/joint.txt"));
        QJsonObject json = validateJson(file);
        QJsonArray outputs = json.value("outputs").toArray();
        QVERIFY(outputs.size() == 6);
        QJsonObject bad = outputs[2].toObject(); // grad of primals_2 (view_1)
        bad["status"] = "differs";
        bad["max_abs_error"] = 0.5;
        bad["max_rel_error"] = 0.25;
        outputs[2] = bad;
        json["outputs"] = outputs;
        json["ok"] = false;
        json["first_mismatch"] = bad.value("label");

        const Graph graph = loadGraphAt(file.toStdString());
        ValidationModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(model.setResult(json, &graph));
        QVERIFY(!model.ok());
        QCOMPARE(model.firstMismatch(), QStringLiteral("grad of primals_2 (view_1)"));
        const std::vector<NodeId> marked = model.mismatchedNodes();
        QCOMPARE(marked.size(), size_t(1));
        QCOMPARE(graph.node(marked[0]).name, std::string("view_1"));
        QCOMPARE(model.index(2, ValidationModel::StatusColumn).data().toString(),
                 QStringLiteral("differs (first)"));
        QCOMPARE(model.index(2, ValidationModel::MaxAbsColumn).data().toString(), QStringLiteral("0.5"));
        QCOMPARE(model.index(2, ValidationModel::MaxRelColumn).data(ValidationModel::SortRole).toDouble(),
                 0.25);
        QVERIFY(model.summary().startsWith(QStringLiteral("MISMATCH: 1 of 6 differ")));

        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(ValidationModel::SortRole);
        proxy.sort(ValidationModel::MaxAbsColumn, Qt::DescendingOrder);
        QCOMPARE(proxy.index(0, ValidationModel::OutputColumn).data().toString(),
                 QStringLiteral("grad of primals_2 (view_1)"));
    }

    void emptyInput() {
        ValidationModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(!model.setResult(QJsonObject{}, nullptr));
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.summary(), QStringLiteral("no validation"));
    }
};

QTEST_GUILESS_MAIN(TestValidationModel)
#include "tst_model_validation.moc"
