// The main window driven like a user does, on the offscreen platform: shortcuts, the Alt+arrow walk along the
// edges of a real joint graph, the canvas context menu, and the offer to restore the autosaved session after
// an unclean exit. Expected nodes come from reading torch-1.13/mlp/joint.txt by hand. Settings and the
// autosave live in a temporary directory, never the user's.
#include "guitestutil.h"
#include "testutil.h"

#include "CanvasFeature.h"
#include "DiffFeature.h"
#include "ExportFolder.h"
#include "MainWindow.h"
#include "PartitionDocument.h"
#include "PartitionFeature.h"
#include "RuntimeFeature.h"
#include "ShardingDocument.h"
#include "ShardingFeature.h"
#include "canvas/GraphScene.h"
#include "canvas/GraphView.h"
#include "canvas/NodeItem.h"
#include "graph/GraphStats.h"
#include "models/GraphListModel.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeView>

#include <memory>
#include <optional>

using namespace jointscope;
using namespace jointscope::test;
using jointscope::gui::MainWindow;
using jointscope::partition::Policy;

namespace {

QString mlpPath() {
    return q(sharedPath("graphs/torch-1.13/mlp/joint.txt"));
}

views::GraphView* canvasOf(MainWindow& window) {
    return window.findChild<views::GraphView*>();
}

// Shows the window and makes it the active one: window shortcuts only fire in the active window.
void showActive(MainWindow& window) {
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
}

// openFile may parse on a worker thread: waits until the graph is laid out on the canvas and its
// partition is solved.
void openAndWait(MainWindow& window, const QString& path) {
    QVERIFY(window.openFile(path));
    QTRY_VERIFY_WITH_TIMEOUT(window.scene()->graph() && window.scene()->hasLayout() && !window.layoutBusy(),
                             60000);
    QTRY_VERIFY_WITH_TIMEOUT(!window.feature<gui::PartitionFeature>()->document()->busy(), 60000);
}

// A 1400x900 window on screen with a four-graph TORCH_LOGS paste open (its Graphs dock shows).
void showLogOnScreen(MainWindow& window) {
    window.resize(1400, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    openAndWait(window, q(sourcePath("tests/data/logs/aot_graphs_colored.log")));
}

NodeId nodeNamed(const MainWindow& window, const char* name) {
    const Graph* graph = window.scene()->graph();
    const std::optional<NodeId> id = graph ? graph->find(name) : std::nullopt;
    return id ? *id : kNoNode;
}

QString selectedName(const MainWindow& window) {
    const NodeId id = window.scene()->selectedNode();
    const Graph* graph = window.scene()->graph();
    return graph && id < graph->size() ? q(graph->node(id).name) : QString();
}

// Whether `consumer` reads `producer`, from the node's own arguments.
bool reads(const Graph& graph, const char* consumer, const char* producer) {
    const std::optional<NodeId> c = graph.find(consumer);
    const std::optional<NodeId> p = graph.find(producer);
    bool found = false;
    if (c && p)
        graph.node(*c).forEachInput([&](NodeId input) { found = found || input == *p; });
    return found;
}

// Whether every box of the nodes in `right` lies right of every box of the nodes in `left`.
bool columnsApart(MainWindow& window, const std::vector<NodeId>& left, const std::vector<NodeId>& right) {
    double leftEdge = -1e300, rightEdge = 1e300;
    for (NodeId id : left)
        leftEdge = std::max(leftEdge, window.scene()->nodeItem(id)->sceneBoundingRect().right());
    for (NodeId id : right)
        rightEdge = std::min(rightEdge, window.scene()->nodeItem(id)->sceneBoundingRect().left());
    return leftEdge < rightEdge;
}

// The title of the menu-bar menu (or its submenu) that holds `action`; empty when none does.
QString menuHolding(MainWindow& window, const QAction* action) {
    for (QAction* top : window.menuBar()->actions()) {
        QMenu* menu = top->menu();
        if (!menu)
            continue;
        for (QAction* a : menu->actions())
            if (a == action || (a->menu() && a->menu()->actions().contains(action)))
                return menu->title().remove(QLatin1Char('&'));
    }
    return {};
}

// Answers (and records) every modal message box and closes every popup menu while it runs: a box or a
// menu left open would block the test in its nested event loop.
class ModalWatcher {
public:
    std::function<void(QMenu*)> onMenu;
    QStringList boxes;

    ModalWatcher() {
        timer_.setInterval(20);
        QObject::connect(&timer_, &QTimer::timeout, [this] {
            if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
                boxes << box->text();
                if (QAbstractButton* yes = box->button(QMessageBox::Yes))
                    yes->click();
                else
                    box->reject();
            }
            if (auto* menu = qobject_cast<QMenu*>(QApplication::activePopupWidget())) {
                if (onMenu)
                    onMenu(menu);
                menu->close();
            }
        });
        timer_.start();
    }

private:
    QTimer timer_;
};

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    // What of torch's run the partition could not follow is said in the Log dock, where the user reads, not
    // only under the Decision tree's "Log settings": a torch 2.9 checkpointed compile, whose log prints no
    // checkpoint tags.
    void whatIsNotFollowedIsLogged() {
        MainWindow window(false);
        const QString log = QString::fromStdString(
            sourcePath("tests/data/torch2.9-cpu/mlp_checkpointed_dropout_budget05_aot_eager_trace.log"));
        openAndWait(window, log + QStringLiteral("#5"));
        const auto* text = window.findChild<QPlainTextEdit*>();
        QVERIFY(text);
        QTRY_VERIFY2(
            text->toPlainText().contains(QStringLiteral("Not followed: the dynamo graph checkpoints")),
            qPrintable(text->toPlainText()));
        const int before = text->toPlainText().count(QStringLiteral("Not followed"));
        openAndWait(window, log + QStringLiteral("#1")); // the MLP: nothing left out
        QTRY_VERIFY(text->toPlainText().contains(QStringLiteral("Loaded graph 1")));
        window.feature<gui::PartitionFeature>()->document()->waitForIdle();
        QCOMPARE(text->toPlainText().count(QStringLiteral("Not followed")), before);
    }

