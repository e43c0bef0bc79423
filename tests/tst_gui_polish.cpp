// The smaller items of issue 15, driven through the window on the offscreen platform: the Sharding dock
// forgets the plan of a graph no longer shown; the Pareto chart is big enough for its axis titles; node
// badges never overlap; the Help menu lists every published shortcut; a pin the solve contradicts is flagged
// in the Partition summary and on the canvas. Settings live in a temporary directory, never the user's.
#include "guitestutil.h"
#include "testutil.h"

#include "CanvasFeature.h"
#include "HelpMenu.h"
#include "MainWindow.h"
#include "PartitionDocument.h"
#include "PartitionFeature.h"
#include "PartitionPanel.h"
#include "ReadingIndicator.h"
#include "RuntimeFeature.h"
#include "ShardingDocument.h"
#include "ShardingFeature.h"
#include "ShardingPanel.h"
#include "canvas/GraphScene.h"
#include "canvas/GraphView.h"
#include "canvas/NodeItem.h"
#include "models/PartitionModel.h"
#include "models/ShardingModel.h"

#include <QAction>
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QClipboard>
#include <QDialog>
#include <QDockWidget>
#include <QGraphicsTextItem>
#include <QLabel>
#include <QMainWindow>
#include <QMenuBar>
#include <QProgressBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QToolButton>
#include <QValueAxis>

using namespace jointscope;
using namespace jointscope::test;
using jointscope::gui::MainWindow;

namespace {

void openAndWait(MainWindow& window, const QString& path) {
    QVERIFY(window.openFile(path));
    QTRY_VERIFY_WITH_TIMEOUT(window.scene()->graph() && window.scene()->hasLayout() && !window.layoutBusy(),
                             60000);
    QTRY_VERIFY_WITH_TIMEOUT(!window.feature<gui::PartitionFeature>()->document()->busy(), 60000);
}

QString graphPath(const char* model) {
    return q(sharedPath(std::string("graphs/torch-1.13/") + model + "/joint.txt"));
}

// No two badges of `item` overlap, and each lies inside what the item says it paints.
void checkBadges(const views::NodeItem& item) {
    const std::vector<views::NodeBadge>& badges = item.badges();
    for (size_t i = 0; i < badges.size(); ++i) {
        QVERIFY2(item.boundingRect().contains(badges[i].rect), qPrintable(badges[i].text));
        for (size_t j = i + 1; j < badges.size(); ++j)
            QVERIFY2(!badges[i].rect.intersects(badges[j].rect),
                     qPrintable(badges[i].text + QStringLiteral(" / ") + badges[j].text));
    }
}

// With JOINTSCOPE_TEST_SHOTS=DIR, saves a picture of `widget` there (for a person to look at).
void shoot(QWidget* widget, const char* name) {
    const QString dir = qEnvironmentVariable("JOINTSCOPE_TEST_SHOTS");
    if (!dir.isEmpty())
        widget->grab().save(dir + QLatin1Char('/') + QLatin1String(name) + QStringLiteral(".png"));
}

QAction* helpAction(MainWindow& window, const QString& text) {
    for (QAction* top : window.menuBar()->actions())
        if (top->menu() && top->menu()->title().remove(QLatin1Char('&')) == QStringLiteral("Help"))
            for (QAction* a : top->menu()->actions())
                if (a->text().remove(QLatin1Char('&')).startsWith(text))
                    return a;
    return nullptr;
}

} // namespace

