#include "HelpMenu.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFile>
#include <QLibraryInfo>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSet>
#include <QSysInfo>
#include <QTextBrowser>
#include <QVBoxLayout>

static void registerDocs() {
    Q_INIT_RESOURCE(resources);
}

namespace jointscope::gui {

namespace {

QString plain(const QString& text) {
    QString out = text;
    return out.remove(QLatin1Char('&'));
}

// A non-modal dialog holding a text browser; one per object name, raised again when already open.
QTextBrowser* textDialog(QMainWindow* window, const QString& name, const QString& title, QSize size) {
    if (auto* open = window->findChild<QDialog*>(name)) {
        open->show();
        open->raise();
        return open->findChild<QTextBrowser*>();
    }
    auto* dialog = new QDialog(window);
    dialog->setObjectName(name);
    dialog->setWindowTitle(title);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->resize(size);
    auto* layout = new QVBoxLayout(dialog);
    auto* browser = new QTextBrowser(dialog);
    browser->setOpenExternalLinks(true);
    layout->addWidget(browser);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
    layout->addWidget(buttons);
    dialog->show();
    return browser;
}

void addShortcutRows(const QMenu* menu, const QString& path, QSet<const QAction*>& seen, QString& rows) {
    for (const QAction* a : menu->actions()) {
        if (a->menu()) {
            addShortcutRows(a->menu(), path + QStringLiteral(" › ") + plain(a->menu()->title()), seen, rows);
            continue;
        }
        if (a->shortcut().isEmpty() || seen.contains(a))
            continue;
        seen.insert(a);
        rows += QStringLiteral("<tr><td>%1</td><td>%2</td><td><b>%3</b></td></tr>")
                    .arg(path.toHtmlEscaped(), plain(a->text()).toHtmlEscaped(),
                         a->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped());
    }
}

} // namespace

QString userGuideMarkdown() {
    registerDocs();
    QFile file(QStringLiteral(":/docs/user-guide.md"));
    if (!file.open(QIODevice::ReadOnly))
        return QObject::tr("# User guide\n\nThe guide is missing from this build (docs/user-guide.md).");
    return QString::fromUtf8(file.readAll());
}

QString shortcutsHtml(const QMainWindow* window) {
    QString rows;
    QSet<const QAction*> seen;
    for (const QAction* top : window->menuBar()->actions())
        if (top->menu())
            addShortcutRows(top->menu(), plain(top->menu()->title()), seen, rows);
    // Actions that work without a menu entry (the canvas's own keys, window-wide shortcuts).
    for (const QAction* a : window->findChildren<QAction*>()) {
        if (a->shortcut().isEmpty() || seen.contains(a) || plain(a->text()).isEmpty())
            continue;
        seen.insert(a);
        rows += QStringLiteral("<tr><td>%1</td><td>%2</td><td><b>%3</b></td></tr>")
                    .arg(QObject::tr("(canvas)"), plain(a->text()).toHtmlEscaped(),
                         a->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped());
    }
    return QStringLiteral("<table cellpadding='3'><tr><th align='left'>%1</th><th align='left'>%2</th>"
                          "<th align='left'>%3</th></tr>%4</table>")
        .arg(QObject::tr("Menu"), QObject::tr("Action"), QObject::tr("Shortcut"), rows);
}

QString buildInfo() {
    QStringList optional;
#ifdef JOINTSCOPE_HAVE_CBC
    optional << QStringLiteral("CBC");
#endif
#ifdef JOINTSCOPE_HAVE_GRAPHVIZ
    optional << QStringLiteral("Graphviz");
#endif
    QStringList lines;
    lines << QStringLiteral("jointscope: %1").arg(QApplication::applicationVersion())
          << QStringLiteral("Qt: %1 (built with %2)")
                 .arg(QString::fromLatin1(qVersion()), QStringLiteral(QT_VERSION_STR))
          << QStringLiteral("OS: %1 (%2)").arg(QSysInfo::prettyProductName(), QSysInfo::buildAbi())
          << QStringLiteral("Platform: %1").arg(QGuiApplication::platformName())
#if defined(__clang__)
          << QStringLiteral("Compiler: clang %1").arg(QStringLiteral(__clang_version__))
#elif defined(__GNUC__)
          << QStringLiteral("Compiler: gcc %1").arg(QStringLiteral(__VERSION__))
#endif
#ifdef NDEBUG
          << QStringLiteral("Build: release")
#else
          << QStringLiteral("Build: debug")
#endif
          << QStringLiteral("Components: %1")
                 .arg(optional.isEmpty() ? QStringLiteral("none") : optional.join(QStringLiteral(", ")));
    return lines.join(QLatin1Char('\n'));
}

void populateHelpMenu(QMenu* help, QMainWindow* window) {
    QAction* guide = help->addAction(QObject::tr("&User Guide"), window, [window] {
        QTextBrowser* browser = textDialog(window, QStringLiteral("userGuideDialog"),
                                           QObject::tr("jointscope user guide"), QSize(900, 700));
        browser->setMarkdown(userGuideMarkdown());
    });
    guide->setShortcut(QKeySequence::HelpContents);
    help->addAction(QObject::tr("&Keyboard Shortcuts"), window, [window] {
        QTextBrowser* browser = textDialog(window, QStringLiteral("shortcutsDialog"),
                                           QObject::tr("Keyboard shortcuts"), QSize(560, 600));
        browser->setHtml(shortcutsHtml(window));
    });
    help->addAction(QObject::tr("&Report a Problem…"), window, [window] {
        const QString info = buildInfo();
        QApplication::clipboard()->setText(info);
        auto* box = new QMessageBox(QMessageBox::Information, QObject::tr("Report a problem"),
                                    QObject::tr("The version and build facts below are on the clipboard: "
                                                "paste them into the report, with the file you opened "
                                                "and what you did."),
                                    QMessageBox::Ok, window);
        box->setObjectName(QStringLiteral("reportProblemBox"));
        box->setDetailedText(info);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->show();
    });
    help->addSeparator();
    help->addAction(QObject::tr("&About jointscope"), window, [window] {
        QMessageBox::about(
            window, QObject::tr("About jointscope"),
            QObject::tr(
                "<b>jointscope %1</b><p>Graph inspector and partition debugger for torch.compile joint "
                "graphs.</p>"
                "<p>Colours: <span style='color:#2563eb'>forward</span>, <span "
                "style='color:#ea580c'>backward</span> "
                "(tangent closure), <span style='color:#059669'>primals</span>, <span "
                "style='color:#7c3aed'>tangents</span>, "
                "<span style='color:#b45309'>parameters</span>, <span "
                "style='color:#be185d'>HOP bodies</span> "
                "(double-click to open).</p>")
                .arg(QApplication::applicationVersion()));
    });
}

} // namespace jointscope::gui