    // The window places what its features publish, naming none of them: every feature's docks are in the
    // window (a tab or a split where asked) and every menu entry is in its menu.
    void featuresArePlacedThroughTheirInterface() {
        MainWindow window(false);
        QCOMPARE(window.features().size(), size_t(6));
        QMap<gui::MenuId, QString> titles{{gui::MenuId::File, QStringLiteral("&File")},
                                          {gui::MenuId::Edit, QStringLiteral("&Edit")},
                                          {gui::MenuId::View, QStringLiteral("&View")},
                                          {gui::MenuId::Navigate, QStringLiteral("&Navigate")},
                                          {gui::MenuId::Tools, QStringLiteral("&Tools")}};
        QMap<QString, QMenu*> menus;
        for (QAction* a : window.menuBar()->actions())
            if (a->menu())
                menus[a->text()] = a->menu();
        for (const gui::Feature* f : window.features()) {
            for (const gui::DockPlacement& place : f->docks()) {
                QVERIFY(place.dock);
                QCOMPARE(window.dockWidgetArea(place.dock), place.area);
                if (place.join == gui::DockPlacement::Join::Tab)
                    QVERIFY2(!window.tabifiedDockWidgets(place.dock).isEmpty(),
                             qPrintable(place.dock->windowTitle()));
            }
            for (const gui::MenuEntry& e : f->menuEntries()) {
                if (e.menu == gui::MenuId::NodeContext || (!e.action && !e.submenu))
                    continue;
                QMenu* menu = menus.value(titles.value(e.menu));
                QVERIFY(menu);
                QAction* wanted = e.action ? e.action : e.submenu->menuAction();
                QVERIFY2(menu->actions().contains(wanted), qPrintable(wanted->text()));
            }
        }
    }