class TestPolish : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::isolateUserDirs(dir_, QStringLiteral("tst_gui_polish")); }

    // Issue 15: "the Sharding dock keeps the previous graph's plan after opening another".
    void shardingDockForgetsThePreviousGraphsPlan() {
#ifndef JOINTSCOPE_HAVE_CBC
        QSKIP("the sharding solver needs COIN-OR CBC");
#endif
        MainWindow window(false);
        window.show();
        openAndWait(window, graphPath("mlp"));
        gui::ShardingDocument* doc = window.feature<gui::ShardingFeature>()->document();
        gui::ShardingPanel* panel = window.feature<gui::ShardingFeature>()->panel();
        auto* status = panel->findChild<QLabel*>(QStringLiteral("shardingStatus"));
        QVERIFY(status);
        QVERIFY(
            window.feature<gui::ShardingFeature>()->solve(QStringLiteral("2x2"), QStringLiteral("dp,tp")));
        QTRY_VERIFY_WITH_TIMEOUT(!doc->busy() && doc->result(), 60000);
        QVERIFY(panel->model()->rowCount() > 0);
        QVERIFY2(status->text().contains(QStringLiteral("mesh 2x2")), qPrintable(status->text()));

        openAndWait(window, graphPath("convnet"));
        QVERIFY(!doc->result());
        QCOMPARE(panel->model()->rowCount(), 0);
        // The summary of the mlp's plan (its cost, mesh and baselines) is gone from the dock.
        QVERIFY2(!status->text().contains(QStringLiteral("mesh 2x2")), qPrintable(status->text()));
        QVERIFY2(!status->text().contains(QStringLiteral("replicate")), qPrintable(status->text()));
        QVERIFY2(!status->text().contains(QStringLiteral("Cancelled")), qPrintable(status->text()));
    }

    // Issue 15: "the Pareto chart is ~350x110 px with a clipped axis label".
    void paretoChartFitsItsAxisTitles() {
        MainWindow window(false);
        window.show();
        openAndWait(window, graphPath("gpt_block2"));
        QDockWidget* dock = window.feature<gui::PartitionFeature>()->dock();
        QVERIFY(dock->isVisible());
        auto* chartView = dock->findChild<QChartView*>();
        QVERIFY(chartView);
        auto* tabs = dock->findChild<QTabWidget*>();
        tabs->setCurrentWidget(chartView);
        QChart* chart = chartView->chart();
        QTRY_VERIFY_WITH_TIMEOUT(chart->title().contains(QStringLiteral("budgets")), 120000);
        QTest::qWait(100); // the chart lays itself out on the next events
        QVERIFY2(chartView->width() >= 300 && chartView->height() >= 260,
                 qPrintable(QStringLiteral("%1x%2").arg(chartView->width()).arg(chartView->height())));
        // Each axis title is drawn whole (Qt elides one that does not fit) and inside the chart; the plot
        // area keeps a usable size beside them.
        const QRectF inside = QRectF(QPointF(0, 0), chart->size());
        QStringList titles;
        for (QAbstractAxis* axis : chart->axes())
            titles << axis->titleText();
        QCOMPARE(titles.size(), 2);
        int found = 0;
        for (QGraphicsItem* item : chartView->scene()->items()) {
            auto* text = dynamic_cast<QGraphicsTextItem*>(item);
            if (!text || !titles.contains(text->toPlainText()))
                continue;
            ++found;
            const QRectF rect = chart->mapRectFromScene(text->sceneBoundingRect());
            QVERIFY2(inside.adjusted(-1, -1, 1, 1).contains(rect), qPrintable(text->toPlainText()));
        }
        QVERIFY2(found == 2, qPrintable(titles.join(QStringLiteral(", "))));
        QVERIFY(chart->plotArea().height() >= 120 && chart->plotArea().width() >= 180);
        shoot(dock, "pareto-dock");
        shoot(&window, "pareto-window");
    }

    // Issue 15: "badges overlap". Every badge at once on a narrow box, then every node of a solved graph.
    void badgesNeverOverlap() {
        views::NodeItem item(0, views::NodeRole::Forward, QStringLiteral("addmm"),
                             QStringLiteral("aten.addmm"), QSizeF(60, 36), false);
        views::NodePartitionMark mark;
        mark.mark = views::PartitionMark::Saved;
        mark.bytes = 12u << 20;
        mark.pin = views::PinMark::MustRecompute;
        mark.pinOverridden = true;
        mark.banned = true;
        item.setPartitionMark(mark);
        item.setMismatch(true);
        QCOMPARE(int(item.badges().size()), 5);
        QStringList order;
        for (const views::NodeBadge& badge : item.badges())
            order << badge.text;
        QCOMPARE(order.first(), QStringLiteral("pin: recompute"));
        QVERIFY(order.last().contains(QStringLiteral("≠")));
        checkBadges(item);
        // Fewer badges: the row shrinks back.
        item.setMismatch(false);
        item.setPartitionMark({});
        QVERIFY(item.badges().empty());

        MainWindow window(false);
        window.show();
        openAndWait(window, graphPath("gpt_block2"));
        gui::PartitionDocument* doc = window.feature<gui::PartitionFeature>()->document();
        QVERIFY(doc->result());
        // A pinned saved node: pin and decision badges side by side.
        const auto p = doc->result()->partition;
        const std::string saved = p->graph.node(p->saved.back()).name;
        doc->setPolicy(saved, partition::Policy::MustSave);
        QTRY_VERIFY_WITH_TIMEOUT(!doc->busy() && doc->result()->edits.count(saved), 60000);
        int withBadges = 0;
        const Graph* g = window.scene()->graph();
        for (NodeId id = 0; id < g->size(); ++id)
            if (const views::NodeItem* node = window.scene()->nodeItem(id)) {
                withBadges += node->badges().size() > 1;
                checkBadges(*node);
            }
        QVERIFY(withBadges >= 1);
        if (!qEnvironmentVariable("JOINTSCOPE_TEST_SHOTS").isEmpty()) {
            auto* view = window.findChild<views::GraphView*>();
            view->setZoom(1.6);
            view->centerOn(window.scene()->nodeItem(*g->find(saved)));
            QTest::qWait(50);
            shoot(view, "badges");
        }
        doc->waitForIdle();
    }

    // Issue 15: "the Help menu has only About".
    void helpMenuGuideShortcutsAndReport() {
        MainWindow window(false);
        window.show();
        // The shortcuts list names every published action that has a shortcut, with its keys.
        QList<QAction*> published;
        const auto& canvas = window.canvasFeature()->actions();
        const auto& partition = window.feature<gui::PartitionFeature>()->actions();
        const auto& runtime = window.feature<gui::RuntimeFeature>()->actions();
        published << canvas.fit << canvas.find << canvas.up << canvas.collapse << canvas.minimap
                  << canvas.searchResults << canvas.walk << canvas.exportView << partition.mustSave
                  << partition.mustRecompute << partition.clearPin << partition.repartition
                  << partition.exports << runtime.validate << runtime.profile
                  << window.feature<gui::ShardingFeature>()->actions().overlay;
        std::function<void(QMenu*)> collect = [&](QMenu* menu) {
            for (QAction* a : menu->actions())
                a->menu() ? collect(a->menu()) : void(published << a);
        };
        for (QAction* top : window.menuBar()->actions())
            if (top->menu())
                collect(top->menu());
        const QString html = gui::shortcutsHtml(&window);
        int withShortcut = 0;
        for (QAction* a : published) {
            if (!a || a->shortcut().isEmpty())
                continue;
            ++withShortcut;
            const QString keys = a->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped();
            const QString name = a->text().remove(QLatin1Char('&')).toHtmlEscaped();
            QVERIFY2(html.contains(QStringLiteral("<td>%1</td><td><b>%2</b></td>").arg(name, keys)),
                     qPrintable(name + QStringLiteral(" ") + keys));
        }
        QVERIFY(withShortcut >= 10); // Ctrl+O, Ctrl+F, Space, F5, S, R, Delete, Ctrl+Z, Alt+arrows, ...

        QAction* shortcuts = helpAction(window, QStringLiteral("Keyboard Shortcuts"));
        QVERIFY(shortcuts);
        shortcuts->trigger();
        auto* dialog = window.findChild<QDialog*>(QStringLiteral("shortcutsDialog"));
        QVERIFY(dialog && dialog->isVisible());
        QVERIFY(dialog->findChild<QTextBrowser*>()->toPlainText().contains(QStringLiteral("Must Save")));
        shoot(dialog, "help-shortcuts");

        // The user guide: docs/user-guide.md rendered as Markdown (headings become text, not "## ...").
        QAction* guide = helpAction(window, QStringLiteral("User Guide"));
        QVERIFY(guide);
        QCOMPARE(guide->shortcut(), QKeySequence(QKeySequence::HelpContents));
        guide->trigger();
        auto* guideDialog = window.findChild<QDialog*>(QStringLiteral("userGuideDialog"));
        QVERIFY(guideDialog && guideDialog->isVisible());
        const QString guideText = guideDialog->findChild<QTextBrowser*>()->toPlainText();
        const QString source = q(readFile(sourcePath("docs/user-guide.md")));
        QVERIFY(source.contains(QStringLiteral("## Opening graphs")));
        QVERIFY(guideText.contains(QStringLiteral("Opening graphs")));
        QVERIFY(!guideText.contains(QStringLiteral("## Opening graphs")));
        shoot(guideDialog, "help-guide");

        // Report a problem: the version and build facts on the clipboard.
        QAction* report = helpAction(window, QStringLiteral("Report a Problem"));
        QVERIFY(report);
        QApplication::setApplicationVersion(QStringLiteral("9.8.7-test"));
        report->trigger();
        const QString clip = QApplication::clipboard()->text();
        QVERIFY2(clip.contains(QStringLiteral("jointscope: 9.8.7-test")), qPrintable(clip));
        QVERIFY2(clip.contains(QStringLiteral("Qt: ") + QString::fromLatin1(qVersion())), qPrintable(clip));
        QVERIFY(helpAction(window, QStringLiteral("About")));
    }

    // Issue 15: "a pin contradicted by the solve gets no warning". torch's choose_saved_values_set returns
    // only the inputs at activation_memory_budget 0, before any MUST_SAVE tag is looked at: a forward node
    // torch saves at budget 1 (reference.json records torch's own saved set) is then recomputed whatever
    // its pin says.
    void pinContradictedBySolveIsFlagged() {
        MainWindow window(false);
        window.show();
        openAndWait(window, graphPath("mlp"));
        gui::PartitionDocument* doc = window.feature<gui::PartitionFeature>()->document();
        const auto torchSaved = doc->torchSaved();
        QVERIFY(torchSaved);
        std::string pinned;
        for (const std::string& name : *torchSaved)
            if (name.rfind("primals_", 0) != 0 && pinned.empty())
                pinned = name;
        QVERIFY(!pinned.empty());
        const views::PartitionModel* model = window.feature<gui::PartitionFeature>()->panel()->model();
        const views::NodeItem* item = window.scene()->nodeItem(*window.scene()->graph()->find(pinned));

        // Pinned MUST_SAVE at budget 1: saved, as asked; nothing to warn of.
        QVERIFY(window.selectNodeByName(q(pinned)));
        window.feature<gui::PartitionFeature>()->actions().mustSave->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(!doc->busy() && doc->result() && doc->result()->edits.count(pinned), 60000);
        QVERIFY(model->summaryValue(QStringLiteral("Saved")).size() > 0);
        QVERIFY(model->summaryValue(QStringLiteral("Pins overridden")).isEmpty());
        QVERIFY(!item->partitionMark().pinOverridden);

        // Budget 0: recomputed against its pin. The summary warns, names it, and the canvas marks it.
        doc->setBudget(0.0);
        QTRY_VERIFY_WITH_TIMEOUT(!doc->busy() && doc->result()->options.memoryBudget == 0.0, 60000);
        QVERIFY(doc->lastError().isEmpty());
        QTRY_VERIFY(
            model->summaryValue(QStringLiteral("Pins overridden")).contains(QStringLiteral("1 node")));
        QCOMPARE(model->sectionNodes(QStringLiteral("Pins the solve overrode")), QStringList{q(pinned)});
        QCOMPARE(item->partitionMark().mark, views::PartitionMark::Recomputed);
        QVERIFY(item->partitionMark().pinOverridden);
        QStringList badges;
        for (const views::NodeBadge& badge : item->badges())
            badges << badge.text;
        QVERIFY2(badges.size() == 3 && badges[1].contains(QStringLiteral("pin overridden")),
                 qPrintable(badges.join(QStringLiteral(", "))));
        checkBadges(*item);
        if (!qEnvironmentVariable("JOINTSCOPE_TEST_SHOTS").isEmpty()) {
            auto* view = window.findChild<views::GraphView*>();
            view->setZoom(1.6);
            view->centerOn(item);
            QTest::qWait(50);
            shoot(&window, "pin-overridden");
        }

        // Undo the budget: the pin holds again and the warning goes.
        doc->undoStack()->undo();
        QTRY_VERIFY_WITH_TIMEOUT(!doc->busy() && doc->result()->options.memoryBudget == 1.0, 60000);
        QTRY_VERIFY(model->summaryValue(QStringLiteral("Pins overridden")).isEmpty());
        QVERIFY(!item->partitionMark().pinOverridden);
        doc->waitForIdle();
    }

    // The status bar's reading indicator: hidden and deaf to Esc until shown; the bar shows the step and
    // its fraction, a step of unknown length runs to and fro; Esc and the button ask to cancel.
    void readingIndicatorShowsTheStepAndCancels() {
        QMainWindow window;
        gui::ReadingIndicator reading(window.statusBar(), &window);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto* bar = window.statusBar()->findChild<QProgressBar*>();
        auto* button = window.statusBar()->findChild<QToolButton*>();
        QVERIFY(bar && button);
        QVERIFY(!bar->isVisible() && !button->isVisible());
        QSignalSpy cancelled(&reading, &gui::ReadingIndicator::cancelRequested);
        QTest::keyClick(&window, Qt::Key_Escape);
        QCOMPARE(cancelled.count(), 0);

        reading.setShown(true);
        QVERIFY(bar->isVisible() && button->isVisible());
        reading.setProgress(0.305, QStringLiteral("indexing 312 of 1,024 MB · 3,120 graphs"));
        QCOMPARE(bar->maximum(), 1000);
        QCOMPARE(bar->value(), 305);
        QCOMPARE(bar->format(), QStringLiteral("indexing 312 of 1,024 MB · 3,120 graphs"));
        reading.setStep(QStringLiteral("reading session"));
        QCOMPARE(bar->maximum(), 0);
        QCOMPARE(bar->format(), QStringLiteral("reading session"));
        QTest::keyClick(&window, Qt::Key_Escape);
        QCOMPARE(cancelled.count(), 1);
        button->click();
        QCOMPARE(cancelled.count(), 2);

        reading.setShown(false);
        QVERIFY(!bar->isVisible());
        QTest::keyClick(&window, Qt::Key_Escape);
        QCOMPARE(cancelled.count(), 2);
    }

private:
    QTemporaryDir dir_;
};

QTEST_MAIN(TestPolish)
#include "tst_gui_polish.moc"
