// File › Export View (views/canvas/SceneExport): the SVG is well-formed XML with one text element per visible
// node name, hidden nodes of a collapsed view have none; the PNG reads back at the scene's size.
#include "canvas/GraphScene.h"
#include "canvas/NodeItem.h"
#include "canvas/SceneExport.h"
#include "layout/Grouping.h"
#include "layout/LayoutRunner.h"
#include "testutil.h"

#include <QApplication>
#include <QImage>
#include <QTemporaryDir>
#include <QXmlStreamReader>

#include <map>

using namespace jointscope;
using namespace jointscope::views;
using jointscope::test::loadGraphAt;
using jointscope::test::sharedPath;

namespace {

// Bold text element contents -> how often, or an error when the XML is not well-formed.
std::map<QString, int> svgTexts(const QString& path, QString* error) {
    QFile file(path);
    std::map<QString, int> texts;
    if (!file.open(QIODevice::ReadOnly)) {
        *error = file.errorString();
        return texts;
    }
    QXmlStreamReader xml(&file);
    while (!xml.atEnd()) {
        xml.readNext();
        // Titles are bold; a subtitle may repeat a name (a tuple-valued op's label is its op).
        if (xml.isStartElement() && xml.name() == QLatin1String("text") &&
            xml.attributes().value(QLatin1String("font-weight")).toInt() >= 600)
            ++texts[xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed()];
    }
    if (xml.hasError())
        *error = xml.errorString();
    return texts;
}

} // namespace

class TestViewExport : public QObject {
    Q_OBJECT
private slots:
    void svgOfFullView() {
        const Graph graph = loadGraphAt(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt"));
        GraphScene scene;
        scene.setGraph(&graph);
        layout::LayoutOptions options;
        options.algorithm = layout::LayoutAlgorithm::Layered;
        options.sizes = scene.measureNodes();
        const auto result = layout::computeLayout(graph, options);
        QVERIFY(result);
        scene.applyLayout(*result);
        QTemporaryDir dir;
        dir.setAutoRemove(qEnvironmentVariableIsEmpty("JS_KEEP_EXPORT"));
        const QString path = dir.filePath(QStringLiteral("view.svg"));
        const Expected<Done> svg = exportSceneSvg(scene, path, QStringLiteral("gpt_block2"));
        QVERIFY2(svg, svg ? "" : svg.error().format().c_str());
        QString error;
        const auto texts = svgTexts(path, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        for (const Node& node : graph.nodes()) {
            const auto it = texts.find(QString::fromStdString(node.name));
            QVERIFY2(it != texts.end() && it->second == 1,
                     qPrintable(QStringLiteral("%1 drawn %2 times")
                                    .arg(QString::fromStdString(node.name))
                                    .arg(it == texts.end() ? 0 : it->second)));
        }

        const QString png = dir.filePath(QStringLiteral("view.png"));
        const Expected<Done> written = exportScenePng(scene, png, 1.0);
        QVERIFY2(written, written ? "" : written.error().format().c_str());
        const QImage image(png);
        QCOMPARE(image.size(), scene.sceneRect().size().toSize());
        const Expected<Done> refused =
            exportSceneSvg(scene, QStringLiteral("/nonexistent-dir/x.svg"), QString());
        QVERIFY(!refused);
        QVERIFY(refused.error().format().starts_with("/nonexistent-dir/x.svg"));
    }

    // A collapsed view exports its visible nodes and group titles; nodes inside collapsed groups are absent.
    void svgOfCollapsedView() {
        const auto graph =
            std::make_shared<const Graph>(loadGraphAt(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt")));
        layout::LayoutRunner runner;
        std::shared_ptr<const layout::LayoutResult> result;
        connect(&runner, &layout::LayoutRunner::finished, this,
                [&](quint64, std::shared_ptr<const layout::LayoutResult> r) { result = std::move(r); });
        layout::LayoutOptions options;
        options.algorithm = layout::LayoutAlgorithm::Layered;
        runner.startCollapsed(
            graph, nullptr, {}, 40, [](const Node& n) { return GraphScene::measureNode(n); }, options);
        runner.waitForDone();
        QVERIFY(result && result->view);
        GraphScene scene;
        scene.setGraph(graph.get());
        scene.applyCollapsedLayout(*result);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("collapsed.svg"));
        QVERIFY(exportSceneSvg(scene, path, QString()));
        QString error;
        const auto texts = svgTexts(path, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        size_t visible = 0, hidden = 0;
        for (NodeId id = 0; id < graph->size(); ++id) {
            const auto it = texts.find(QString::fromStdString(graph->node(id).name));
            const int count = it == texts.end() ? 0 : it->second;
            if (scene.nodeItem(id)) {
                QCOMPARE(count, 1);
                ++visible;
            } else {
                QCOMPARE(count, 0);
                ++hidden;
            }
        }
        QVERIFY(hidden > 0);
        QCOMPARE(visible + hidden, graph->size());
    }
};

QTEST_MAIN(TestViewExport)
#include "tst_view_export.moc"