    void initTestCase() {
        test::isolateUserDirs(dir_, QStringLiteral("tst_gui_mainwindow"));
        QVERIFY(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation).startsWith(dir_.path()));
    }

    void findFitAndRepartitionShortcuts() {
        MainWindow window(false);
        showActive(window);
        openAndWait(window, q(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt")));
        views::GraphView* view = canvasOf(window);
        QVERIFY(view);
        view->setFocus();

        // Ctrl+F: the search field takes the focus; typing searches and selects the first match.
        auto* search = window.findChild<QLineEdit*>(QStringLiteral("searchEdit"));
        QVERIFY(search);
        QVERIFY(!search->isVisible());
        QTest::keyClick(view, Qt::Key_F, Qt::ControlModifier);
        QVERIFY(search->isVisible());
        QTRY_COMPARE(QApplication::focusWidget(), static_cast<QWidget*>(search));
        QTest::keyClicks(search, QStringLiteral("native_layer_norm_backward"));
        QVERIFY(selectedName(window).startsWith(QStringLiteral("native_layer_norm_backward")));
        QTest::keyClick(search, Qt::Key_Escape);
        QVERIFY(!search->isVisible());

        // Space: the whole graph in view, however far it was zoomed in.
        view->setFocus();
        view->setZoom(3.0);
        const auto graphRect = [&] { return view->mapFromScene(window.scene()->sceneRect()).boundingRect(); };
        QVERIFY(!view->viewport()->rect().contains(graphRect()));
        QTest::keyClick(view, Qt::Key_Space);
        QVERIFY(view->zoom() < 1.0); // gpt_block2 has 300 nodes: it fits only shrunk
        // Within a few pixels: scroll bars that go away with the zoom change the viewport after the fit.
        QVERIFY(view->viewport()->rect().adjusted(-8, -8, 8, 8).contains(graphRect()));

        // F5: a new solve of the partition.
        QSignalSpy started(window.feature<gui::PartitionFeature>()->document(),
                           &gui::PartitionDocument::started);
        QSignalSpy finished(window.feature<gui::PartitionFeature>()->document(),
                            &gui::PartitionDocument::finished);
        QTest::keyClick(view, Qt::Key_F5);
        QCOMPARE(started.size(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 60000);
        QVERIFY(window.feature<gui::PartitionFeature>()->document()->result());
    }

    void pinUndoRedoShortcuts() {
        MainWindow window(false);
        showActive(window);
        openAndWait(window, mlpPath());
        views::GraphView* view = canvasOf(window);
        view->setFocus();
        gui::PartitionDocument* doc = window.feature<gui::PartitionFeature>()->document();
        QVERIFY(doc->edits().empty());

        QVERIFY(window.selectNodeByName(QStringLiteral("gelu")));
        QTest::keyClick(view, Qt::Key_S);
        QCOMPARE(doc->edits().size(), size_t(1));
        QCOMPARE(doc->edits().at("gelu"), Policy::MustSave);

        QTest::keyClick(view, Qt::Key_Z, Qt::ControlModifier);
        QVERIFY(doc->edits().empty());
        QTest::keyClick(view, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(doc->edits().size(), size_t(1));
        QCOMPARE(doc->edits().at("gelu"), Policy::MustSave);

        // R replaces the pin; Delete clears it; one undo brings MUST_RECOMPUTE back.
        QTest::keyClick(view, Qt::Key_R);
        QCOMPARE(doc->edits().at("gelu"), Policy::MustRecompute);
        QTest::keyClick(view, Qt::Key_Delete);
        QVERIFY(doc->edits().empty());
        QTest::keyClick(view, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(doc->edits().at("gelu"), Policy::MustRecompute);
        doc->waitForIdle();
    }

    void altArrowsWalkTheEdges() {
        MainWindow window(false);
        showActive(window);
        openAndWait(window, mlpPath());
        const Graph& g = *window.scene()->graph();
        views::GraphView* view = canvasOf(window);
        view->setFocus();
        // mlp/joint.txt: gelu = gelu(addmm); addmm_1 = addmm(primals_4, gelu, t_1); mm_1 = mm(t_3, gelu);
        // gelu_backward = gelu_backward(mm, addmm).
        QVERIFY(reads(g, "gelu", "addmm") && reads(g, "addmm_1", "gelu") && reads(g, "mm_1", "gelu") &&
                reads(g, "gelu_backward", "mm") && reads(g, "gelu_backward", "addmm"));
        auto press = [&](Qt::Key key) {
            QTest::keyClick(view, key, Qt::AltModifier);
            return selectedName(window);
        };

        QVERIFY(window.selectNodeByName(QStringLiteral("gelu")));
        QCOMPARE(press(Qt::Key_Up), QStringLiteral("addmm"));            // gelu's only producer
        QCOMPARE(press(Qt::Key_Down), QStringLiteral("gelu"));           // addmm's first consumer
        QCOMPARE(press(Qt::Key_Right), QStringLiteral("gelu_backward")); // addmm's other consumer
        QCOMPARE(press(Qt::Key_Right), QStringLiteral("gelu"));          // and round again
        QCOMPARE(press(Qt::Key_Down), QStringLiteral("addmm_1"));        // gelu's consumers, in graph order
        QCOMPARE(press(Qt::Key_Right), QStringLiteral("mm_1"));
        QCOMPARE(press(Qt::Key_Left), QStringLiteral("addmm_1"));

        // Up from gelu_backward: its first argument; the sibling is its other producer.
        QVERIFY(window.selectNodeByName(QStringLiteral("gelu_backward")));
        QCOMPARE(press(Qt::Key_Up), QStringLiteral("mm"));
        QCOMPARE(press(Qt::Key_Right), QStringLiteral("addmm"));

        // A placeholder has no producer: the walk stays.
        QVERIFY(window.selectNodeByName(QStringLiteral("primals_5")));
        QCOMPARE(press(Qt::Key_Up), QStringLiteral("primals_5"));
    }

    void nodeContextMenu() {
        MainWindow window(false);
        showActive(window);
        openAndWait(window, mlpPath());
        views::GraphView* view = canvasOf(window);
        const NodeId gelu = nodeNamed(window, "gelu");
        QVERIFY(gelu != kNoNode);
        QVERIFY(window.selectNodeByName(QStringLiteral("addmm")));
        view->centreOnNode(gelu);
        const QPoint pos = view->mapFromScene(window.scene()->nodeItem(gelu)->sceneBoundingRect().center());

        QStringList entries;
        QStringList producers;
        QStringList consumers;
        ModalWatcher watcher;
        watcher.onMenu = [&](QMenu* menu) {
            for (QAction* action : menu->actions()) {
                if (action->isSeparator())
                    continue;
                entries << action->text().remove(QLatin1Char('&'));
                if (!action->menu())
                    continue;
                QStringList& list =
                    action->text().contains(QStringLiteral("Producers")) ? producers : consumers;
                for (QAction* jump : action->menu()->actions())
                    list << jump->text().section(QLatin1Char(' '), 0, 0);
            }
            // Jump to gelu's second consumer from the menu.
            for (QAction* action : menu->actions())
                if (action->menu() && action->text().contains(QStringLiteral("onsumers")))
                    action->menu()->actions().value(1)->trigger();
        };
        emit view->customContextMenuRequested(pos);
        QCOMPARE(entries, (QStringList{QStringLiteral("Must Save"), QStringLiteral("Must Recompute"),
                                       QStringLiteral("Clear Pin"), QStringLiteral("Producers (1)"),
                                       QStringLiteral("Consumers (2)")}));
        QCOMPARE(producers, QStringList{QStringLiteral("addmm")});
        QCOMPARE(consumers, (QStringList{QStringLiteral("addmm_1"), QStringLiteral("mm_1")}));
        QCOMPARE(selectedName(window), QStringLiteral("mm_1"));

        // Must Save from the menu pins the node clicked on.
        view->centreOnNode(gelu);
        const QPoint again = view->mapFromScene(window.scene()->nodeItem(gelu)->sceneBoundingRect().center());
        watcher.onMenu = [](QMenu* menu) { menu->actions().value(0)->trigger(); };
        emit view->customContextMenuRequested(again);
        QCOMPARE(window.feature<gui::PartitionFeature>()->document()->edits().size(), size_t(1));
        QCOMPARE(window.feature<gui::PartitionFeature>()->document()->edits().at("gelu"), Policy::MustSave);
        window.feature<gui::PartitionFeature>()->document()->waitForIdle();
    }

    // Joint graphs open as the ladder (forward left, backward right); Ctrl+L switches to the layered view and
    // back, and a re-laid ladder puts the recomputed nodes of the decision shown on the backward side.
    void ladderToggle() {
        MainWindow window(false);
        showActive(window);
        openAndWait(window, mlpPath());
        const Graph* graph = window.scene()->graph();
        const std::vector<bool> backward = backwardMask(*graph);
        std::vector<NodeId> forwardIds, backwardIds;
        for (NodeId id = 0; id < graph->size(); ++id)
            if (graph->node(id).op != NodeOp::Output)
                (backward[id] ? backwardIds : forwardIds).push_back(id);
        QAction* ladder = window.canvasFeature()->actions().ladder;
        QVERIFY(ladder->isChecked());
        QVERIFY(columnsApart(window, forwardIds, backwardIds));

        QTest::keyClick(&window, Qt::Key_L, Qt::ControlModifier);
        QVERIFY(!ladder->isChecked());
        QTRY_VERIFY_WITH_TIMEOUT(window.scene()->hasLayout() && !window.layoutBusy(), 60000);
        QVERIFY(!columnsApart(window, forwardIds, backwardIds)); // the layered view interleaves them
        // The session remembers the choice.
        QTemporaryDir dir;
        const QString session = dir.filePath(QStringLiteral("layered.jointscope"));
        QVERIFY(window.saveSession(session));
        {
            MainWindow other(false);
            QVERIFY(other.canvasFeature()->actions().ladder->isChecked());
            QVERIFY(other.openSession(session));
            QTRY_VERIFY_WITH_TIMEOUT(!other.canvasFeature()->actions().ladder->isChecked(), 30000);
            QTRY_VERIFY_WITH_TIMEOUT(other.scene()->hasLayout() && !other.layoutBusy(), 60000);
            other.feature<gui::PartitionFeature>()->document()->waitForIdle();
        }

        QTest::keyClick(&window, Qt::Key_L, Qt::ControlModifier);
        QVERIFY(ladder->isChecked());
        QTRY_VERIFY_WITH_TIMEOUT(window.scene()->hasLayout() && !window.layoutBusy(), 60000);
        const views::PartitionOverlay* overlay = window.scene()->partitionOverlay();
        QVERIFY(overlay && overlay->nodes.size() == graph->size());
        std::vector<NodeId> kept, moved;
        for (NodeId id : forwardIds)
            (overlay->nodes[id].mark == views::PartitionMark::Recomputed ? moved : kept).push_back(id);
        QVERIFY(!moved.empty());
        QVERIFY(columnsApart(window, kept, backwardIds));
        QVERIFY(columnsApart(window, kept, moved));
    }

    // The menus are built from what the features publish: every published action is placed, in its menu.
    void menusHoldThePublishedActions() {
        MainWindow window(false);
        const gui::PartitionFeature::Actions& partition = window.feature<gui::PartitionFeature>()->actions();
        for (QAction* a :
             {partition.mustSave, partition.mustRecompute, partition.clearPin, partition.repartition})
            QCOMPARE(menuHolding(window, a), QStringLiteral("Edit"));
        QCOMPARE(partition.exports.size(), 4);
        for (QAction* a : partition.exports)
            QCOMPARE(menuHolding(window, a), QStringLiteral("File"));
        QCOMPARE(
            menuHolding(window,
                        window.feature<gui::ShardingFeature>()->actions().pinPlacementMenu->menuAction()),
            QStringLiteral("Edit"));
        QCOMPARE(menuHolding(window, window.feature<gui::ShardingFeature>()->actions().overlay),
                 QStringLiteral("View"));
        for (QDockWidget* dock :
             {window.feature<gui::PartitionFeature>()->dock(), window.feature<gui::ShardingFeature>()->dock(),
              window.feature<gui::RuntimeFeature>()->dock(), window.canvasFeature()->searchResultsDock()})
            QCOMPARE(menuHolding(window, dock->toggleViewAction()), QStringLiteral("View"));
        const gui::CanvasFeature::Actions& canvas = window.canvasFeature()->actions();
        for (QAction* a :
             {canvas.fit, canvas.find, canvas.up, canvas.collapse, canvas.ladder, canvas.minimap})
            QCOMPARE(menuHolding(window, a), QStringLiteral("View"));
        QCOMPARE(canvas.walk.size(), 4);
        for (QAction* a : canvas.walk)
            QCOMPARE(menuHolding(window, a), QStringLiteral("Navigate"));
        QCOMPARE(menuHolding(window, canvas.jumpMenu->menuAction()), QStringLiteral("Navigate"));
        QCOMPARE(menuHolding(window, canvas.exportView), QStringLiteral("File"));
        QCOMPARE(menuHolding(window, window.feature<gui::RuntimeFeature>()->actions().validate),
                 QStringLiteral("Tools"));
        QCOMPARE(menuHolding(window, window.feature<gui::RuntimeFeature>()->actions().profile),
                 QStringLiteral("Tools"));
        QStringList titles;
        for (QAction* top : window.menuBar()->actions())
            titles << top->text().remove(QLatin1Char('&'));
        QCOMPARE(titles,
                 (QStringList{QStringLiteral("File"), QStringLiteral("Edit"), QStringLiteral("View"),
                              QStringLiteral("Navigate"), QStringLiteral("Tools"), QStringLiteral("Help")}));
    }

    // The Partition, Sharding and Graph Diff docks share a tab group; a new window shows the Partition one.
    void partitionDockShownFirst() {
        MainWindow window(false);
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QDockWidget* partition = window.feature<gui::PartitionFeature>()->dock();
        QDockWidget* sharding = window.feature<gui::ShardingFeature>()->dock();
        QDockWidget* diff = window.feature<gui::DiffFeature>()->dock();
        QCOMPARE(window.tabifiedDockWidgets(partition), (QList<QDockWidget*>{sharding, diff}));
        QVERIFY(!partition->visibleRegion().isEmpty());
        QVERIFY(sharding->visibleRegion().isEmpty());
        QVERIFY(diff->visibleRegion().isEmpty());
    }

    // A graph picked in the Graphs dock is parsed on a worker: the pick returns at once, the graph shown
    // stays until the new one is parsed, then the features take the new one.
    void graphsDockParsesOffTheUiThread() {
        MainWindow window(false);
        window.show();
        openAndWait(window, q(sourcePath("tests/data/logs/aot_graphs_colored.log")));
        auto* dock = window.findChild<QDockWidget*>(QStringLiteral("graphsDock"));
        QVERIFY(dock);
        auto* list = qobject_cast<QTreeView*>(dock->widget());
        QVERIFY(list);
        auto* model = list->model();
        // The first graph is shown; pick another entry.
        QModelIndex other;
        std::function<void(const QModelIndex&)> visit = [&](const QModelIndex& parent) {
            for (int r = 0; r < model->rowCount(parent) && !other.isValid(); ++r) {
                const QModelIndex index = model->index(r, 0, parent);
                const QVariant entry = index.data(views::GraphListModel::EntryIndexRole);
                if (entry.isValid() &&
                    entry.toUInt() != uint(window.feature<gui::PartitionFeature>()->document()->graphIndex()))
                    other = index;
                visit(index);
            }
        };
        visit({});
        QVERIFY2(other.isValid(), "the log lists more than one graph");
        const uint picked = other.data(views::GraphListModel::EntryIndexRole).toUInt();
        const Graph* before = window.scene()->graph();
        QVERIFY(before);
        emit list->activated(other);
        QVERIFY(window.layoutBusy());              // the parse runs
        QCOMPARE(window.scene()->graph(), before); // and has not replaced the graph on this thread
        QTRY_COMPARE_WITH_TIMEOUT(window.feature<gui::PartitionFeature>()->document()->graphIndex(),
                                  int(picked), 30000);
        QTRY_VERIFY_WITH_TIMEOUT(
            window.scene()->graph() != before && window.scene()->hasLayout() && !window.layoutBusy(), 30000);
        QCOMPARE(window.scene()->graph(), window.feature<gui::PartitionFeature>()->document()->graph());
        window.feature<gui::PartitionFeature>()->document()->waitForIdle();
    }

    // The Nodes dock sits below the Graphs dock and follows the canvas: a node selected on the canvas is the
    // table's current row, and a row picked in the table selects its node on the canvas.
    void nodesDockFollowsTheCanvas() {
        MainWindow window(false);
        showLogOnScreen(window);
        auto* graphs = window.findChild<QDockWidget*>(QStringLiteral("graphsDock"));
        auto* nodes = window.findChild<QDockWidget*>(QStringLiteral("nodesDock"));
        QVERIFY(graphs && nodes && graphs->isVisible() && nodes->isVisible());
        QCOMPARE(window.dockWidgetArea(graphs), Qt::LeftDockWidgetArea);
        QCOMPARE(window.dockWidgetArea(nodes), Qt::LeftDockWidgetArea);
        QVERIFY(graphs->geometry().bottom() < nodes->geometry().top());
        auto* table = nodes->findChild<QTableView*>();
        QVERIFY(table);
        const Graph* graph = window.scene()->graph();
        QVERIFY(graph && graph->size() > 4);
        const auto currentName = [&] {
            return table->currentIndex().siblingAtColumn(0).data().toString().toStdString();
        };
        const std::string third = graph->node(3).name;
        QVERIFY(window.selectNodeByName(QString::fromStdString(third)));
        QCOMPARE(currentName(), third);
        // A row picked in the table: the row of the graph's second node, wherever sorting put it.
        const std::string second = graph->node(1).name;
        QModelIndex row;
        for (int r = 0; r < table->model()->rowCount() && !row.isValid(); ++r)
            if (table->model()->index(r, 0).data().toString().toStdString() == second)
                row = table->model()->index(r, 0);
        QVERIFY(row.isValid());
        table->setCurrentIndex(row);
        QCOMPARE(window.scene()->selectedNode(), NodeId(1));
        QCOMPARE(currentName(), second);
    }

    // The title names the file of the graph shown, not a file whose graph failed to read.
    void titleKeepsTheGraphShown() {
        MainWindow window(false);
        window.show();
        openAndWait(window, q(sharedPath("graphs/torch-1.13/mlp/joint.txt")));
        QCOMPARE(window.windowTitle(), QStringLiteral("joint.txt — jointscope"));
        const QString broken = dir_.filePath(QStringLiteral("broken.txt"));
        QFile file(broken);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("class GraphModule(torch.nn.Module):\n    def forward(self, x):\n"
                   "        y = torch.ops.aten.relu.default(nowhere)\n        return (y,)\n");
        file.close();
        bool loaded = true;
        QVERIFY(window.openFile(broken));
        window.whenDocumentLoaded([&](bool ok) { loaded = ok; });
        QTRY_VERIFY_WITH_TIMEOUT(!window.loading(), 30000);
        QVERIFY(!loaded);
        QCOMPARE(window.windowTitle(), QStringLiteral("joint.txt — jointscope"));
        window.feature<gui::PartitionFeature>()->document()->waitForIdle();
    }

    // One click on a row of the Graphs dock shows that graph (no double click needed).
    void graphsDockPicksOnOneClick() {
        MainWindow window(false);
        showLogOnScreen(window);
        auto* dock = window.findChild<QDockWidget*>(QStringLiteral("graphsDock"));
        QVERIFY(dock && dock->isVisible());
        auto* list = qobject_cast<QTreeView*>(dock->widget());
        QVERIFY(list);
        QModelIndex other;
        std::function<void(const QModelIndex&)> visit = [&](const QModelIndex& parent) {
            for (int r = 0; r < list->model()->rowCount(parent) && !other.isValid(); ++r) {
                const QModelIndex index = list->model()->index(r, 0, parent);
                const QVariant entry = index.data(views::GraphListModel::EntryIndexRole);
                if (entry.isValid() &&
                    entry.toUInt() != uint(window.feature<gui::PartitionFeature>()->document()->graphIndex()))
                    other = index;
                visit(index);
            }
        };
        visit({});
        QVERIFY(other.isValid());
        const uint picked = other.data(views::GraphListModel::EntryIndexRole).toUInt();
        list->scrollTo(other);
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualRect(other).center());
        QTRY_COMPARE_WITH_TIMEOUT(window.feature<gui::PartitionFeature>()->document()->graphIndex(),
                                  int(picked), 30000);
        QTRY_VERIFY_WITH_TIMEOUT(!window.layoutBusy(), 30000);
        window.feature<gui::PartitionFeature>()->document()->waitForIdle();
    }

    // A saved session carries the sharding's mesh and pins; opening it restores them and solves again.
    void shardingInSessions() {
#ifdef JOINTSCOPE_HAVE_CBC
        ModalWatcher watcher;
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("sharded.jointscope"));
        {
            MainWindow first(true);
            first.show();
            openAndWait(first, mlpPath());
            QVERIFY(first.feature<gui::ShardingFeature>()->solve(
                QStringLiteral("2x2"), QStringLiteral("dp,tp"), QStringLiteral("a100")));
            QTRY_VERIFY_WITH_TIMEOUT(first.feature<gui::ShardingFeature>()->document()->result(), 60000);
            first.feature<gui::ShardingFeature>()->document()->pin("primals_5",
                                                                   *sharding::parsePlacements("S(0)S(0)"));
            QTRY_VERIFY_WITH_TIMEOUT(
                !first.feature<gui::ShardingFeature>()->document()->busy() &&
                    first.feature<gui::ShardingFeature>()->document()->result()->pins.count("primals_5"),
                60000);
            QVERIFY(first.saveSession(path));
            first.close();
        }
        MainWindow second(true);
        second.show();
        QVERIFY(second.openSession(path));
        QTRY_COMPARE_WITH_TIMEOUT(second.feature<gui::ShardingFeature>()->document()->pins().size(),
                                  size_t(1), 60000);
        QCOMPARE(
            sharding::toString(second.feature<gui::ShardingFeature>()->document()->pins().at("primals_5")),
            std::string("S(0)S(0)"));
        QCOMPARE(second.feature<gui::ShardingFeature>()->document()->mesh().topology, std::string("a100"));
        QCOMPARE(second.feature<gui::ShardingFeature>()->document()->mesh().names,
                 (std::vector<std::string>{"dp", "tp"}));
        QTRY_VERIFY_WITH_TIMEOUT(second.feature<gui::ShardingFeature>()->document()->result(), 60000);
        QVERIFY(second.feature<gui::ShardingFeature>()->document()->result()->pins.count("primals_5"));
        QVERIFY(watcher.boxes.isEmpty());
        second.feature<gui::ShardingFeature>()->document()->waitForIdle();
        second.close();
#endif
    }

    void restoreAfterUncleanExit() {
        ModalWatcher watcher;
        const QDir autosaves(QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
                                 .filePath(QStringLiteral("autosave")));
        auto sessions = [&] {
            return autosaves.entryList({QStringLiteral("session-*.jointscope")}, QDir::Files);
        };
        // A run that pins a node and then dies: its autosave stays, its lock goes with it.
        auto first = std::make_unique<MainWindow>(true);
        first->show();
        openAndWait(*first, mlpPath());
        QTRY_VERIFY(sessions().size() == 1); // the restore question (nothing to offer) is settled, then saved
        first->feature<gui::PartitionFeature>()->document()->setPolicy("gelu", Policy::MustRecompute);
        first->feature<gui::PartitionFeature>()->document()->setPolicy("t_1", Policy::MustSave);
        first->feature<gui::PartitionFeature>()->document()->waitForIdle();
        const QString autosave = autosaves.filePath(sessions().front());
        first.reset(); // no closeEvent: what a crash leaves behind
        QVERIFY(QFileInfo::exists(autosave));
        QVERIFY(watcher.boxes.isEmpty());

        // The next start offers the autosave; Yes opens the graph with both pins.
        {
            MainWindow second(true);
            second.show();
            QTRY_COMPARE(watcher.boxes.size(), 1);
            QVERIFY(watcher.boxes[0].contains(QStringLiteral("closed without saving")));
            // The question names the graph, its pins and when (issue 29: it named none).
            QVERIFY2(watcher.boxes[0].contains(QStringLiteral("joint.txt (2 pins)")),
                     qPrintable(watcher.boxes[0]));
            QVERIFY(watcher.boxes[0].contains(
                QLocale().toString(QFileInfo(autosave).lastModified(), QLocale::ShortFormat)));
            QTRY_VERIFY_WITH_TIMEOUT(second.scene()->graph() && second.scene()->hasLayout(), 60000);
            // The session applies once the graph is read (on a worker): wait for its pins, then the solve.
            QTRY_COMPARE_WITH_TIMEOUT(second.feature<gui::PartitionFeature>()->document()->edits().size(),
                                      size_t(2), 60000);
            QTRY_VERIFY_WITH_TIMEOUT(!second.feature<gui::PartitionFeature>()->document()->busy(), 60000);
            const gui::PolicyEdits edits = second.feature<gui::PartitionFeature>()->document()->edits();
            QCOMPARE(edits.size(), size_t(2));
            QCOMPARE(edits.at("gelu"), Policy::MustRecompute);
            QCOMPARE(edits.at("t_1"), Policy::MustSave);
            QCOMPARE(QFileInfo(second.feature<gui::PartitionFeature>()->document()->graphPath())
                         .canonicalFilePath(),
                     QFileInfo(mlpPath()).canonicalFilePath());
            QVERIFY(second.feature<gui::PartitionFeature>()->document()->result());
            // The restored pins can be undone, as one step.
            QVERIFY(second.feature<gui::PartitionFeature>()->document()->undoStack()->canUndo());
            QTRY_VERIFY(!QFileInfo::exists(autosave)); // restored: it is the second window's autosave now
            second.close();                            // a clean exit
        }
        QTRY_COMPARE(sessions().size(), 0);

        // After a clean exit nothing is offered.
        MainWindow third(true);
        third.show();
        QTest::qWait(300);
        QCOMPARE(watcher.boxes.size(), 1);
        QVERIFY(!third.scene()->graph());
        third.close();
    }

    // "No" keeps the declined autosave (moved aside, not offered again) and never touches the older ones; a
    // file named on the command line is not replaced by an autosave of another graph.
    void declinedAndStartupFileKeepAutosaves() {
        ModalWatcher watcher;
        const QDir autosaves(QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
                                 .filePath(QStringLiteral("autosave")));
        auto sessions = [&] {
            return autosaves.entryList({QStringLiteral("session-*.jointscope")}, QDir::Files);
        };
        auto crash = [&](const QString& path) {
            auto w = std::make_unique<MainWindow>(true);
            w->setRestoreAnswer(QStringLiteral("no"));
            w->show();
            openAndWait(*w, path);
            QSignalSpy saved(w.get(), &MainWindow::autosaved);
            w->feature<gui::PartitionFeature>()->document()->setPolicy("gelu", Policy::MustRecompute);
            w->feature<gui::PartitionFeature>()->document()->waitForIdle();
            QTRY_VERIFY(saved.count() > 0);
            w.reset(); // no closeEvent: what a crash leaves behind
        };
        crash(mlpPath());
        QCOMPARE(sessions().size(), 1);
        const QString older = autosaves.filePath(sessions().front());
        QTest::qWait(1100); // the newer autosave must be newer by the file clock
        crash(mlpPath());   // answers "no" to the first one: declined, moved aside
        QVERIFY(!QFileInfo::exists(older));
        QVERIFY(
            QFileInfo::exists(autosaves.filePath(QStringLiteral("declined/") + QFileInfo(older).fileName())));
        QCOMPARE(sessions().size(), 1);

        // Started on another file: the autosave of joint.txt is kept, the file opens, nothing is asked.
        {
            MainWindow other(true);
            other.setStartupFile(q(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt")));
            other.show();
            openAndWait(other, q(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt")));
            QTest::qWait(300);
            QVERIFY(watcher.boxes.isEmpty());
            QCOMPARE(sessions().size(), 2); // the kept one and this window's own
            QVERIFY(other.feature<gui::PartitionFeature>()->document()->edits().empty());
            other.close();
        }
        QCOMPARE(sessions().size(), 1);
        for (const QString& name : sessions()) // not offered to the next tests
            QVERIFY(QFile::remove(autosaves.filePath(name)));
    }

    // Two running instances never touch each other's autosave, and a live one is never offered.
    void twoInstancesKeepTheirOwnAutosaves() {
        ModalWatcher watcher;
        const QDir autosaves(QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
                                 .filePath(QStringLiteral("autosave")));
        MainWindow a(true), b(true);
        a.show();
        b.show();
        openAndWait(a, mlpPath());
        openAndWait(b, mlpPath());
        a.feature<gui::PartitionFeature>()->document()->setPolicy("gelu", Policy::MustRecompute);
        b.feature<gui::PartitionFeature>()->document()->setPolicy("t_1", Policy::MustSave);
        QTRY_COMPARE(autosaves.entryList({QStringLiteral("session-*.jointscope")}, QDir::Files).size(), 2);
        QVERIFY(watcher.boxes.isEmpty()); // neither offered the other's live session
        a.close();
        b.close();
    }

    // Export dialogs open where the last export went (issue 29: they forgot the folder), across windows.
    void exportFolderIsRemembered() {
        QTemporaryDir exports;
        const QString document = mlpPath();
        QCOMPARE(gui::exportFolder(document), QFileInfo(document).absolutePath()); // nothing exported yet
        gui::rememberExportFolder(exports.filePath(QStringLiteral("view.svg")));
        QCOMPARE(gui::exportFolder(document), QFileInfo(exports.path()).absoluteFilePath());
        QCOMPARE(gui::exportFolder(QString()), QFileInfo(exports.path()).absoluteFilePath());
        QSettings().remove(QStringLiteral("export/folder"));
    }

    // The Inspector gets a share of the right column it can show a node in (issue 29: two rows tall).
    void inspectorGetsItsShare() {
        MainWindow window(false);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto* inspector = window.findChild<QDockWidget*>(QStringLiteral("inspectorDock"));
        QVERIFY(inspector);
        QTRY_VERIFY2(inspector->height() >= window.height() / 5, // a dozen rows, not two
                     qPrintable(QStringLiteral("%1 of %2").arg(inspector->height()).arg(window.height())));
    }

private:
    QTemporaryDir dir_;
};

QTEST_MAIN(TestMainWindow)
#include "tst_gui_mainwindow.moc"
